"""``--nl2sql-save-predictions FILE``: record the SQL a run's engine produced, to replay it.

The controller collects the records and, at the end of the run, writes a predictions file in
the JSONL format of docs/predictions.md, atomically, sorted by case and role: one line per item
whose answer carried SQL (``id``, ``role``, ``sql``, ``cost_usd``, ``latency_s``, and
``datasource`` when the answer used another one than the case's first). For a case where some
role got no SQL back (a refusal names none), one more line without ``role`` carries the case's
first SQL, so replaying it as that role gives the same verdict (the role's policy refuses it
again). Items without any SQL (not answerable, clarify, errors) are not written: the format
holds SQL only, so on replay they fail with ``no prediction for case ID``. With
``--nl2sql-repeat``, the first attempt's SQL is written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

__all__ = ["PredictionsOut", "prediction_lines"]


def _first_sql(record: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    attempts = record.get("attempts")
    if attempts:
        first = attempts[0]
        return first.get("sql"), {"cost_usd": first.get("cost_usd") or 0.0, "latency_s": first.get("latency_s") or 0.0}
    return record.get("sql"), {"cost_usd": record.get("cost_usd") or 0.0, "latency_s": record.get("latency_s") or 0.0}


def prediction_lines(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The predictions of ``records`` (see the module doc) and how many items had no SQL."""
    out: list[dict[str, Any]] = []
    by_case: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for record in sorted(records, key=lambda r: (r.get("suite", ""), r["case_id"], r["role"])):
        if record.get("verdict") == "skipped":
            continue
        by_case.setdefault((record.get("suite", ""), record["case_id"]), []).append(record)
    missing = 0
    for (_, case_id), group in by_case.items():
        fallback = None
        lacking = False
        for record in group:
            sql, extra = _first_sql(record)
            if not sql:
                lacking = True
                continue
            line: dict[str, Any] = {"id": case_id, "role": record["role"], "sql": sql, **extra}
            used, named = record.get("answer_datasources") or [], record.get("datasources") or []
            if used and (not named or used[0] != named[0]):
                line["datasource"] = used[0]
            out.append(line)
            fallback = fallback or {k: v for k, v in line.items() if k not in ("role", "cost_usd", "latency_s")}
        if lacking:
            if fallback is not None:
                out.append(fallback)
            else:
                missing += sum(1 for r in group if not _first_sql(r)[0])
    return out, missing


class PredictionsOut:
    """The plugin object of ``--nl2sql-save-predictions`` (registered on the controller)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: dict[str, dict[str, Any]] = {}
        self.written: tuple[int, int] | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = getattr(report, "nl2sql", None)
        if record is not None:
            self.records[record["nodeid"]] = record

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.records:
            return
        from pytest_nl2sql.suitefile.lock import write_atomic

        lines, missing = prediction_lines(list(self.records.values()))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, "".join(json.dumps(line, sort_keys=True, ensure_ascii=False) + "\n" for line in lines))
        self.written = (len(lines), missing)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.written is not None:
            n, missing = self.written
            more = f"; {missing} items had no SQL to save (not answerable, clarify, errors)" if missing else ""
            terminalreporter.write_line(f" predictions: {n} written to {self.path}{more}")

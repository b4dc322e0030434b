"""``--nl2sql-save-predictions FILE``: record every answer a run's engine gave, to replay it.

At the end of the run the controller reads the run's records back from its spool
(``reporting.spool``), one at a time, and writes a predictions file in the JSONL format of
docs/predictions.md, atomically, line by line, sorted by case and role: one line per item
that was asked (``id``, ``role``, ``sql``, ``cost_usd``, ``latency_s``, and ``datasource`` when
the answer used another one than the case's first). An answer without SQL -- not answerable,
clarify, a refusal that names none, an engine error -- is written with ``"sql": null`` and its
``status``, ``message`` and ``code``, so replaying the file (``--nl2sql-predictions``) gives
every item the verdict it had. A clarification's conversation (``--nl2sql-clarify``) is written
as the question's prediction with ``follow_up``: the engine's answer after the scripted user's
reply (nested again if it asked again). With ``--nl2sql-repeat``, the first attempt is written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

__all__ = ["PredictionsOut", "predictions"]


def _first(record: dict[str, Any]) -> dict[str, Any]:
    """The first attempt of an item (the record itself without --nl2sql-repeat)."""
    attempts = record.get("attempts")
    return attempts[0] if attempts else record


def _order(record: Mapping[str, Any]) -> tuple[str, str, str]:
    return record.get("suite", ""), record["case_id"], record["role"]


def predictions(records: Iterable[dict[str, Any]], missing: list[int]) -> Iterator[dict[str, Any]]:
    """The prediction of each record, in the order given; ``missing[0]`` counts the items not
    asked (skipped, or stopped by fail fast), which have none."""
    for record in records:
        if record.get("verdict") == "skipped" or record.get("status") is None:
            missing[0] += 1
            continue
        first = _first(record)
        line: dict[str, Any] = {
            "id": record["case_id"], "role": record["role"], "sql": first.get("sql") or None,
            "cost_usd": first.get("cost_usd") or 0.0, "latency_s": first.get("latency_s") or 0.0,
        }
        status = first.get("status") or record.get("status")
        if not line["sql"]:
            # an answer without SQL says what it was, so that replaying it gives the same verdict
            line["status"] = status if status in ("refused", "not_answerable", "needs_clarification") else "error"
            line["message"] = first.get("message") or record.get("message") or (first.get("error") or record.get("error") or "")
            if first.get("code") or record.get("code"):
                line["code"] = first.get("code") or record.get("code")
        nested = follow_up_of(first.get("turns") or record.get("turns") or [])
        if nested is not None and line.get("status") == "needs_clarification":
            line["follow_up"] = nested
        used, named = record.get("answer_datasources") or [], record.get("datasources") or []
        if used and (not named or used[0] != named[0]):
            line["datasource"] = used[0]
        yield line


def follow_up_of(turns: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A conversation's engine answers after the first, as nested ``follow_up`` maps."""
    answers = [t for t in turns if t.get("speaker") == "engine"][1:]
    out: dict[str, Any] | None = None
    for turn in reversed(answers):
        said: dict[str, Any] = {"sql": turn.get("sql") or None}
        if not said["sql"]:
            status = turn.get("status")
            said["status"] = status if status in ("refused", "not_answerable", "needs_clarification") else "error"
            said["message"] = turn.get("text") or ""
            if turn.get("code"):
                said["code"] = turn["code"]
        if out is not None:
            said["follow_up"] = out
        out = said
    return out


class PredictionsOut:
    """The plugin object of ``--nl2sql-save-predictions`` (registered on the controller).

    ``spool`` returns the run's records (a ``RecordSpool``, or a mapping of node id to record):
    nothing is kept here while the run goes; at the end each record is read back once, in
    the file's order (case and role, from the slim views), and its line written."""

    def __init__(self, path: Path, spool: Callable[[], Any]) -> None:
        self.path = path
        self.spool = spool
        self.written: tuple[int, int] | None = None

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        spool = self.spool()
        if not spool:
            return
        from pytest_nl2sql.suitefile.lock import write_atomic_with

        views = spool.views() if hasattr(spool, "views") else list(spool.values())
        order = [v["nodeid"] for v in sorted(views, key=_order)]
        read = spool.get
        missing, count = [0], [0]

        def fill(fh: Any) -> None:
            for line in predictions((read(nodeid) for nodeid in order), missing):
                fh.write(json.dumps(line, sort_keys=True, ensure_ascii=False) + "\n")
                count[0] += 1

        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic_with(self.path, fill)
        self.written = (count[0], missing[0])

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.written is not None:
            n, missing = self.written
            more = f"; {missing} items were not asked (skipped), so not saved" if missing else ""
            terminalreporter.write_line(f" predictions: {n} written to {self.path}{more}")

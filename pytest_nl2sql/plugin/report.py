"""Records, failure reports and the run report (terminal, JSON, GitHub step summary).

Every item leaves one record (a plain dict, so it crosses xdist unchanged); the controller
aggregates them into a ``RunReport``. The JSON report's schema is documented in
docs/report.md (``"schema": "pytest-nl2sql/report", "version": 1``).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_nl2sql import __version__

if TYPE_CHECKING:
    from pytest_nl2sql.engine.protocol import Answer, RouteResult
    from pytest_nl2sql.plugin.collect import CaseItem
    from pytest_nl2sql.scoring.scorers import Score

__all__ = ["RunReport", "failure_text", "make_record", "wilson"]

REPORT_SCHEMA = "pytest-nl2sql/report"
REPORT_VERSION = 1


def wilson(passed: int, total: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score 95% interval for a pass rate."""
    if total == 0:
        return (0.0, 0.0)
    p = passed / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def make_record(
    item: CaseItem,
    mode: str,
    answer: Answer | None,
    route: RouteResult | None,
    scores: Sequence[Score],
    *,
    latency: float = 0.0,
    skipped: str | None = None,
) -> dict[str, Any]:
    case = item.case
    return {
        "nodeid": item.nodeid,
        "suite": item.path.name,
        "case_id": case.id,
        "role": item.role,
        "kind": case.kind.value,
        "expected": item.expected.value,
        "tags": list(case.tags),
        "difficulty": case.difficulty.value if case.difficulty else None,
        "datasources": list(case.datasources),
        "mode": mode,
        "status": answer.status if answer is not None else ("routed" if route is not None else None),
        "scores": {
            s.name: {"passed": s.passed, "value": s.value, "detail": s.detail, "gating": s.gating} for s in scores
        },
        "sql": answer.sql if answer is not None else None,
        "gold_sql": case.sql,
        "rows": len(answer.rows) if answer is not None and answer.rows is not None else None,
        "truncated": bool(answer.truncated) if answer is not None else False,
        "route": {"top": route.top, "shortlist": list(route.shortlist)} if route is not None else None,
        "cost_usd": answer.cost_usd if answer is not None else 0.0,
        "latency_s": round(latency, 6),
        "error": (answer.error if answer is not None else None),
        "skipped": skipped,
    }


def _fmt_rows(rows: Iterable[Sequence[Any]]) -> list[str]:
    return ["    " + ", ".join(repr(v) for v in r) for r in rows]


def failure_text(item: CaseItem, mode: str, answer: Answer | None, route: RouteResult | None, scores: Sequence[Score]) -> str:
    """What a failing item shows: question, role, outcomes, SQL, and a row diff."""
    case = item.case
    loc = f"{case.location}" if case.location else str(item.path)
    lines = [
        f"{loc}: case '{case.id}' as {item.role} ({mode} mode)",
        f"  question: {case.question}",
        f"  expected: {item.expected.value}",
    ]
    if answer is not None:
        actual = answer.status + (f" ({answer.code})" if answer.code else "")
        lines.append(f"  actual:   {actual}" + (f" -- {answer.message}" if answer.message and answer.status != "ok" else ""))
    if route is not None:
        lines.append(f"  routing:  ranked {[n for n, _ in route.ranked[:3]]}, shortlist {list(route.shortlist)}")
    for s in scores:
        if s.passed is False:
            lines.append(f"  FAILED {s.name}: {s.detail}")
        else:
            lines.append(f"  {'ok' if s.passed else 'info'} {s.name}" + (f": {s.detail}" if s.detail else ""))
    if case.sql:
        lines.append("  gold SQL:")
        lines.extend("    " + ln for ln in case.sql.rstrip().splitlines())
    if answer is not None and answer.sql:
        lines.append("  generated SQL:")
        lines.extend("    " + ln for ln in answer.sql.rstrip().splitlines())
    for s in scores:
        if s.name == "result_match" and s.passed is False and (s.data.get("missing") or s.data.get("unexpected")):
            if s.data.get("missing"):
                lines.append(f"  missing rows (first {min(10, len(s.data['missing']))}):")
                lines.extend(_fmt_rows(s.data["missing"][:10]))
            if s.data.get("unexpected"):
                lines.append(f"  unexpected rows (first {min(10, len(s.data['unexpected']))}):")
                lines.extend(_fmt_rows(s.data["unexpected"][:10]))
    if answer is not None and answer.error:
        lines.append(f"  engine error: {answer.error}")
    return "\n".join(lines)


def _passed(record: dict[str, Any]) -> bool:
    return record.get("verdict") in ("passed", "xfail-fixed")


class RunReport:
    """The aggregate of a run's records."""

    def __init__(self, records: Sequence[dict[str, Any]], meta: dict[str, Any]) -> None:
        self.records = sorted(records, key=lambda r: r["nodeid"])
        self.meta = meta

    def _group(self, key: str, records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        groups: dict[str, list[bool]] = defaultdict(list)
        for r in records:
            values = r.get(key)
            if values is None:
                continue
            for v in values if isinstance(values, list) else [values]:
                groups[str(v)].append(_passed(r))
        return {k: self._stat(v) for k, v in sorted(groups.items())}

    @staticmethod
    def _stat(flags: Sequence[bool]) -> dict[str, Any]:
        n, p = len(flags), sum(flags)
        lo, hi = wilson(p, n)
        return {"passed": p, "total": n, "accuracy": (p / n) if n else None, "ci95": [round(lo, 4), round(hi, 4)]}

    def summary(self) -> dict[str, Any]:
        ran = [r for r in self.records if r.get("verdict") not in ("skipped",)]
        answer = [r for r in ran if r["kind"] == "answer"]
        out: dict[str, Any] = {
            "items": len(self.records),
            "ran": len(ran),
            "skipped": sum(1 for r in self.records if r.get("verdict") == "skipped"),
            "passed": sum(1 for r in ran if _passed(r)),
            "failed": sum(1 for r in ran if r.get("verdict") == "failed"),
            "xfailed": sum(1 for r in ran if r.get("verdict") == "xfailed"),
            "accuracy": self._stat([_passed(r) for r in answer]),
        }
        em = [r["scores"]["result_match"]["passed"] for r in answer if "result_match" in r["scores"]]
        out["execution_accuracy"] = self._stat([bool(x) for x in em])
        routing = [r["scores"]["routing"]["passed"] for r in ran if "routing" in r["scores"]]
        out["routing_accuracy"] = self._stat([bool(x) for x in routing])
        recalls = [r["scores"]["retrieval_recall"]["value"] for r in ran if "retrieval_recall" in r["scores"]]
        out["retrieval_recall_mean"] = round(sum(recalls) / len(recalls), 4) if recalls else None
        out["by_tag"] = self._group("tags", answer)
        out["by_difficulty"] = self._group("difficulty", answer)
        out["by_role"] = self._group("role", answer)
        out["by_datasource"] = self._group("datasources", answer)
        out["by_outcome"] = self._group("expected", answer)
        out["cost_usd"] = round(sum(r.get("cost_usd") or 0.0 for r in self.records), 6)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": REPORT_SCHEMA,
            "version": REPORT_VERSION,
            "run": self.meta,
            "summary": self.summary(),
            "items": self.records,
        }

    def write_json(self, path: Path) -> None:
        from pytest_nl2sql.suitefile.lock import write_atomic

        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(self.to_json(), indent=2, sort_keys=True, default=str) + "\n")

    # -- text --------------------------------------------------------------------------
    @staticmethod
    def _line(name: str, stat: dict[str, Any]) -> str:
        if not stat["total"]:
            return f"  {name:<28} -"
        lo, hi = stat["ci95"]
        return f"  {name:<28} {stat['accuracy']:6.1%}  ({stat['passed']}/{stat['total']}, 95% CI {lo:.1%}-{hi:.1%})"

    def lines(self) -> list[str]:
        s = self.summary()
        meta = self.meta
        out = [
            f"mode {meta.get('mode')}; {s['items']} items, {s['passed']} passed, {s['failed']} failed, "
            f"{s['xfailed']} known failures (baseline), {s['skipped']} skipped; cost ${s['cost_usd']:.4f}",
        ]
        if s["accuracy"]["total"]:
            out.append(self._line("accuracy (answer cases)", s["accuracy"]))
        if s["execution_accuracy"]["total"]:
            out.append(self._line("execution accuracy", s["execution_accuracy"]))
        if s["routing_accuracy"]["total"]:
            out.append(self._line("routing accuracy", s["routing_accuracy"]))
        if s["retrieval_recall_mean"] is not None:
            out.append(f"  {'mean retrieval recall':<28} {s['retrieval_recall_mean']:.3f}")
        for title, key in (
            ("per tag", "by_tag"),
            ("per difficulty", "by_difficulty"),
            ("per role", "by_role"),
            ("per datasource", "by_datasource"),
            ("per outcome", "by_outcome"),
        ):
            if s[key]:
                out.append(f" {title}:")
                out.extend(self._line(k, v) for k, v in s[key].items())
        for label in ("fixed",):
            items = meta.get(label) or []
            if items:
                out.append(f" {label}: {', '.join(items)}")
        return out

    def markdown(self) -> str:
        s = self.summary()
        rows = ["| | accuracy | passed/total | 95% CI |", "|---|---|---|---|"]

        def row(name: str, st: dict[str, Any]) -> None:
            if st["total"]:
                rows.append(f"| {name} | {st['accuracy']:.1%} | {st['passed']}/{st['total']} | {st['ci95'][0]:.1%}-{st['ci95'][1]:.1%} |")

        row("**accuracy**", s["accuracy"])
        row("execution accuracy", s["execution_accuracy"])
        row("routing accuracy", s["routing_accuracy"])
        for key in ("by_tag", "by_difficulty", "by_role", "by_datasource", "by_outcome"):
            for k, v in s[key].items():
                row(f"{key[3:]}: {k}", v)
        head = f"### pytest-nl2sql ({self.meta.get('mode')} mode)\n\n{s['passed']} passed, {s['failed']} failed, {s['xfailed']} known failures, cost ${s['cost_usd']:.4f}\n\n"
        return head + "\n".join(rows) + "\n"

    def append_github_summary(self) -> None:
        target = os.environ.get("GITHUB_STEP_SUMMARY")
        if target:
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(self.markdown())


def run_meta(settings: Any, suites: Iterable[Path], started: float, workers: int, fixed: list[str], crashed: list[str]) -> dict[str, Any]:
    return {
        "plugin_version": __version__,
        "mode": settings.mode,
        "suites": sorted(Path(p).name for p in suites),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "duration_s": round(time.time() - started, 3),
        "workers": workers,
        "max_cost_usd": settings.max_cost,
        "fixed": sorted(fixed),
        "crashed": sorted(crashed),
    }

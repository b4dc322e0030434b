"""Repeats: ``--nl2sql-repeat K`` asks every item K times; one run of a model is one sample.

Each attempt is asked (and cached) on its own and scored on its own. The item passes only
when all K attempts pass (pass^k); it is **flaky** when some pass and some fail. Its record
keeps every attempt (``attempts``) and shows the first failing attempt (else the first) in its
main fields, so the failure report is that attempt's. The summary gains ``pass_at_k`` (the
share of items with at least one passing attempt), ``pass_hat_k`` (all K passed), both as
stats with Wilson intervals, and ``flaky`` (the flaky items' node ids).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_nl2sql.reporting.intervals import wilson

__all__ = ["Judged", "combine", "summary_figures", "summary_lines"]


class Judged:
    """One scored attempt: its record (``make_record``'s) and its failure text, if it failed."""

    def __init__(self, record: dict[str, Any], failure: str | None, attempt: int) -> None:
        self.record = record
        self.failure = failure
        self.attempt = attempt

    @property
    def passed(self) -> bool:
        return self.failure is None


def _attempt_summary(judged: Judged) -> dict[str, Any]:
    r = judged.record
    return {
        "attempt": judged.attempt,
        "passed": judged.passed,
        "status": r.get("status"),
        "failed_scores": [n for n, s in r.get("scores", {}).items() if s.get("passed") is False and s.get("gating")],
        "sql": r.get("sql"),
        "cost_usd": r.get("cost_usd", 0.0),
        "latency_s": r.get("latency_s", 0.0),
        "llm": r.get("llm"),
        "error": r.get("error"),
        "message": r.get("message"),
        "code": r.get("code"),
        **({"turns": r["turns"]} if r.get("turns") else {}),
    }


def combine(judged: Sequence[Judged], repeat: int) -> tuple[dict[str, Any], str | None]:
    """The item's record and failure text from its scored attempts (see the module doc)."""
    if repeat <= 1 and len(judged) == 1:
        return judged[0].record, judged[0].failure
    shown = next((j for j in judged if not j.passed), judged[0])
    record = dict(shown.record)
    passes = sum(j.passed for j in judged)
    record["attempts"] = [_attempt_summary(j) for j in judged]
    record["flaky"] = 0 < passes < len(judged)
    record["cost_usd"] = round(sum(float(j.record.get("cost_usd") or 0.0) for j in judged), 9)
    record["latency_s"] = round(sum(float(j.record.get("latency_s") or 0.0) for j in judged), 6)
    usage: dict[str, Any] = {}
    for j in judged:
        for key, value in (j.record.get("llm") or {}).items():
            usage[key] = usage.get(key, 0) + value
    if usage:
        usage["llm_latency_s"] = round(usage.get("llm_latency_s", 0.0), 6)
        record["llm"] = usage
    failure = None
    if shown.failure is not None:
        flaky = " (flaky)" if record["flaky"] else ""
        failure = f"attempt {shown.attempt + 1} of {len(judged)} failed; {passes} of {len(judged)} passed{flaky}\n{shown.failure}"
    return record, failure


def _passes(record: dict[str, Any]) -> tuple[int, int]:
    attempts = record.get("attempts")
    if attempts:
        return sum(1 for a in attempts if a.get("passed")), len(attempts)
    return (1 if record.get("verdict") in ("passed", "xfail-fixed") else 0), 1


def _stat(passed: int, total: int) -> dict[str, Any]:
    lo, hi = wilson(passed, total)
    return {"passed": passed, "total": total, "accuracy": (passed / total) if total else None, "ci95": [round(lo, 4), round(hi, 4)]}


def summary_figures(records: Sequence[dict[str, Any]], repeat: int) -> dict[str, Any]:
    """``repeat``, ``pass_at_k``, ``pass_hat_k`` (stats over the items that ran) and ``flaky``."""
    ran = [r for r in records if r.get("verdict") != "skipped"]
    counts = [_passes(r) for r in ran]
    return {
        "repeat": repeat,
        "pass_at_k": _stat(sum(1 for p, _ in counts if p > 0), len(ran)),
        "pass_hat_k": _stat(sum(1 for p, n in counts if n and p == n), len(ran)),
        "flaky": sorted(r["nodeid"] for r in ran if r.get("flaky")),
    }


def summary_lines(summary: dict[str, Any], records: Sequence[dict[str, Any]]) -> list[str]:
    """The terminal summary's repeat lines: pass@k and pass^k, then the flaky items apart."""
    k = summary.get("repeat") or 1
    out: list[str] = []
    for name, key in ((f"pass@{k} (any attempt)", "pass_at_k"), (f"pass^{k} (every attempt)", "pass_hat_k")):
        st = summary[key]
        if k > 1 and st["total"]:
            lo, hi = st["ci95"]
            out.append(f"  {name:<28} {st['accuracy']:6.1%}  ({st['passed']}/{st['total']}, 95% CI {lo:.1%}-{hi:.1%})")
    if summary.get("flaky"):
        by_id = {r["nodeid"]: r for r in records}
        shown = []
        for nodeid in summary["flaky"]:
            rec = by_id.get(nodeid, {})
            if rec.get("reruns"):  # pytest-rerunfailures
                shown.append(f"{nodeid} (passed after {rec['reruns']} rerun{'s' if rec['reruns'] != 1 else ''})")
                continue
            p, n = _passes(rec)
            shown.append(f"{nodeid} ({p}/{n})")
        out.append(f" flaky (some attempts passed, some failed): {', '.join(shown)}")
    return out

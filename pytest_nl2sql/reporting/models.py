"""Several models in one run (``--nl2sql-llm NAME``, repeatable; docs/report.md#several-models):
a comparison board per named LLM config and McNemar's exact test between each pair.

Every case x role runs once per config (node id ``case[role-NAME]``, the record's
``llm_config``). ``summary.by_llm`` has, per config, accuracy with its Wilson interval over the
answer items, cost, cost per passed item and latency p50/p95; ``summary.llm_pairs`` pairs the
items of two configs by suite, case and role and gives how many only one of them passed and
the two-sided exact McNemar p-value (a small p: the two models differ on these cases).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from typing import Any

from pytest_nl2sql.reporting import breakdowns
from pytest_nl2sql.reporting.figures import percentile
from pytest_nl2sql.reporting.stats import mcnemar_exact

__all__ = ["html_section", "markdown_rows", "summary_figures", "summary_lines"]


def summary_figures(records: Sequence[Mapping[str, Any]], passed: Callable[[Mapping[str, Any]], bool], mode: str | None = "full") -> dict[str, Any]:
    by: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        if r.get("llm_config"):
            by[str(r["llm_config"])].append(r)
    if not by:
        return {}
    board: dict[str, Any] = {}
    outcome: dict[str, dict[tuple[str, str, str], bool]] = {}
    for name, recs in sorted(by.items()):
        ran = [r for r in recs if r.get("verdict") not in ("skipped", "error")]
        answer = [r for r in ran if r.get("kind") == "answer"]
        ok = sum(1 for r in answer if passed(r))
        cost = sum(float(r.get("cost_usd") or 0.0) for r in recs)
        latencies = [float(r.get("latency_s") or 0.0) for r in ran] if mode == "full" else []  # as the run's own: mode full only
        p50, p95 = percentile(latencies, 50), percentile(latencies, 95)
        board[name] = {
            "accuracy": breakdowns.stat([passed(r) for r in answer]),
            "items": len(recs),
            "skipped": len(recs) - len(ran),
            "cost_usd": round(cost, 6),
            "cost_per_passed_usd": round(cost / ok, 6) if ok else None,
            "latency_p50_s": round(p50, 4) if p50 is not None else None,
            "latency_p95_s": round(p95, 4) if p95 is not None else None,
        }
        outcome[name] = {(str(r.get("suite")), str(r.get("case_id")), str(r.get("role"))): bool(passed(r)) for r in answer}
    pairs = []
    for a, b in combinations(sorted(outcome), 2):
        shared = sorted(set(outcome[a]) & set(outcome[b]))
        a_only = sum(1 for k in shared if outcome[a][k] and not outcome[b][k])
        b_only = sum(1 for k in shared if outcome[b][k] and not outcome[a][k])
        pairs.append({"a": a, "b": b, "shared": len(shared), "a_only": a_only, "b_only": b_only, "mcnemar_p": round(mcnemar_exact(a_only, b_only), 6)})
    return {"by_llm": board, "llm_pairs": pairs}


def _money(v: Any) -> str:
    return "-" if v is None else f"${v:.6f}"


def _secs(v: Any) -> str:
    return "-" if v is None else f"{v:.3f} s"


def summary_lines(s: Mapping[str, Any]) -> list[str]:
    board = s.get("by_llm")
    if not board:
        return []
    out = [" per LLM config (--nl2sql-llm): accuracy, cost per passed item, p95 latency:"]
    for name, b in board.items():
        out.append(f"  {name:<20} {breakdowns.stat_text(b['accuracy'])}; {_money(b['cost_per_passed_usd'])} per passed; p95 {_secs(b['latency_p95_s'])}"
                   + (f"; {b['skipped']} skipped" if b["skipped"] else ""))
    for p in s.get("llm_pairs") or []:
        out.append(f"  {p['a']} vs {p['b']}: {p['a_only']} passed only with {p['a']}, {p['b_only']} only with {p['b']} "
                   f"(of {p['shared']}); exact McNemar p = {p['mcnemar_p']:.4g}")
    return out


def markdown_rows(s: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    return [(f"llm: {name}", b["accuracy"]) for name, b in (s.get("by_llm") or {}).items()]


def html_section(s: Mapping[str, Any], esc: Any) -> str:
    board = s.get("by_llm")
    if not board:
        return ""
    rows = "".join(
        f"<tr><th>{esc(name)}</th><td>{esc(breakdowns.stat_text(b['accuracy']))}</td><td class=\"n\">{esc(_money(b['cost_usd']))}</td>"
        f"<td class=\"n\">{esc(_money(b['cost_per_passed_usd']))}</td><td class=\"n\">{esc(_secs(b['latency_p95_s']))}</td></tr>"
        for name, b in board.items()
    )
    pairs = "".join(
        f"<tr><td>{esc(p['a'])} vs {esc(p['b'])}</td><td class=\"n\">{p['a_only']}</td><td class=\"n\">{p['b_only']}</td>"
        f"<td class=\"n\">{p['shared']}</td><td class=\"n\">{p['mcnemar_p']:.4g}</td></tr>"
        for p in s.get("llm_pairs") or []
    )
    table = (f'<h2>LLM configs</h2><table id="llm-board"><tr><th>config</th><th>accuracy (95% CI)</th><th>cost</th>'
             f"<th>cost per passed item</th><th>p95 latency</th></tr>{rows}</table>")
    if pairs:
        table += ('<table id="llm-pairs"><tr><th>pair</th><th>passed only with the first</th><th>only with the second</th>'
                  f"<th>shared items</th><th>exact McNemar p</th></tr>{pairs}</table>")
    return table

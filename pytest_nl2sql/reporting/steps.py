"""Where tokens and time go inside the engine (docs/report.md#engine-steps).

An engine that reports its steps (``Answer.steps``: router, planner, SQL generation, repair,
...; docs/engine.md#reporting-steps) leaves them in each record. ``summary.steps`` has, per
step name: how many times it ran, its latency p50/p95, its tokens in and out and its cost
(summed over the steps that said so; null when none did), and errors by code; and
``summary.step_errors``: every step error by code, over all steps. The latency percentiles are
mode full's only (null elsewhere, like the run's own latency figures, so two reports of equal
runs are equal); each record keeps its steps' times in every mode.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_nl2sql.reporting.figures import percentile

__all__ = ["html_section", "summary_figures", "summary_lines"]


def _sum(values: list[Any]) -> Any:
    known = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return (round(sum(known), 6) if any(isinstance(v, float) for v in known) else sum(known)) if known else None


def summary_figures(records: Sequence[Mapping[str, Any]], mode: str | None = "full") -> dict[str, Any]:
    """``summary.steps`` and ``summary.step_errors``; the latency percentiles in mode full only
    (elsewhere null, as the run's own latency figures: reports of equal runs stay equal)."""
    # one pass over the steps, one list per figure (a report of 100,000 items has 400,000 steps)
    by_name: dict[str, tuple[list[float], list[Any], list[Any], list[Any], Counter[str]]] = {}
    for r in records:
        if r.get("verdict") == "skipped":
            continue
        for step in r.get("steps") or ():
            if type(step) is not dict or type(step.get("name")) is not str:
                continue
            lists = by_name.get(step["name"])
            if lists is None:
                lists = by_name[step["name"]] = ([], [], [], [], Counter())
            lists[0].append(float(step.get("latency_s") or 0.0))
            lists[1].append(step.get("input_tokens"))
            lists[2].append(step.get("output_tokens"))
            lists[3].append(step.get("cost_usd"))
            if step.get("error_code"):
                lists[4][str(step["error_code"])] += 1
    if not by_name:
        return {}
    out: dict[str, Any] = {}
    errors: Counter[str] = Counter()
    for name, (latencies, tokens_in, tokens_out, costs, codes) in sorted(by_name.items()):
        errors.update(codes)
        p50, p95 = (percentile(latencies, 50), percentile(latencies, 95)) if mode == "full" else (None, None)
        out[name] = {
            "runs": len(latencies),
            "latency_p50_s": round(p50, 6) if p50 is not None else None,
            "latency_p95_s": round(p95, 6) if p95 is not None else None,
            "input_tokens": _sum(tokens_in),
            "output_tokens": _sum(tokens_out),
            "cost_usd": _sum(costs),
            "errors": dict(sorted(codes.items())),
        }
    return {"steps": out, "step_errors": dict(sorted(errors.items()))}


def _n(v: Any) -> str:
    return "-" if v is None else str(v)


def _secs(v: Any) -> str:
    return "-" if v is None else f"{v:.4f}"


def _cost(v: Any) -> str:
    return "-" if v is None else f"{v:.6f}"


def summary_lines(s: Mapping[str, Any]) -> list[str]:
    steps = s.get("steps")
    if not steps:
        return []
    out = [f" engine steps: {'step':<16} {'runs':>6} {'p50 s':>9} {'p95 s':>9} {'tokens in':>10} {'out':>8} {'cost $':>10}  errors"]
    for name, st in steps.items():
        cost = _cost(st["cost_usd"])
        errs = ", ".join(f"{k} {n}" for k, n in st["errors"].items()) or "-"
        out.append(
            f"               {name[:16]:<16} {st['runs']:>6} {_secs(st['latency_p50_s']):>9} {_secs(st['latency_p95_s']):>9} "
            f"{_n(st['input_tokens']):>10} {_n(st['output_tokens']):>8} {cost:>10}  {errs}"
        )
    return out


def html_section(s: Mapping[str, Any], esc: Any) -> str:
    steps = s.get("steps")
    if not steps:
        return ""
    rows = "".join(
        f"<tr><th>{esc(name)}</th><td class=\"n\">{st['runs']}</td><td class=\"n\">{_secs(st['latency_p50_s'])}</td>"
        f"<td class=\"n\">{_secs(st['latency_p95_s'])}</td><td class=\"n\">{esc(_n(st['input_tokens']))}</td>"
        f"<td class=\"n\">{esc(_n(st['output_tokens']))}</td><td class=\"n\">{_cost(st['cost_usd'])}</td>"
        f"<td>{esc(', '.join(f'{k} {n}' for k, n in st['errors'].items()) or '-')}</td></tr>"
        for name, st in steps.items()
    )
    return (
        '<h2>Engine steps</h2><table id="steps"><tr><th>step</th><th>runs</th><th>p50 s</th><th>p95 s</th>'
        f"<th>tokens in</th><th>tokens out</th><th>cost $</th><th>errors by code</th></tr>{rows}</table>"
    )

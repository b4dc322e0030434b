"""The run summary's figures of mode full at scale: the LLM usage (tokens, calls, cache hits,
latency percentiles, cost per passed item) and the items fail fast did not ask. Each reads the
records only, so merged shard reports give the same figures as one run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["NOT_ASKED", "not_asked_figures", "not_asked_lines", "percentile", "usage_figures", "usage_lines"]

#: How the error of an item the run did not ask for starts (fail fast).
NOT_ASKED = "not asked: "


# -- mode full's usage: tokens, calls, cache, latency, cost --------------------------------------------------------------------
def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100) by linear interpolation; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def _latencies(records: Sequence[dict[str, Any]]) -> list[float]:
    out: list[float] = []
    for r in records:
        if r.get("verdict") == "skipped":
            continue
        attempts = r.get("attempts")
        if attempts:
            out.extend(float(a.get("latency_s") or 0.0) for a in attempts)
        else:
            out.append(float(r.get("latency_s") or 0.0))
    return out


def usage_figures(records: Sequence[dict[str, Any]], passed: int, mode: str | None = None) -> dict[str, Any]:
    """Tokens, LLM calls, cache hits and misses, latency p50/p95 (of the items' engine calls,
    mode full only: elsewhere they are null, so reports of equal runs stay equal) and cost per
    passed item."""
    totals = dict.fromkeys(("calls", "failed_connects", "cache_hits", "cache_misses", "input_tokens", "output_tokens"), 0)
    for r in records:
        usage = r.get("llm") or {}
        for key in totals:
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                totals[key] += value
    latencies = _latencies(records) if mode == "full" else []
    cost = sum(float(r.get("cost_usd") or 0.0) for r in records)
    p50, p95 = percentile(latencies, 50), percentile(latencies, 95)
    return {
        "llm_calls": totals["calls"],  # calls that reached the server
        "llm_failed_connects": totals["failed_connects"],  # calls that never did (not billed)
        "cache_hits": totals["cache_hits"],
        "cache_misses": totals["cache_misses"],
        "tokens_in": totals["input_tokens"],
        "tokens_out": totals["output_tokens"],
        "latency_p50_s": round(p50, 4) if p50 is not None else None,
        "latency_p95_s": round(p95, 4) if p95 is not None else None,
        "cost_per_passed_usd": round(cost / passed, 6) if passed else None,
    }


def usage_lines(summary: dict[str, Any]) -> list[str]:
    """The terminal summary's accounting lines (none when nothing was asked or timed)."""
    out = []
    if summary.get("llm_calls") or summary.get("tokens_in") or summary.get("cache_hits"):
        line = f"  LLM: {summary['llm_calls']} calls, {summary['tokens_in']} tokens in, {summary['tokens_out']} out"
        if summary.get("cost_per_passed_usd") is not None:
            line += f", ${summary['cost_per_passed_usd']:.6f} per passed item"
        out.append(line)
    if summary.get("llm_failed_connects"):
        out.append(f"  LLM: {summary['llm_failed_connects']} calls never reached the server (not counted above)")
    after = summary.get("after_stop") or {}
    if after.get("cost_usd"):
        out.append(
            f"  billed after the run stopped: {after['calls']} engine calls answered (in flight or prefetched) "
            f"after the last item, ${after['cost_usd']:.4f}, counted in the cost above"
        )
    if summary.get("cache_hits") or summary.get("cache_misses"):
        out.append(f"  response cache: {summary['cache_hits']} hits, {summary['cache_misses']} misses")
    if summary.get("latency_p50_s") is not None:
        out.append(f"  latency: p50 {summary['latency_p50_s']:.3f} s, p95 {summary['latency_p95_s']:.3f} s")
    return out


# -- fail fast: the items not asked ----------------------------------------------------------
def _not_asked(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if str(r.get("error") or "").startswith(NOT_ASKED)]


def not_asked_figures(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``not_asked``: items the run stopped asking for (fail fast)."""
    return {"not_asked": len(_not_asked(records))}


def not_asked_lines(records: Sequence[dict[str, Any]]) -> list[str]:
    """One line for every item that was not asked, with the reason (once)."""
    skipped = _not_asked(records)
    if not skipped:
        return []
    reason = str(skipped[0].get("error"))[len(NOT_ASKED):]
    return [f" fail fast: {len(skipped)} items not asked: {reason}"]

"""Breakdowns that show only what the run checked.

* ``checked``: the gating scorers that judged at least one item, so a reader knows what a
  rate is made of (in mode retrieval: routing, not refusals).
* ``routing_by_tag`` / ``_by_difficulty`` / ``_by_role`` / ``_by_datasource``: routing accuracy
  over every item with a ``routing`` score -- routing cases included -- in every mode that
  scores routing.
* ``by_outcome`` is computed by the report over the items whose ``outcome`` was checked.
* ``confusion`` and ``leak`` (outcomes.py), ``taxonomy`` (the kinds of ``result_match`` misses
  and how many BIRD's set rule or Spider's rule would have passed).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_nl2sql.reporting.intervals import wilson
from pytest_nl2sql.reporting.outcomes import ACTUAL, confusion, leak_rate
from pytest_nl2sql.reporting.taxonomy import KINDS

__all__ = ["GROUPS", "checked", "group", "stat", "stat_line", "stat_text", "summary_figures", "summary_lines"]

GROUPS = (("tag", "tags"), ("difficulty", "difficulty"), ("role", "role"), ("datasource", "datasources"))


def stat(flags: Sequence[bool]) -> dict[str, Any]:
    n, p = len(flags), sum(flags)
    lo, hi = wilson(p, n)
    return {"passed": p, "total": n, "accuracy": (p / n) if n else None, "ci95": [round(lo, 4), round(hi, 4)]}


def group(records: Sequence[Mapping[str, Any]], key: str, passed: Any) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in records:
        values = r.get(key)
        if values is None:
            continue
        for v in values if isinstance(values, list) else [values]:
            groups[str(v)].append(bool(passed(r)))
    return {k: stat(v) for k, v in sorted(groups.items())}


def checked(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The gating scorers that judged (passed or failed) at least one item that ran."""
    names = {
        n
        for r in records
        if r.get("verdict") != "skipped"
        for n, s in (r.get("scores") or {}).items()
        if s.get("gating") and s.get("passed") is not None
    }
    return sorted(names)


def _taxonomy(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    misses = [r["taxonomy"] for r in records if r.get("taxonomy")]
    kinds = Counter(t["kinds"][0] for t in misses if t.get("kinds"))
    return {
        "misses": len(misses),
        "kinds": {k: kinds[k] for k in KINDS if kinds[k]},
        "bird_set_would_pass": sum(1 for t in misses if t.get("bird_set")),
        "spider_would_pass": sum(1 for t in misses if t.get("spider")),
        **({"spider_not_computed": n} if (n := sum(1 for t in misses if t.get("spider", False) is None)) else {}),
    }


def summary_figures(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    ran = [r for r in records if r.get("verdict") != "skipped"]
    routed = [r for r in ran if "routing" in (r.get("scores") or {}) and r["scores"]["routing"].get("passed") is not None]
    out: dict[str, Any] = {"checked": checked(records)}
    for name, key in GROUPS:
        out[f"routing_by_{name}"] = group(routed, key, lambda r: r["scores"]["routing"]["passed"])
    out["confusion"] = confusion(ran)
    out["leak"] = leak_rate(ran)
    out["taxonomy"] = _taxonomy(ran)
    return out


def stat_line(name: str, st: Mapping[str, Any]) -> str:
    """A summary line: ``  name  rate  (passed/total, 95% CI low-high)``, or ``-`` when empty."""
    if not st["total"]:
        return f"  {name:<28} -"
    lo, hi = st["ci95"]
    return f"  {name:<28} {st['accuracy']:6.1%}  ({st['passed']}/{st['total']}, 95% CI {lo:.1%}-{hi:.1%})"


_line = stat_line


def stat_text(st: Mapping[str, Any]) -> str:
    """A stat inline: ``rate (passed/total, 95% CI low-high)``, or ``-`` when empty."""
    if not st["total"]:
        return "-"
    lo, hi = st["ci95"]
    return f"{st['accuracy']:.1%} ({st['passed']}/{st['total']}, 95% CI {lo:.1%}-{hi:.1%})"


def matrix_lines(matrix: Mapping[str, Mapping[str, int]], indent: str = "   ") -> list[str]:
    cols = [c for c in ACTUAL if any(c in row for row in matrix.values())] or ["answered"]
    corner = "expected \\ got"
    head = f"{indent}{corner:<14}" + "".join(f"{c:>21}" for c in cols)
    return [head] + [f"{indent}{exp:<14}" + "".join(f"{row.get(c, 0):>21}" for c in cols) for exp, row in matrix.items()]


def summary_lines(s: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    if s.get("routing_accuracy", {}).get("total"):
        for name, _ in GROUPS:
            rows = s.get(f"routing_by_{name}") or {}
            if rows:
                out.append(f" routing per {name} (every item routing scored):")
                out.extend(_line(k, v) for k, v in rows.items())
    conf = s.get("confusion") or {}
    if conf.get("all"):
        out.append(" outcomes (expected x what the engine did):")
        out.extend(matrix_lines(conf["all"]))
        for role, matrix in conf.get("by_role", {}).items():
            out.append(f"  role {role}:")
            out.extend(matrix_lines(matrix, "    "))
    leak = s.get("leak") or {}
    if leak.get("should_refuse"):
        out.append(
            f" leak rate (answered, should be refused): {leak['rate']:.1%} ({leak['leaked']}/{leak['should_refuse']}, "
            f"95% upper bound {leak['upper95']:.1%})"
        )
        for role, st in leak.get("by_role", {}).items():
            out.append(f"  {role:<28} {st['rate']:6.1%}  ({st['leaked']}/{st['should_refuse']}, upper bound {st['upper95']:.1%})")
    tax = s.get("taxonomy") or {}
    if tax.get("misses"):
        kinds = ", ".join(f"{k} {n}" for k, n in tax["kinds"].items())
        out.append(
            f" result_match misses: {tax['misses']} ({kinds}); BIRD's set rule would pass {tax['bird_set_would_pass']}, "
            f"Spider's rule {tax['spider_would_pass']}"
            + (f" (not computed for {tax['spider_not_computed']}: too many column candidates)" if tax.get("spider_not_computed") else "")
        )
    return out


def markdown_rows(s: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    rows: list[tuple[str, Mapping[str, Any]]] = []
    for name, _ in GROUPS:
        for k, v in (s.get(f"routing_by_{name}") or {}).items():
            rows.append((f"routing {name}: {k}", v))
    return rows

"""Spider's hardness levels (easy, medium, hard, extra), computed as the Spider evaluation does.

The published rule (Yu et al., 2018; evaluation.py of the Spider and test-suite-sql-eval
repositories) counts three things on the parsed SQL that ``dev.json`` carries in ``sql``:

* component 1: WHERE, GROUP BY, ORDER BY, LIMIT present (one each), each joined table beyond
  the first, each OR and each LIKE in the FROM/WHERE/HAVING conditions;
* component 2: nested queries -- a subquery as a condition's value, INTERSECT, EXCEPT, UNION;
* others: more than one aggregate, more than one selected column, more than one WHERE
  condition, more than one GROUP BY column (one each).

Then: easy when c1 <= 1, others == 0, c2 == 0; medium when (others <= 2, c1 <= 1, c2 == 0) or
(c1 <= 2, others < 2, c2 == 0); hard when (others > 2, c1 <= 2, c2 == 0) or (2 < c1 <= 3,
others <= 2, c2 == 0) or (c1 <= 1, others == 0, c2 <= 1); else extra. The counting of
aggregates follows the published code exactly, quirks included (a condition counts as an
"aggregate" when it is negated, and HAVING's and/or words count too), so the levels equal
Spider's own.
"""

from __future__ import annotations

from typing import Any

__all__ = ["spider_hardness"]

_LIKE = 9  # index of 'like' in Spider's WHERE_OPS


def _units(sql: dict[str, Any]) -> list:
    """The condition units of FROM, WHERE and HAVING (each list alternates unit, and/or)."""
    return sql["from"]["conds"][::2] + sql["where"][::2] + sql["having"][::2]


def _words(sql: dict[str, Any]) -> list:
    return sql["from"]["conds"][1::2] + sql["where"][1::2] + sql["having"][1::2]


def _is_agg(unit: Any) -> bool:
    # Spider's has_agg: the unit's first field differs from 0 ('none')
    return unit[0] != 0


def _component1(sql: dict[str, Any]) -> int:
    n = sum(1 for part in ("where", "groupBy", "orderBy") if sql[part])
    n += sql["limit"] is not None
    n += max(len(sql["from"]["table_units"]) - 1, 0)
    n += sum(1 for word in _words(sql) if word == "or")
    n += sum(1 for unit in _units(sql) if unit[1] == _LIKE)
    return n


def _component2(sql: dict[str, Any]) -> int:
    n = 0
    for unit in _units(sql):
        n += isinstance(unit[3], dict) + isinstance(unit[4], dict)
    return n + sum(sql[op] is not None for op in ("intersect", "except", "union"))


def _others(sql: dict[str, Any]) -> int:
    aggs = sum(_is_agg(u) for u in sql["select"][1])
    aggs += sum(_is_agg(u) for u in sql["where"][::2])
    aggs += sum(_is_agg(u) for u in sql["groupBy"])
    if sql["orderBy"]:
        units = [u[1] for u in sql["orderBy"][1] if u[1]] + [u[2] for u in sql["orderBy"][1] if u[2]]
        aggs += sum(_is_agg(u) for u in units)
    aggs += sum(_is_agg(u) for u in sql["having"])
    return (aggs > 1) + (len(sql["select"][1]) > 1) + (len(sql["where"]) > 1) + (len(sql["groupBy"]) > 1)


def spider_hardness(sql: dict[str, Any]) -> str:
    """'easy', 'medium', 'hard' or 'extra' for one parsed Spider query (``dev.json``'s ``sql``)."""
    c1, c2, others = _component1(sql), _component2(sql), _others(sql)
    if c1 <= 1 and others == 0 and c2 == 0:
        return "easy"
    if (others <= 2 and c1 <= 1 and c2 == 0) or (c1 <= 2 and others < 2 and c2 == 0):
        return "medium"
    if (others > 2 and c1 <= 2 and c2 == 0) or (2 < c1 <= 3 and others <= 2 and c2 == 0) or (c1 <= 1 and others == 0 and c2 <= 1):
        return "hard"
    return "extra"

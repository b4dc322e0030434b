"""Scores and the built-in scorers (registered as the plugin ``nl2sql_scorers``).

* ``outcome`` -- the role got what the case says: an answer (allowed), the validator's
  refusal with the generic message and no rows (refused), ``QUESTION_NOT_ANSWERABLE``
  (unanswerable), a request to narrow the question (clarify).
* ``result_match`` -- allowed items only: the rows equal the case's ``rows`` or one of its
  ``alt_rows`` under the match rule (matching.py). Both sides are put in the comparison form
  first (values.canonical_value), so an engine need not normalize its values. Rows may be
  tuples, lists or mappings; anything else (a bare value, rows of different widths, a match
  setting that is not valid) is a failed score with the reason, never an exception.
* ``routing`` -- the run used exactly the case's datasources; in mode ``retrieval``, routing
  ranked one of them first and shortlisted all of them.
* ``retrieval_recall`` -- the share of the case's ``tables`` and ``columns`` retrieved;
  always reported, gating only below ``--nl2sql-recall-threshold`` (default: off).
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from pytest_nl2sql.engine.protocol import Answer, RouteResult
from pytest_nl2sql.scoring.lenient import lenient_reading
from pytest_nl2sql.scoring.matching import (
    MatchRule,
    RowShapeError,
    answer_rows,
    match_rows,
    rows_to_tuples,
)
from pytest_nl2sql.suitefile.model import EvalCase, Kind, Outcome
from pytest_nl2sql.suitefile.values import json_value

__all__ = ["BuiltinScorers", "Score", "ScoreContext", "result_match"]

NOT_ANSWERABLE_CODE = "QUESTION_NOT_ANSWERABLE"


@attrs.frozen
class Score:
    """One scorer's verdict on one item. ``passed`` None means "reported, not judged"."""

    name: str
    passed: bool | None
    value: float | None = None
    detail: str = ""
    gating: bool = True
    data: dict[str, Any] = attrs.field(factory=dict, eq=False)


@attrs.frozen
class ScoreContext:
    """What a scorer sees: the case, the role, what it expected, and what the engine did."""

    case: EvalCase
    role: str
    expected: Outcome
    mode: str
    answer: Answer | None = None
    route: RouteResult | None = None
    suite_match: dict[str, Any] | None = None
    recall_threshold: float | None = None
    refusal_message: str | None = None
    #: --nl2sql-test-suite: a ``neighbours.Neighbourhood`` (None: execution on the real database only)
    test_suite: Any = None
    #: --nl2sql-clarify, and the item's conversation (``engine.conversation.Conversation``) when
    #: the engine asked and a scripted user replied (scoring/clarification.py)
    clarify: bool = False
    conversation: Any = None


def _outcome(ctx: ScoreContext) -> Score | None:
    a = ctx.answer
    if a is None or ctx.case.kind is Kind.ROUTING:  # a routing case is scored by routing alone
        return None
    exp = ctx.expected
    if exp is Outcome.ALLOWED:
        ok = a.status == "ok"
        detail = "" if ok else f"expected an answer, got {a.status}" + (f": {a.message or a.error}" if (a.message or a.error) else "")
    elif exp is Outcome.REFUSED:
        ok = a.status == "refused" and not a.rows
        if ok and ctx.refusal_message is not None and a.message != ctx.refusal_message:
            ok = False
            detail = f"refused, but not with the generic message: {a.message!r}"
        else:
            detail = "" if ok else f"expected a refusal (status refused, no rows), got {a.status}" + (" with rows" if a.rows else "")
    elif exp is Outcome.UNANSWERABLE:
        ok = a.status == "not_answerable" and (a.code in (None, NOT_ANSWERABLE_CODE))
        detail = "" if ok else f"expected {NOT_ANSWERABLE_CODE}, got {a.status}"
    else:
        ok = a.status == "needs_clarification"
        detail = "" if ok else f"expected a request to clarify (needs_clarification), got {a.status}"
    return Score("outcome", ok, 1.0 if ok else 0.0, detail, data={"expected": exp.value, "actual": a.status})


def _json_row(row: tuple) -> list:
    """A compared row for the JSON record (Decimals, NaN and the like in storage form)."""
    out = []
    for v in row:
        v = json_value(v)
        out.append(None if isinstance(v, float) and v != v else v)
    return out


def _result_match(ctx: ScoreContext) -> Score | None:
    a, case = ctx.answer, ctx.case
    if a is None or ctx.expected is not Outcome.ALLOWED or case.kind is Kind.ROUTING or case.sql is None:
        return None
    if a.status != "ok":
        return Score("result_match", False, 0.0, "no rows to compare (no answer)")
    if case.rows is None:
        return Score("result_match", False, 0.0, "the case has no rows yet: run regenerate (--nl2sql-regenerate)")
    try:
        rule = match_rule(ctx.suite_match, case.match, case.order_matters)
    except (TypeError, ValueError) as exc:
        return Score("result_match", False, 0.0, f"the case's match settings are not valid: {exc}")
    try:
        pred_cols, pred_rows = answer_rows(a.rows, a.columns)
    except RowShapeError as exc:
        return Score("result_match", False, 0.0, f"the answer's rows cannot be compared: {exc}")
    first = None
    try:
        for n, gold in enumerate((case.rows, *case.alt_rows)):
            cols, rows = rows_to_tuples(gold)
            result = match_rows(cols, rows, pred_cols, pred_rows, rule, truncated=a.truncated)
            if result.matched:
                return _test_suite(ctx, rule, case.sql if n == 0 else case.alt_sql[n - 1])
            first = first or result
    except Exception as exc:  # noqa: BLE001 -- a value the model does not know must not crash the item
        return Score("result_match", False, 0.0, f"the rows could not be compared: {type(exc).__name__}: {exc}")
    assert first is not None
    data: dict[str, Any] = {
        "missing": [_json_row(r) for r in first.missing[:10]],
        "unexpected": [_json_row(r) for r in first.unexpected[:10]],
    }
    if first.note:
        data["note"] = first.note
    return Score("result_match", False, 0.0, first.reason, data=data)


result_match = _result_match  # the clarification scorer compares a follow-up answer with it

#: The rule of an item with no ``match:`` settings (neither the suite's nor the case's), by
#: ``order_matters``: a frozen value, built once instead of once per item.
_DEFAULT_RULES = {False: MatchRule(order_matters=False), True: MatchRule(order_matters=True)}


def match_rule(suite_match: Any, case_match: Any, order_matters: Any) -> MatchRule:
    """``MatchRule.build(suite_match, case_match, order_matters=order_matters)``."""
    if not suite_match and not case_match and type(order_matters) is bool:
        return _DEFAULT_RULES[order_matters]
    return MatchRule.build(suite_match, case_match, order_matters=order_matters)


def _test_suite(ctx: ScoreContext, rule: MatchRule, gold_sql: str | None) -> Score:
    """A pass on the real database; with --nl2sql-test-suite, also on every neighbour."""
    hood, a, case = ctx.test_suite, ctx.answer, ctx.case
    if hood is None:
        return Score("result_match", True, 1.0)
    assert a is not None
    if not a.sql or not gold_sql:
        return Score("result_match", True, 1.0, data={"test_suite": {"checked": False, "why": "the engine returned no SQL"}})
    datasource = case.datasources[0] if len(case.datasources) == 1 else None
    if datasource is None:
        why = "the case names more than one datasource"
        return Score("result_match", True, 1.0, data={"test_suite": {"checked": False, "why": why}})
    from pytest_nl2sql.scoring.neighbours import NeighboursUnavailable, disagreement

    seen = reviewed_equivalent(case, a.sql)
    if seen is not None:  # a person judged this answer right: its flag does not come back
        return Score("result_match", True, 1.0, data={"test_suite": {"checked": False, "why": "reviewed: equivalent",
                                                                      "reviewed": {"sql": seen.sql, "note": seen.note}}})

    try:
        paths = hood.of(datasource)
        if not paths:
            return Score("result_match", True, 1.0, data={"test_suite": {"checked": False, "why": hood.why_not(datasource)}})
        found = disagreement(hood, datasource, gold_sql, a.sql, rule, role=ctx.role, question=case.question or "")
    except NeighboursUnavailable as exc:
        return Score("result_match", True, 1.0, data={"test_suite": {"checked": False, "why": str(exc)}})
    except Exception as exc:  # a neighbour that cannot be used must not crash the item
        why = f"the neighbours could not be used: {type(exc).__name__}: {exc}"
        return Score("result_match", True, 1.0, data={"test_suite": {"checked": False, "why": why}})
    if found is None:
        return Score("result_match", True, 1.0, data={"test_suite": {"checked": True, "neighbours": len(paths)}})
    if found.get("gold_finding"):
        # the gold's own fragility, not the engine's failure: an audit finding to read
        detail = (
            f"gold is fragile on neighbour {found['neighbour'] + 1}: read it ({found['gold_finding']})"
            + shown_counterexample(found)
        )
        data = {"test_suite": {"checked": True, "neighbours": len(paths), "gold_finding": found}}
        return Score("result_match", True, 1.0, detail, data=data)
    detail = (
        f"the rows match on the real database, but not on neighbour database {found['neighbour'] + 1} of "
        f"{len(paths)} (--nl2sql-test-suite): {found['reason']}" + shown_counterexample(found)
    )
    data = {"test_suite": {"checked": True, "neighbours": len(paths), "disagreed": found}}
    return Score("result_match", False, 0.0, detail, data=data)


def _same_sql(sql: str) -> str:
    import sqlglot

    try:
        return sqlglot.parse_one(sql.strip().rstrip(";"), read="sqlite").sql(dialect="sqlite", normalize=True)
    except Exception:  # noqa: BLE001 -- not parsed: compared as text, spaces collapsed
        return " ".join(sql.split()).rstrip(";").casefold()


def reviewed_equivalent(case: Any, sql: str) -> Any:
    """The case's ``reviewed`` entry that judged ``sql`` (the same query, up to layout and
    case) equivalent to the gold, or None."""
    if not getattr(case, "reviewed", ()):
        return None
    key = _same_sql(sql)
    return next((r for r in case.reviewed if r.verdict == "equivalent" and _same_sql(r.sql) == key), None)


def shown_counterexample(found: dict) -> str:
    """The shrunk counterexample of a test-suite disagreement, for the failure text."""
    cx = found.get("counterexample")
    if not cx:
        return ""
    lines = [
        f"\ncounterexample: neighbour {found['neighbour'] + 1} (seed {found.get('seed')}, {found.get('database')}),"
        f" {cx['row_count']} of its {cx['shrunk_from']} rows{'' if cx['complete'] else ' (not minimal: shrinking stopped at its time bound)'}:"
    ]
    for t in cx["rows"]:
        lines.append(f"  {t['table']} ({', '.join(map(str, t['columns']))}):")
        lines += [f"    {tuple(r)!r}" for r in t["rows"][:10]]
    lines.append(f"  gold gives {[tuple(r) for r in cx['gold_rows']]!r}")
    if cx.get("answer_error"):
        lines.append(f"  the answer fails: {cx['answer_error']}")
    else:
        lines.append(f"  answer gives {[tuple(r) for r in cx['answer_rows']]!r}")
    return "\n".join(lines)


def _routing(ctx: ScoreContext) -> Score | None:
    want = {d.lower() for d in ctx.case.datasources}
    if ctx.mode == "retrieval" or ctx.answer is None:
        r = ctx.route
        if r is None:
            return None
        top = (r.top or "").lower()
        short = {d.lower() for d in r.shortlist}
        ok = top in want and want <= short
        detail = ""
        if not ok:
            detail = f"ranked first: {r.top}, shortlist: {list(r.shortlist)}; the case needs {sorted(ctx.case.datasources)}"
        return Score("routing", ok, 1.0 if ok else 0.0, detail, data={"top": r.top, "shortlist": list(r.shortlist)})
    a = ctx.answer
    if ctx.case.kind is Kind.ROUTING and a.status != "ok":
        return Score("routing", False, 0.0, f"the engine gave no answer ({a.status}), so it used no datasource")
    if ctx.expected is not Outcome.ALLOWED or a.status != "ok":
        return None
    used = {d.lower() for d in a.datasources}
    ok = used == want
    detail = "" if ok else f"used {sorted(a.datasources)}, the case needs {sorted(ctx.case.datasources)}"
    return Score("routing", ok, 1.0 if ok else 0.0, detail)


def _retrieval_recall(ctx: ScoreContext) -> Score | None:
    case = ctx.case
    wanted = [t.lower() for t in case.tables] + [c.lower() for c in case.columns]
    if not wanted:
        return None
    if ctx.route is not None:
        tables, columns = ctx.route.tables, ctx.route.columns
    elif ctx.answer is not None:
        tables, columns = ctx.answer.retrieved_tables, ctx.answer.retrieved_columns
    else:
        return None
    # retrieved names may be qualified by datasource ("chinook.Customer"): compare the tails
    got_t = {t.lower().split(".")[-1] for t in tables}
    got_c = {".".join(c.lower().split(".")[-2:]) for c in columns}
    hit = sum(1 for t in case.tables if t.lower() in got_t) + sum(1 for c in case.columns if c.lower() in got_c)
    recall = hit / len(wanted)
    threshold = ctx.recall_threshold
    gating = threshold is not None
    ok = recall >= threshold if threshold is not None else None
    missed = [t for t in case.tables if t.lower() not in got_t] + [c for c in case.columns if c.lower() not in got_c]
    detail = f"recall {recall:.2f}" + (f", missed {missed[:8]}" if missed else "")
    if threshold is not None:
        detail += f" (threshold {threshold:.2f})"
    return Score("retrieval_recall", ok, recall, detail, gating=gating)


class BuiltinScorers:
    """The four built-in scorers as one pytest plugin."""

    @pytest.hookimpl
    def pytest_nl2sql_score(self, context: ScoreContext) -> list[Score]:
        out = []
        for scorer in (_outcome, _result_match, _routing, _retrieval_recall):
            score = scorer(context)
            if score is not None:
                out.append(score)
                if score.name == "result_match" and score.passed is False:
                    out.extend(_lenient_match(context))
        return out


def _lenient_match(ctx: ScoreContext) -> list[Score]:
    """``lenient_match`` beside a ``result_match`` miss (lenient.py): reported, never gating."""
    try:
        rule = match_rule(ctx.suite_match, ctx.case.match, ctx.case.order_matters)
        reading = lenient_reading(ctx.answer, ctx.case, rule)
    except Exception as exc:  # noqa: BLE001 -- the lenient reading never breaks an item
        return [Score("lenient_match", None, None, f"not computed: {type(exc).__name__}", gating=False, data={"matched": None})]
    if reading is None:
        return []
    if reading["matched"]:
        detail = f"matches when read leniently ({reading['kind'].replace('_', ' ')}): a presentation-only miss"
        return [Score("lenient_match", None, 1.0, detail, gating=False, data=reading)]
    return [Score("lenient_match", None, 0.0, "a miss when read leniently too", gating=False, data=reading)]

"""Scores and the built-in scorers (registered as the plugin ``nl2sql_scorers``).

* ``outcome`` -- the role got what the case says: an answer (allowed), the validator's
  refusal with the generic message and no rows (refused), ``QUESTION_NOT_ANSWERABLE``
  (unanswerable), a request to narrow the question (clarify).
* ``result_match`` -- allowed items only: the rows equal the case's ``rows`` or one of its
  ``alt_rows`` under the match rule (matching.py).
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
from pytest_nl2sql.scoring.matching import MatchRule, match_rows, rows_to_tuples
from pytest_nl2sql.suitefile.model import EvalCase, Kind, Outcome

__all__ = ["BuiltinScorers", "Score", "ScoreContext"]

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
            detail = "" if ok else f"expected the validator's refusal, got {a.status}" + (" with rows" if a.rows else "")
    elif exp is Outcome.UNANSWERABLE:
        ok = a.status == "not_answerable" and (a.code in (None, NOT_ANSWERABLE_CODE))
        detail = "" if ok else f"expected {NOT_ANSWERABLE_CODE}, got {a.status}"
    else:
        ok = a.status == "needs_clarification"
        detail = "" if ok else f"expected a request to clarify (needs_clarification), got {a.status}"
    return Score("outcome", ok, 1.0 if ok else 0.0, detail, data={"expected": exp.value, "actual": a.status})


def _result_match(ctx: ScoreContext) -> Score | None:
    a, case = ctx.answer, ctx.case
    if a is None or ctx.expected is not Outcome.ALLOWED or case.kind is Kind.ROUTING or case.sql is None:
        return None
    if a.status != "ok":
        return Score("result_match", False, 0.0, "no rows to compare (no answer)")
    if case.rows is None:
        return Score("result_match", False, 0.0, "the case has no rows yet: run regenerate (--nl2sql-regenerate)")
    rule = MatchRule.build(ctx.suite_match, case.match, order_matters=case.order_matters)
    pred_rows = list(a.rows or [])
    first = None
    for gold in (case.rows, *case.alt_rows):
        cols, rows = rows_to_tuples(gold)
        result = match_rows(cols, rows, a.columns, pred_rows, rule, truncated=a.truncated)
        if result.matched:
            return Score("result_match", True, 1.0)
        first = first or result
    assert first is not None
    return Score(
        "result_match",
        False,
        0.0,
        first.reason,
        data={"missing": [list(r) for r in first.missing[:10]], "unexpected": [list(r) for r in first.unexpected[:10]]},
    )


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
        return out

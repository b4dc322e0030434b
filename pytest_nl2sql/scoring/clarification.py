"""The ``clarification`` scorer and its summary figures (issue 24; registered as the plugin
``nl2sql_clarification``, a ``pytest_nl2sql_score`` hook like the built-in scorers).

With ``--nl2sql-clarify``:

* a **clarify** item whose case lists ``clarifications`` passes when the engine asks, its question
  is recognised (or the case has a ``default``), and its answer after the scripted user's reply
  passes ``result_match`` against that reading's rows. It fails with a message saying which:
  the engine answered without asking; asked about something no reading is about; answered the
  clarified question wrongly (or not at all); asked more questions than ``turns`` allows. An
  engine without ``follow_up`` gets a score that is reported but not judged ("not checked").
* an **allowed** item whose engine asked a question anyway fails: an unnecessary clarification.

Each judged item's record carries ``clarification`` (the flags below) and ``turns`` (who said
what, in order); the summary carries ``clarification: {needed, asked, recognised, resolved,
unnecessary}`` (and ``not_checked`` when an engine could not continue): ``needed`` counts the
clarify items with clarifications, ``asked``/``recognised``/``resolved`` how many of them got
that far, ``unnecessary`` the allowed items the engine asked a question on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import pytest

from pytest_nl2sql.scoring.scorers import Score, ScoreContext, result_match
from pytest_nl2sql.suitefile.model import Kind, Outcome

__all__ = ["ClarificationScorer", "record_fields", "summary_figures", "summary_lines"]

FLAGS = ("needed", "asked", "recognised", "resolved", "unnecessary")


def _score(passed: bool | None, detail: str, **flags: Any) -> Score:
    data = {k: bool(flags.get(k, False)) for k in FLAGS}
    data["checked"] = passed is not None
    if flags.get("reading"):
        data["reading"] = flags["reading"]
    return Score("clarification", passed, None if passed is None else float(passed), detail, gating=passed is not None, data=data)


def _readings(case: Any) -> str:
    return ", ".join(repr(c.about) for c in case.clarifications)


def score(ctx: ScoreContext) -> Score | None:
    a, case = ctx.answer, ctx.case
    if not ctx.clarify or a is None or case.kind is Kind.ROUTING:
        return None
    asked = a.status == "needs_clarification"
    if ctx.expected is Outcome.ALLOWED:
        if not asked:
            return None
        return _score(False, f"unnecessary clarification: the case needs no question, yet the engine asked {a.message!r:.200}", unnecessary=True)
    if ctx.expected is not Outcome.CLARIFY or not case.clarifications:
        return None
    if not asked:
        return _score(False, f"the engine answered ({a.status}) without asking which reading is meant ({_readings(case)})", needed=True)
    conv = ctx.conversation
    if conv is None or not conv.checked:
        return _score(None, "not checked: the engine has no follow_up method (docs/engine.md, Conversations)", needed=True, asked=True)
    flags: dict[str, Any] = {"needed": True, "asked": True, "recognised": conv.recognised}
    if conv.reading is None:  # the last question matched no reading, and there is no default
        asked_last = next((t.get("text") for t in reversed(conv.turns) if t.get("status") == "needs_clarification"), a.message)
        return _score(False, f"the engine asked about something else: {asked_last!r:.200} matches no reading ({_readings(case)}) and the case has no default", **flags)
    flags["reading"] = conv.reading.about
    said = f"after the reply {conv.turns[-2]['text'] if conv.follow_up is not None else ''!r} (reading {conv.reading.about!r})"
    follow = conv.follow_up
    if follow is None:
        return _score(False, f"{said} the engine gave no answer", **flags)
    if follow.status == "needs_clarification":
        return _score(False, f"the engine asked {conv.questions} questions; the case allows {case.turns} (turns)", **flags)
    if conv.reading.rows is None:
        return _score(False, f"clarification {conv.reading.about!r} has no rows yet: run regenerate (pytest-nl2sql eval regenerate)", **flags)
    if follow.status != "ok":
        what = follow.message or follow.error or ""
        return _score(False, f"{said} the engine did not answer: {follow.status}" + (f": {what:.200}" if what else ""), **flags)
    clarified = attrs.evolve(case, sql=conv.reading.sql, rows=conv.reading.rows, alt_sql=(), alt_rows=())
    match = result_match(attrs.evolve(ctx, case=clarified, expected=Outcome.ALLOWED, answer=follow, test_suite=None))
    if match is None or not match.passed:
        why = match.detail if match is not None else "no rows to compare"
        return _score(False, f"{said} the answer is wrong: {why}", **flags)
    return _score(True, f"resolved: reading {conv.reading.about!r}", resolved=True, **flags)


class ClarificationScorer:
    """The ``clarification`` scorer as a pytest plugin (``-p no:nl2sql_clarification`` removes it)."""

    @pytest.hookimpl
    def pytest_nl2sql_score(self, context: ScoreContext) -> Score | None:
        return score(context)


def record_fields(scores: Sequence[Score], conversation: Any) -> dict[str, Any]:
    """What an item's JSON record carries: ``clarification`` (the scorer's flags) and ``turns``."""
    out: dict[str, Any] = {}
    for s in scores:
        if s.name == "clarification":
            out["clarification"] = dict(s.data)
    if conversation is not None:
        out["turns"] = [dict(t) for t in conversation.turns]
    return out


def summary_figures(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``clarification: {needed, asked, recognised, resolved, unnecessary}`` (none without
    ``--nl2sql-clarify``)."""
    marked = [r["clarification"] for r in records if isinstance(r.get("clarification"), Mapping) and r.get("verdict") != "skipped"]
    if not marked:
        return {}
    out = {k: sum(1 for m in marked if m.get(k)) for k in FLAGS}
    out["not_checked"] = sum(1 for m in marked if m.get("needed") and not m.get("checked"))
    return {"clarification": out}


def summary_lines(s: Mapping[str, Any]) -> list[str]:
    c = s.get("clarification")
    if not c:
        return []
    line = (
        f" clarification: {c['needed']} needed, {c['asked']} asked, {c['recognised']} recognised, "
        f"{c['resolved']} resolved; {c['unnecessary']} unnecessary"
    )
    if c.get("not_checked"):
        line += f"; {c['not_checked']} not checked (the engine has no follow_up)"
    return [line]

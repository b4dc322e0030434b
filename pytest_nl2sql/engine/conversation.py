"""Clarification as a second turn: the engine asks, a scripted user replies, the engine answers.

The protocol extension (docs/engine.md, "Conversations") is one optional method::

    def follow_up(self, question: str, role: str, llm, history: list[dict]) -> Answer: ...

``history`` is the conversation so far, oldest first, each turn ``{"speaker": "user" |
"engine", "text": ...}``: the user's question, the engine's question back, the user's reply
(and so on, when the case allows more than one question). The engine answers the question as
the replies narrow it -- with SQL, or with another ``needs_clarification``. An engine that keys
on the case may define ``follow_up_case(case, role, llm, history)`` instead (the replay engine
does). An engine with neither keeps today's behaviour: its clarify items pass when it asks, and
the report says their clarification was not checked.

``continue_conversation`` is what the plugin calls after an engine answered a clarify item with
``needs_clarification`` (under ``--nl2sql-clarify``): it recognises the engine's question among
the case's ``clarifications`` (``suitefile.clarifications.recognise``), replies as the scripted
user, and asks the engine to follow up -- at most ``turns`` questions in all. The result is a
``Conversation``: who said what (``turns``, for the item's JSON record), which reading was
recognised, and the engine's last answer (``follow_up``), which the ``clarification`` scorer
(scoring/clarification.py) compares with that reading's rows.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

import attrs

from pytest_nl2sql.engine.protocol import Answer
from pytest_nl2sql.suitefile.clarifications import Clarification, recognise

__all__ = ["Conversation", "continue_conversation", "engine_turn", "has_follow_up"]


def has_follow_up(engine: Any) -> bool:
    """Can ``engine`` continue a conversation?"""
    return callable(getattr(engine, "follow_up_case", None)) or callable(getattr(engine, "follow_up", None))


@attrs.frozen
class Conversation:
    """One clarify item's conversation (see the module doc)."""

    turns: tuple[dict[str, Any], ...]
    checked: bool  # False: the engine has no follow_up (the result was not checked)
    questions: int = 0  # how many questions the engine asked
    recognised: bool = False  # every question matched a reading (a default reading is not "recognised")
    reading: Clarification | None = None  # the reading the last reply was about
    follow_up: Answer | None = None  # the engine's answer after the last reply
    error: str | None = None
    cost_usd: float = 0.0


def engine_turn(answer: Answer) -> dict[str, Any]:
    """What the engine said, as a turn: its question, or its answer (status, sql, rows)."""
    turn: dict[str, Any] = {"speaker": "engine", "status": answer.status}
    if answer.status == "needs_clarification":
        turn["text"] = answer.message
        return turn
    if answer.sql:
        turn["sql"] = answer.sql
    if answer.rows is not None:
        turn["rows"] = len(answer.rows)
    if answer.message or answer.error:
        turn["text"] = answer.message or answer.error
    if answer.code:
        turn["code"] = answer.code
    return turn


def _call(engine: Any, case: Any, role: str, llm: Any, history: list[dict[str, Any]]) -> Answer:
    by_case = getattr(engine, "follow_up_case", None)
    if callable(by_case):
        return by_case(case, role, llm, [dict(t) for t in history])
    return engine.follow_up(case.question, role, llm, [dict(t) for t in history])


def continue_conversation(engine: Any, case: Any, role: str, first: Answer, llm_for: Callable[[Clarification | None], Any]) -> Conversation:
    """Continue the conversation ``first`` (a ``needs_clarification`` answer) opened, as the
    scripted user of ``case``; ``llm_for(reading)`` is the LLM for the follow-up (mode plans:
    one that serves the reading's ``plan``). Never raises for an engine's failure."""
    turns: list[dict[str, Any]] = [{"speaker": "user", "text": case.question}, engine_turn(first)]
    if not has_follow_up(engine):
        return Conversation(tuple(turns), checked=False, questions=1)
    answer, questions, recognised, reading, cost = first, 0, True, None, 0.0
    while answer.status == "needs_clarification" and questions < case.turns:
        questions += 1
        found, reply = recognise(answer.message or "", case.clarifications, case.default)
        matched = found is not None and reply == found.reply
        recognised = recognised and matched
        reading = found if found is not None else reading
        user: dict[str, Any] = {"speaker": "user", "text": reply}
        if found is not None:
            user["reading"] = found.about
        if not matched:
            user["recognised"] = False
        turns.append(user)
        if found is None:
            return Conversation(tuple(turns), checked=True, questions=questions, recognised=False, cost_usd=cost)
        history = [{"speaker": t["speaker"], "text": t.get("text") or ""} for t in turns]
        try:
            answer = _call(engine, case, role, llm_for(found), history)
        except Exception as exc:  # one failing case never stops the run
            answer = Answer(
                status="error", error=f"{type(exc).__name__}: {exc}",
                message="".join(traceback.format_exception_only(type(exc), exc)).strip(),
                cost_usd=float(getattr(exc, "cost_usd", 0.0) or 0.0),
            )  # fmt: skip
        if not isinstance(answer, Answer):
            answer = Answer(status="error", error=f"follow_up returned {type(answer).__name__}, not an Answer")
        cost += answer.cost_usd
        turns.append(engine_turn(answer))
    if answer.status == "needs_clarification":
        questions += 1  # one question more than the case allows
    return Conversation(
        tuple(turns), checked=True, questions=questions, recognised=recognised, reading=reading, follow_up=answer, cost_usd=cost
    )


class _NoPlan:
    """Mode plans' LLM for a reading without a ``plan``: says how to get one."""

    def __init__(self, reading: Clarification) -> None:
        self.reading = reading

    def generate_plan(self, request: Any) -> Any:
        from pytest_nl2sql.llm import LLMError

        raise LLMError(
            f"clarification {self.reading.about!r} has no plan for mode plans: "
            "`pytest-nl2sql suite plan FILE` derives it from its sql"
        )


def converse(run: Any, item: Any, answer: Answer | None, llm: Any) -> tuple[Answer | None, Conversation | None]:
    """The plugin's hook (plugin/asking.py): under ``--nl2sql-clarify``, continue a clarify
    item's conversation when the engine asked; ``(answer, conversation)``, the answer's cost
    including the follow-ups'."""
    if not run.settings.clarify or answer is None or answer.status != "needs_clarification":
        return answer, None  # every item of a run without --nl2sql-clarify: nothing imported
    from pytest_nl2sql.suitefile.model import Outcome

    case = item.case
    if item.expected is not Outcome.CLARIFY or not case.clarifications:
        return answer, None
    plans = run.settings.mode == "plans" and run.settings.predictions is None

    def llm_for(reading: Clarification | None) -> Any:
        if not plans or reading is None:
            return llm
        if not reading.plan:
            return _NoPlan(reading)
        from pytest_nl2sql.llm import FakeLLM

        return FakeLLM({case.question: reading.plan})

    conversation = continue_conversation(run.engine, case, item.role, answer, llm_for)
    if conversation.cost_usd:
        answer = attrs.evolve(answer, cost_usd=answer.cost_usd + conversation.cost_usd)
    return answer, conversation

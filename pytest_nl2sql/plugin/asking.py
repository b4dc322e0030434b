"""Asking the engine once: the part of an item that may run on another thread.

``ask(run, item, attempt)`` does what precedes scoring -- fail fast, the cost cap's
reservation, the engine call (``route`` in mode retrieval, else ``answer`` or ``answer_case``
with the item's LLM), turning an engine's exception into an error answer, settling the cost --
and returns an ``Asked``. It touches no pytest state, so the scheduler can run it for upcoming
items while the current one is scored; scoring stays on pytest's thread.
"""

from __future__ import annotations

import time
import traceback
from typing import TYPE_CHECKING, Any

import attrs
import pytest

from pytest_nl2sql.engine.conversation import converse
from pytest_nl2sql.engine.protocol import Answer, RouteResult
from pytest_nl2sql.plugin.accounting import Usage

if TYPE_CHECKING:
    from pytest_nl2sql.plugin.collect import CaseItem

__all__ = ["Asked", "ask", "cost_of"]


@attrs.frozen
class Asked:
    """One attempt at one item: the answer (or route), how long it took, what it used."""

    answer: Answer | None = None
    route: RouteResult | None = None
    latency: float = 0.0
    skipped: str | None = None
    usage: Usage = attrs.field(factory=Usage)
    attempt: int = 0
    conversation: Any = None  # --nl2sql-clarify: engine.conversation.Conversation


def cost_of(exc: BaseException) -> float:
    """What a failed call already cost (``LLMError.cost_usd``), when the error says."""
    cost = getattr(exc, "cost_usd", 0.0)
    return float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0 else 0.0


def ask(run: Any, item: CaseItem, attempt: int = 0) -> Asked:
    """Ask the engine for ``item`` (see the module docstring); raises only ``pytest.UsageError``."""
    case, role, mode = item.case, item.role, run.settings.mode
    usage = Usage()
    stopped = run.failfast.stopped() if mode == "full" else None
    if stopped is not None:
        return Asked(answer=Answer(status="error", error=stopped, message=stopped), usage=usage, attempt=attempt)
    # the ledger counts what was billed in mode full (every call, even one answered after the
    # run stopped: plugin.session reports it); elsewhere, without a cap, no lock per call
    ledger = run.ledger if run.ledger is not None and (run.ledger.cap_micro is not None or run.settings.mode == "full") else None
    reservation = 0
    if ledger is not None:  # the budget holds in every mode and for every engine
        reservation = ledger.reserve()
        if reservation is None:
            return Asked(skipped="cost cap reached", usage=usage, attempt=attempt)
    share = run.llm_ledgers.get(item.llm) if item.llm else None  # --nl2sql-llm: each config's share of the budget
    share_reservation = 0
    if share is not None:
        share_reservation = share.reserve()
        if share_reservation is None:
            if ledger is not None:
                ledger.settle(reservation, 0.0)
            return Asked(skipped=f"cost cap reached for --nl2sql-llm {item.llm} (its share ${share.cap:.4f})", usage=usage, attempt=attempt)
    answer: Answer | None = None
    route: RouteResult | None = None
    conversation = None
    started = time.perf_counter()
    try:
        engine = run.engine
        if run.settings.routes_only:
            route_case = getattr(engine, "route_case", None)  # engines that key on the case (nl2sql-engine)
            route = route_case(case, role) if route_case is not None else engine.route(case.question, role)
        else:
            llm = run.llm_for(item, attempt=attempt, usage=usage)
            answer_case = getattr(engine, "answer_case", None)  # engines that key on the case (replay)
            if answer_case is not None:
                answer = answer_case(case, role, llm)
            else:
                answer = engine.answer(case.question, role, llm)
            answer, conversation = converse(run, item, answer, llm)  # the clarification's second turn
    except pytest.UsageError:
        raise
    except Exception as exc:  # one failing case never stops the run
        answer = Answer(
            status="error",
            error=f"{type(exc).__name__}: {exc}",
            message="".join(traceback.format_exception_only(type(exc), exc)).strip(),
            cost_usd=cost_of(exc),  # a failed LLM call may still have been billed
        )
    finally:
        if ledger is not None:
            ledger.settle(reservation, answer.cost_usd if answer is not None else 0.0)
        if share is not None:
            share.settle(share_reservation, answer.cost_usd if answer is not None else 0.0)
    return Asked(
        answer=answer, route=route, latency=time.perf_counter() - started, usage=usage, attempt=attempt, conversation=conversation
    )

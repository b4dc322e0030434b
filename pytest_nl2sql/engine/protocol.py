"""The engine protocol: what any NL2SQL system implements to be evaluated (docs/engine.md).

Two calls. ``route(question, role)`` says which datasources, tables and columns a question
belongs to -- no SQL runs, no LLM is asked (mode ``retrieval`` uses only this).
``answer(question, role, llm)`` answers it: the plugin passes the LLM to use (a fake one that
serves the case's hand-written plan in mode ``plans``, the configured one in mode ``full``);
an engine with its own model may ignore it.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import attrs

from pytest_nl2sql.errors import Nl2sqlError

__all__ = ["ANSWER_SOURCES", "ANSWER_STATUSES", "STEP_NAMES", "Answer", "Engine", "RouteResult", "SetupError", "Step", "import_object"]

Status = Literal["ok", "refused", "not_answerable", "needs_clarification", "error"]
ANSWER_STATUSES = ("ok", "refused", "not_answerable", "needs_clarification", "error")
#: Where an answer's SQL came from: a curated (verified) query, or generated for the question.
ANSWER_SOURCES = ("verified", "generated")
#: The step names the report knows by heart (an engine may use others: they are reported as given).
STEP_NAMES = ("router", "planner", "sql_generation", "repair", "execution", "synthesis")


def _tuple(value: Any) -> tuple:
    return tuple(value) if value is not None else ()


@attrs.frozen(kw_only=True)
class RouteResult:
    """Where a question goes: datasources ranked best first, the shortlist used, and the
    tables (``datasource.Table``) and columns (``datasource.Table.Column``) retrieved."""

    ranked: tuple[tuple[str, float], ...] = attrs.field(default=(), converter=_tuple)
    shortlist: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    tables: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    columns: tuple[str, ...] = attrs.field(default=(), converter=_tuple)

    @property
    def top(self) -> str | None:
        return self.ranked[0][0] if self.ranked else None


def _steps(value: Any) -> tuple[Step, ...]:
    if value is None:
        return ()
    return tuple(v if isinstance(v, Step) else Step(**dict(v)) for v in value)


def _opt_number(value: Any) -> float | None:
    return None if value is None else float(value)


def _opt_count(value: Any) -> int | None:
    return None if value is None else int(value)


@attrs.frozen(kw_only=True)
class Step:
    """One step inside the engine (router, planner, SQL generation, repair, ...) as the engine
    reports it: its tokens, cost and wall time, and the error code when the step failed. A
    step that was repeated (a second repair) is reported once per time it ran."""

    name: str = attrs.field(validator=attrs.validators.instance_of(str))
    latency_s: float = attrs.field(default=0.0, converter=float)
    input_tokens: int | None = attrs.field(default=None, converter=_opt_count)
    output_tokens: int | None = attrs.field(default=None, converter=_opt_count)
    cost_usd: float | None = attrs.field(default=None, converter=_opt_number)
    error_code: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen(kw_only=True)
class Answer:
    """An engine's answer to one question for one role."""

    status: str = attrs.field(validator=attrs.validators.in_(ANSWER_STATUSES))
    message: str = ""
    code: str | None = None
    sql: str | None = None
    datasources: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    columns: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    rows: Sequence[tuple] | None = None
    truncated: bool = False
    retrieved_tables: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    retrieved_columns: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    cost_usd: float = 0.0
    latency_s: float = 0.0
    error: str | None = None
    #: What the user reads (a sentence about the rows), when the engine writes one: the
    #: faithfulness scorer checks its numbers and named values against ``rows``.
    text: str | None = None
    #: ``verified`` when a curated query answered, ``generated`` when the SQL was generated for
    #: the question; None when the engine does not say.
    source: str | None = attrs.field(default=None, validator=attrs.validators.optional(attrs.validators.in_(ANSWER_SOURCES)))
    #: The engine's steps, in the order they ran (docs/engine.md, "Reporting steps").
    steps: tuple[Step, ...] = attrs.field(default=(), converter=_steps)


@runtime_checkable
class Engine(Protocol):
    """What the plugin needs of an NL2SQL system."""

    def route(self, question: str, role: str) -> RouteResult: ...

    def answer(self, question: str, role: str, llm: Any) -> Answer: ...


# Optional attributes an engine may have (read with getattr):
#   needs_llm = False      the engine has its own model: mode plans does not ask cases for plans,
#                          mode full builds no LLM client (no key needed), llm is passed as None
#   refusal_message = "…"  the one generic message its refusals carry (the outcome scorer checks it)
#   answer_case(case, role, llm) -> Answer   called instead of answer() when present
#   route_case(case, role) -> RouteResult    called instead of route() in mode retrieval when present
#   follow_up(question, role, llm, history) -> Answer   continues a conversation after the user's
#                          reply to its needs_clarification (--nl2sql-clarify; engine/conversation.py)
#   follow_up_case(case, role, llm, history) -> Answer  the same, keyed on the case (replay)
#   concurrency_safe = False   the engine must be called one call at a time: --nl2sql-concurrency
#                          then asks nothing ahead (default True: calls may overlap on threads)
#   prepare_cases(pairs) -> None   given (case, role) pairs of the next items of this process
#                          (up to 256, in the order they run) before the first of them asks: work
#                          that is cheaper in one go (the replay engine checks their SQL); must
#                          not raise, and must not change what answer_case() answers
#   prepare_ahead = N      with prepare_cases: how many upcoming pairs it wants at once (None: 256)


def import_object(dotted: str) -> Any:
    """``package.module:attr`` (or ``package.module.attr``) -> the object, e.g. what
    ``engine:`` in nl2sql.yaml names; ``LookupError`` saying why when it cannot be imported."""
    if ":" in dotted:
        module, _, attr = dotted.partition(":")
    else:
        module, _, attr = dotted.rpartition(".")
    try:
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise LookupError(f"cannot import {dotted!r}: {exc}") from None
    return obj


class SetupError(Nl2sqlError):
    """The project's datasources or role policies cannot work as configured (an engine's
    ``check_setup`` raises it before a run)."""

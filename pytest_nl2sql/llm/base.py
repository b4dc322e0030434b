"""What the engine sends to an LLM and what it gets back.

The engine never talks to a model directly: it builds a :class:`PlanRequest`, hands it to
something that satisfies the :class:`LLM` protocol, and receives an :class:`LLMResult` whose
``plan`` is a plain JSON object.  Every result carries token counts and a cost, so a run can
enforce its cost cap no matter which client produced the plan.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import attrs

__all__ = ["LLM", "LLMError", "LLMResult", "PlanRequest"]

_str = attrs.validators.instance_of(str)
_dict = attrs.validators.instance_of(dict)
_count = [attrs.validators.instance_of(int), attrs.validators.ge(0)]
_amount = [attrs.validators.instance_of((int, float)), attrs.validators.ge(0)]


def _str_tuple(value: Any) -> tuple[str, ...]:
    """Accept a single name or any iterable of names; always store a tuple."""
    if isinstance(value, str):
        return (value,)
    return tuple(value)


@attrs.frozen
class PlanRequest:
    """One question for the LLM: what to answer, for whom, and over which schema.

    ``json_schema`` is the JSON Schema the plan must match; ``schema_text`` is the
    shortlisted database schema rendered as text for the prompt.  ``case_id`` lets a fake
    LLM find the hand-written plan of a suite case.
    """

    question: str = attrs.field(validator=_str)
    role: str = attrs.field(validator=_str)
    schema_text: str = attrs.field(validator=_str)
    json_schema: dict[str, Any] = attrs.field(validator=_dict, hash=False)
    case_id: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(_str)
    )
    datasources: tuple[str, ...] = attrs.field(
        default=(),
        converter=_str_tuple,
        validator=attrs.validators.deep_iterable(_str),
    )
    #: A clarification's conversation after the question, oldest first: ``(speaker, text)``
    #: pairs, speaker ``"engine"`` (the question it asked) or ``"user"`` (the reply). Empty for
    #: a first answer. The prompt shows it, so the response cache keys on the whole conversation.
    conversation: tuple[tuple[str, str], ...] = attrs.field(default=(), converter=lambda v: tuple((str(a), str(b)) for a, b in v))


@attrs.frozen
class LLMResult:
    """A plan returned by an LLM, with what it cost.

    ``latency_s`` is the wall time of the whole call, retries included; ``raw`` is the
    text the model produced before it was parsed into ``plan``.
    """

    plan: dict[str, Any] = attrs.field(validator=_dict, hash=False)
    input_tokens: int = attrs.field(validator=_count)
    output_tokens: int = attrs.field(validator=_count)
    cost_usd: float = attrs.field(validator=_amount)
    latency_s: float = attrs.field(validator=_amount)
    model: str = attrs.field(validator=_str)
    raw: str = attrs.field(validator=_str, repr=False)
    #: True when the answer came from the response cache (nothing was billed: 0 tokens, $0).
    cached: bool = attrs.field(default=False, kw_only=True)


@runtime_checkable
class LLM(Protocol):
    """Anything that turns a :class:`PlanRequest` into a plan."""

    def generate_plan(self, request: PlanRequest) -> LLMResult:
        """Return a plan for ``request`` or raise :class:`LLMError` (and no other exception)."""
        ...


class LLMError(Exception):
    """An LLM call failed; the message says why and what to check.

    ``retryable`` tells the caller whether trying again later could help (rate limit,
    server error, timeout); ``status`` is the HTTP status when there was one.  A call can
    fail after the server already billed tokens (for example when the model answered with
    invalid JSON): ``input_tokens``, ``output_tokens`` and ``cost_usd`` then hold what the
    server reported, so a cost cap still counts it.

    ``kind`` says what failed, for a caller that stops asking after repeated failures:
    ``"connection"`` (the server could not be reached), ``"auth"`` (HTTP 401/403),
    ``"timeout"``, ``"rate_limit"``, ``"server"`` (5xx), ``"request"`` (another 4xx),
    ``"response"`` (an answer that is not a plan), ``"stopped"`` (the caller stopped asking),
    or None.  ``cached`` is True when the failing answer came from the response cache.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cost_usd: float = 0.0,
        kind: str | None = None,
        cached: bool = False,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.cached = cached
        self.message = message
        self.retryable = retryable
        self.status = status
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.cost_usd = cost_usd

    def __str__(self) -> str:
        return self.message

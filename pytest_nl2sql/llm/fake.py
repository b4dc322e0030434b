"""The LLM of mode ``plans``: serves each case's hand-written plan, for free.

Mode ``plans`` tests everything after the model (validation, routing, execution, scoring)
with plans a reviewer wrote, so a run needs neither a network nor an API key.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from pytest_nl2sql.llm.base import LLMError, LLMResult, PlanRequest

__all__ = ["FakeLLM"]

FAKE_MODEL = "fake"


class FakeLLM:
    """Serve plans from a mapping keyed by case id (or, failing that, by question text).

    Each call returns a deep copy, so a caller that edits its plan cannot change what the
    next call gets.  Usage and cost are always zero.
    """

    def __init__(self, plans: Mapping[str, Mapping[str, Any]]) -> None:
        if not isinstance(plans, Mapping):
            raise TypeError(
                f"FakeLLM needs a mapping of case id -> plan, got {type(plans).__name__}"
            )
        for key, plan in plans.items():
            if not isinstance(plan, Mapping):
                raise TypeError(
                    f"plan for case {key!r} must be a mapping (a JSON object), "
                    f"got {type(plan).__name__}"
                )
        self._plans = {key: copy.deepcopy(dict(plan)) for key, plan in plans.items()}

    def __repr__(self) -> str:
        return f"FakeLLM({len(self._plans)} plans)"

    def generate_plan(self, request: PlanRequest) -> LLMResult:
        """Return the plan stored for ``request.case_id`` (or for its exact question)."""
        plan = None
        if request.case_id is not None:
            plan = self._plans.get(request.case_id)
        if plan is None:
            plan = self._plans.get(request.question)
        if plan is None:
            if request.case_id is not None:
                raise LLMError(
                    f"no plan for case {request.case_id!r}; mode plans needs a 'plan' on "
                    "every answerable case (or run mode full)"
                )
            raise LLMError(
                f"no plan for question {request.question!r}; give the request a case_id "
                "that has a plan"
            )
        return LLMResult(
            plan=copy.deepcopy(plan),
            input_tokens=0,
            output_tokens=0,
            cost_usd=0.0,
            latency_s=0.0,
            model=FAKE_MODEL,
            raw=json.dumps(plan, sort_keys=True),
        )

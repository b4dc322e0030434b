"""PlanModel: the whole plan (an answer with its query, or why there is none), built from data
by :mod:`.parse` and written back by :mod:`.dump`."""

from __future__ import annotations

from typing import Any

import attrs

from pytest_nl2sql.engine.plan.dump import _dump_query
from pytest_nl2sql.engine.plan.nodes import Query
from pytest_nl2sql.engine.plan.parse import (
    _PLAN_KEYS,
    _QUERY_KEYS,
    _check_keys,
    _mapping,
    _opt,
    _parse_query,
    _show,
    _text,
)
from pytest_nl2sql.engine.plan.specplan import is_spec_plan, read_spec_plan
from pytest_nl2sql.engine.plan.vocabulary import KINDS, PlanError


@attrs.frozen
class PlanModel:
    """A plan: an answer (with its query), or why the question cannot be answered as asked."""

    kind: str = "answer"
    datasource: str | None = None
    query: Query | None = None
    reason: str | None = None
    clarification: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.kind not in KINDS:
            raise PlanError("plan.kind", f"unknown kind {self.kind!r} (known: {', '.join(KINDS)})")
        if (self.kind == "answer") != (self.query is not None):
            raise PlanError("plan", "a plan has a query exactly when its kind is answer")

    @classmethod
    def from_dict(cls, data: Any, *, path: str = "plan") -> PlanModel:
        """Build a plan from plain data (parsed YAML/JSON); raise :class:`PlanError` if invalid.

        Also reads nl2sql-engine's PlanModel shape (``tables``, ``select_items``, ...), see
        :mod:`.specplan`."""
        if is_spec_plan(data):
            datasource, query = read_spec_plan(data, path)
            return cls("answer", datasource, query)
        return _parse_plan(data, path)

    def to_dict(self) -> dict[str, Any]:
        """The plan as plain data in canonical form, with defaults left out."""
        out: dict[str, Any] = {}
        if self.kind != "answer":
            out["kind"] = self.kind
        if self.datasource is not None:
            out["datasource"] = self.datasource
        if self.reason is not None:
            out["reason"] = self.reason
        if self.clarification is not None:
            out["clarification"] = self.clarification
        if self.query is not None:
            out.update(_dump_query(self.query))
        return out



def _parse_plan(data: Any, path: str) -> PlanModel:
    data = _mapping(data, path, "a plan")
    _check_keys(data, path, _PLAN_KEYS)
    kind = _opt(data, "kind")
    kind = "answer" if kind is None else kind
    if kind not in KINDS:
        raise PlanError(f"{path}.kind", f"unknown kind {_show(kind)} (known: {', '.join(KINDS)})")
    datasource = _opt(data, "datasource")
    if datasource is not None:
        datasource = _text(datasource, f"{path}.datasource", "a datasource name")
    reason = _opt(data, "reason")
    clarification = _opt(data, "clarification")
    query_keys = [k for k in _QUERY_KEYS if _opt(data, k) is not None]
    if kind == "answer":
        for key in ("reason", "clarification"):
            if _opt(data, key) is not None:
                raise PlanError(
                    f"{path}.{key}", f"only a plan of kind not_answerable/clarify has '{key}'"
                )
        return PlanModel(kind, datasource, _parse_query(data, path, _PLAN_KEYS))
    if query_keys:
        raise PlanError(
            f"{path}.{query_keys[0]}", f"a plan of kind {kind} has no query; remove '{query_keys[0]}'"
        )
    if kind == "not_answerable":
        if clarification is not None:
            raise PlanError(f"{path}.clarification", "use 'reason' in a not_answerable plan")
        if reason is not None:
            reason = _text(reason, f"{path}.reason", "a reason")
        return PlanModel(kind, datasource, None, reason=reason)
    if reason is not None:
        raise PlanError(f"{path}.reason", "use 'clarification' in a clarify plan")
    if clarification is None:
        raise PlanError(path, "a clarify plan needs 'clarification': the question to ask back")
    clarification = _text(clarification, f"{path}.clarification", "a clarification question")
    return PlanModel(kind, datasource, None, clarification=clarification)


"""nl2sql-engine as the engine under test: the one module that knows nl2sql-engine's insides.

nl2sql-engine (PyPI ``nl2sql-engine``, import ``nl2sql``, MIT; Python >= 3.12) is the system the
suite format comes from. In one of its projects (``nl2sql.yaml`` ``version: 2``) or with
``engine: nl2sql-engine`` in ours, the plugin drives nl2sql-engine's own pipeline, the way its
evaluator (``nl2sql eval run``) does, so a team moving to pytest keeps its verdicts:

* mode ``retrieval``: its routing (``retrieval_recall.routed``, cut at
  ``settings.routing.max_datasources``) and its schema retriever (``retrieval_recall.sent``), on
  a runtime with the vector search forced on and curated answers off;
* mode ``plans``: its gold-plan fake LLM (``GoldPlanLLM``) serving the case's own ``PlanModel``
  plan through the real resolver, validator, generator and executor, curated answers off and
  the **plan cache off** (a cached plan would outlive an edit of the suite);
* mode ``full``: its configured LLM, plan cache off.

Every run pins the generic refusal (``policies.refusal_names_tables`` off), as its evaluator
does. nl2sql-engine has no public "answer this case with this plan" call, so this module uses
two of its evaluator's private helpers (``nl2sql.evaluation.run._ask`` and
``_measure_retrieval``); it is imported lazily (nl2sql-engine is never a dependency of
pytest-nl2sql), and the installed version is checked against ``SUPPORTED`` first, with a clear
error outside it. docs/engine.md, "nl2sql-engine".
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from importlib import metadata
from typing import Any

import attrs
from packaging.version import InvalidVersion, Version

from pytest_nl2sql.engine.protocol import Answer, RouteResult, Step
from pytest_nl2sql.errors import Nl2sqlError

__all__ = ["SUPPORTED", "Nl2sqlEngine", "Nl2sqlEngineError", "installed_version", "validate_plan"]

#: The nl2sql-engine versions this module was written and tested against: [low, high).
SUPPORTED = ("0.7.0", "0.8.0")
INSTALL_HINT = "pip install 'nl2sql-engine>=0.7,<0.8' (it needs Python >= 3.12)"


class Nl2sqlEngineError(Nl2sqlError):
    """nl2sql-engine is missing, of an unsupported version, or cannot build the project."""


def installed_version() -> str | None:
    """The installed nl2sql-engine's version, or None when it is not installed."""
    try:
        return metadata.version("nl2sql-engine")
    except metadata.PackageNotFoundError:
        return None


def check_version() -> str:
    """The installed version; ``Nl2sqlEngineError`` naming the fix when it is missing or outside ``SUPPORTED``."""
    version = installed_version()
    low, high = SUPPORTED
    shown = f">={low},<{high}"
    if version is None:
        raise Nl2sqlEngineError(
            "this project's engine is nl2sql-engine, which is not installed in this environment: "
            f"{INSTALL_HINT}; or run its suites with pytest-nl2sql's reference engine: --nl2sql-engine reference"
        )
    try:
        supported = Version(low) <= Version(version) < Version(high)
    except InvalidVersion:
        supported = False
    if not supported:
        raise Nl2sqlEngineError(
            f"nl2sql-engine {version} is installed; pytest-nl2sql drives nl2sql-engine {shown} "
            f"({INSTALL_HINT}), or run with --nl2sql-engine reference"
        )
    return version


def _ranked(routed: list[str]) -> list[tuple[str, float]]:
    """nl2sql-engine's routing order as ranked pairs (it gives no scores: 1/rank stands in)."""
    return [(ds, 1.0 / (i + 1)) for i, ds in enumerate(routed)]


def _their_case(case: Any) -> Any:
    """nl2sql-engine's ``EvalCase`` for one of ours (its fields, unvalidated: ours are checked)."""
    from nl2sql.evaluation.suite import EvalCase as TheirCase

    outcome = {role: getattr(o, "value", o) for role, o in dict(case.outcome).items()}
    return TheirCase.model_construct(
        id=case.id,
        question=case.question,
        datasources=list(case.datasources),
        status="approved",
        kind=getattr(case.kind, "value", case.kind) or "answer",
        origin="hand",
        difficulty=None,
        tags=list(case.tags),
        paraphrase_group=None,
        outcome=outcome,
        tables=list(case.tables),
        columns=list(case.columns),
        order_matters=bool(case.order_matters),
        sql=case.sql,
        rows=None,
        alt_sql=list(case.alt_sql),
        alt_rows=[],
        plan=dict(case.plan) if case.plan else None,
    )


def validate_plan(plan: Mapping[str, Any]) -> list[str]:
    """Problems of one case's ``plan`` as nl2sql-engine reads it (its ``PlanModel``), each
    ``path: what is wrong``; [] when it is valid. Without nl2sql-engine installed, the
    reference engine's reading of the ``PlanModel`` shape answers."""
    if installed_version() is None:
        from pytest_nl2sql.engine.plan import PlanError, PlanModel

        try:
            PlanModel.from_dict(dict(plan))
        except PlanError as exc:
            return [f"{exc.path}: {exc.problem}"]
        return []
    from nl2sql.pipeline.nodes.ast_planner.schemas import PlanModel as TheirPlan
    from pydantic import ValidationError

    try:
        TheirPlan.model_validate(dict(plan))
    except ValidationError as exc:
        return [
            "plan." + ".".join(str(p) for p in err.get("loc", ())) + f": {err.get('msg', 'invalid')}"
            for err in exc.errors()[:20]
        ]
    return []


class Nl2sqlEngine:
    """The engine protocol (docs/engine.md) over nl2sql-engine's pipeline, for one mode."""

    concurrency_safe = False  # the gold-plan fake answers for the one case selected last

    def __init__(self, project: Any, mode: str = "plans") -> None:
        self.version = check_version()
        self.mode = mode
        self.needs_llm = mode == "plans"  # mode plans needs each case's plan; full uses its own LLM
        from nl2sql.pipeline.nodes.validator.node import REFUSAL_MESSAGE
        from nl2sql.public_api import NL2SQL

        self.refusal_message = REFUSAL_MESSAGE
        try:
            self._engine = NL2SQL.from_config(str(project.path))
        except Exception as exc:  # noqa: BLE001 -- its ConfigError lists every problem
            raise Nl2sqlEngineError(f"nl2sql-engine cannot build {project.path}: {exc}") from None
        ctx = self._engine._runtime
        base: dict[str, Any] = {"policies.refusal_names_tables": False}
        if mode == "retrieval":
            from nl2sql.evaluation.scorers import retrieval_recall

            self._run = ctx.derive({**base, **retrieval_recall.RETRIEVAL_CHANGES, "curated": None})
        elif mode == "plans":
            self._run = ctx.derive({**base, "curated": None, "settings.pipeline.plan_cache": False})
        else:
            self._run = ctx.derive({**base, "settings.pipeline.plan_cache": False, "curated": None})
        self._gold: Any = None
        self._lock = threading.Lock()

    # -- the protocol ----------------------------------------------------------------------
    def route(self, question: str, role: str) -> RouteResult:
        from nl2sql.evaluation.scorers import retrieval_recall

        limit = self._run.settings.routing.max_datasources
        routed = retrieval_recall.routed(self._run, question, limit)
        return RouteResult(ranked=_ranked(routed), shortlist=routed)

    def route_case(self, case: Any, role: str) -> RouteResult:
        """Mode retrieval, as nl2sql-engine's evaluator measures it: the routing, and what the
        schema retriever sends for the case's first datasource."""
        from nl2sql.evaluation.run import _measure_retrieval

        with self._lock:
            sent, routed = _measure_retrieval(self._run, _their_case(case), role)
        ds = case.datasources[0] if case.datasources else ""
        return RouteResult(
            ranked=_ranked(routed),
            shortlist=routed,
            tables=[f"{ds}.{t}" for t in sent],
            columns=[f"{ds}.{t}.{c}" for t, cols in sent.items() for c in cols],
        )

    def answer(self, question: str, role: str, llm: Any) -> Answer:
        raise Nl2sqlEngineError("nl2sql-engine answers a suite's case (answer_case), not a bare question")

    def answer_case(self, case: Any, role: str, llm: Any = None) -> Answer:
        from nl2sql.evaluation.run import _ask

        theirs = _their_case(case)
        with self._lock:
            if self.mode == "plans":
                gold = self._gold_llm()
                gold.plans[case.id] = self._plan(case)
                gold.select(theirs)
            result, sent = _ask(self._run, theirs, role)
        answer = attrs.evolve(self._answer(result, sent, case), **_what_it_said(result))
        if self.mode == "full":  # what its model calls cost, priced as its evaluator prices them
            return attrs.evolve(answer, cost_usd=self._cost(result))
        return answer

    def _cost(self, result: Any) -> float:
        from nl2sql.evaluation.run import question_cost
        from nl2sql.llm.models import LLMFileConfig

        llm = self._run.config.llm
        try:
            return float(question_cost(result.usage, LLMFileConfig.from_llm(llm), llm.prices))
        except Exception:  # noqa: BLE001 -- a model without a price: nl2sql-engine counts it as unknown
            return 0.0

    def close(self) -> None:
        if self._gold is not None:
            self._gold.__exit__(None, None, None)
            self._gold = None
        self._engine.close()

    # -- the pieces --------------------------------------------------------------------------
    def _gold_llm(self) -> Any:
        if self._gold is None:
            from nl2sql.evaluation.gold_llm import GoldPlanLLM

            self._gold = GoldPlanLLM({}).__enter__()
            self._run.llm_registry.replace_llms({"default": self._gold.agent_config()})
        return self._gold

    @staticmethod
    def _plan(case: Any) -> Any:
        from nl2sql.pipeline.nodes.ast_planner.schemas import PlanModel as TheirPlan

        if not case.plan:
            return None
        return TheirPlan.model_validate(dict(case.plan))

    def _answer(self, result: Any, sent: Mapping[str, list[str]] | None, case: Any) -> Answer:
        errors = list(result.errors or [])
        codes = [e.get("error_code") for e in errors]
        first = errors[0] if errors else {}
        ds = case.datasources[0] if case.datasources else ""
        used = tuple(dict.fromkeys(sq.datasource_id for sq in result.sub_queries if sq.datasource_id))
        sql = result.sub_queries[0].sql if result.sub_queries else None
        retrieved = dict(sent or {})
        common = {
            "sql": sql or None,
            "datasources": used,
            "retrieved_tables": tuple(f"{ds}.{t}" for t in retrieved),
            "retrieved_columns": tuple(f"{ds}.{t}.{c}" for t, cols in retrieved.items() for c in cols),
        }
        samples = [sq for sq in result.sub_queries if sq.rows is not None]
        status = result.status
        if status == "success":
            if len(samples) > 1:
                return Answer(status="error", error=f"expected one result set, got {len(samples)}",
                              message="the answer has more than one result set", **common)
            rows = samples[0].rows if samples else None
            return Answer(
                status="ok",
                columns=tuple(rows.columns) if rows is not None else (),
                rows=[tuple(r) for r in rows.rows] if rows is not None else None,
                truncated=bool(samples and samples[0].truncated),
                **common,
            )
        returned_rows = any(sq.rows is not None and (sq.rows.total_rows or sq.rows.rows) for sq in result.sub_queries)
        if status == "needs_clarification":
            return Answer(status="needs_clarification", message=str(first.get("message") or ""), **common)
        if status == "error" and not returned_rows and "SECURITY_VIOLATION" in codes:
            denial = next(e for e in errors if e.get("error_code") == "SECURITY_VIOLATION")
            return Answer(status="refused", message=str(denial.get("message") or ""), **common)
        if status == "error" and not returned_rows and "QUESTION_NOT_ANSWERABLE" in codes:
            return Answer(status="not_answerable", code="QUESTION_NOT_ANSWERABLE",
                          message=str(first.get("message") or ""), **common)
        text = f"{first.get('error_code') or 'ERROR'}: {first.get('message') or ''}" if errors else f"status {status!r}"
        return Answer(status="error", error=text, message=text, **common)


def _what_it_said(result: Any) -> dict[str, Any]:
    """What nl2sql-engine's result says beyond rows: ``source`` (its ``AnswerSource.type``),
    ``text`` (the answer synthesizer's summary and content) and ``steps`` (one per pipeline node:
    its wall time from ``timings``, tokens and cost from ``usage.nodes``; a failed node's error
    code from ``errors``)."""
    out: dict[str, Any] = {}
    kind = getattr(getattr(result, "source", None), "type", None)
    if kind in ("verified", "generated"):
        out["source"] = kind
    final = getattr(result, "final_answer", None)
    if isinstance(final, Mapping):
        text = "\n".join(p for p in (final.get("summary"), final.get("content")) if isinstance(p, str) and p)
        if text:
            out["text"] = text
    timings = dict(getattr(result, "timings", None) or {})
    nodes = dict(getattr(getattr(result, "usage", None), "nodes", None) or {})
    codes: dict[str, str] = {}
    for e in getattr(result, "errors", None) or []:
        if isinstance(e, Mapping) and e.get("node") and e.get("error_code"):
            codes.setdefault(str(e["node"]), str(e["error_code"]))
    steps = []
    for name in dict.fromkeys([*timings, *nodes]):
        usage = nodes.get(name)
        steps.append(Step(
            name=str(name),
            latency_s=float(timings.get(name) or getattr(usage, "latency_s", 0.0) or 0.0),
            input_tokens=getattr(usage, "input_tokens", None),
            output_tokens=getattr(usage, "output_tokens", None),
            cost_usd=getattr(usage, "cost", None),
            error_code=codes.get(str(name)),
        ))
    if steps:
        out["steps"] = tuple(steps)
    return out

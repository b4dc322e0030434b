"""``--nl2sql-estimate``: what a run would ask and cost, printed before anything is asked.

After collection (one process), every selected item is put to the engine with a *capturing*
LLM that records the plan request and answers nothing, so no model is asked and no SQL runs
(the reference engine asks the LLM before it compiles). Each captured request is priced from
its size -- the messages and the response format, about 4 characters a token -- and looked up
in the response cache (``--nl2sql-cache``): a cached answer costs nothing. Output tokens are the
mean of the cached answers' when there are some, else ``DEFAULT_OUTPUT_TOKENS``. Under
``--nl2sql-llm NAME`` (repeatable) each config's calls are priced at that config's prices, from
its own cache, one block a config beside the total. Then every
item is deselected: the run ends with the estimate and exit code 0.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_nl2sql.llm.base import LLMError, PlanRequest

__all__ = ["CHARS_PER_TOKEN", "DEFAULT_OUTPUT_TOKENS", "Estimate"]

CHARS_PER_TOKEN = 4.0
DEFAULT_OUTPUT_TOKENS = 150


class _Capture:
    def __init__(self) -> None:
        self.requests: list[PlanRequest] = []

    def generate_plan(self, request: PlanRequest) -> Any:
        self.requests.append(request)
        raise LLMError("--nl2sql-estimate asks nothing", kind="stopped")


def _ask(engine: Any, llm: Any, items: list[Any], k: int) -> tuple[int, int, int, list[int]]:
    """Capture what ``items`` would ask ``llm``: (calls to ask, answered from the cache, input
    tokens of the calls to ask, output tokens of the cached answers)."""
    cache = getattr(llm, "cache", None)
    calls = cached = tokens_in = 0
    known_out: list[int] = []
    for item in items:
        for attempt in range(k):
            capture = _Capture()
            try:
                answer_case = getattr(engine, "answer_case", None)
                if answer_case is not None:
                    answer_case(item.case, item.role, capture)
                else:
                    engine.answer(item.case.question, item.role, capture)
            except Exception:  # an engine that lets the capture's error through
                pass
            for request in capture.requests:
                parts = llm.request_parts(request, attempt)
                entry = None
                if cache is not None:
                    from pytest_nl2sql.llm.cache import cache_key

                    entry = cache.get(cache_key(parts))
                if entry is not None:
                    cached += 1
                    known_out.append(int(entry["usage"][1]))
                    continue
                calls += 1
                size = len(json.dumps([parts["messages"], parts["response_format"]], ensure_ascii=False))
                tokens_in += int(size / CHARS_PER_TOKEN + 0.5)
    return calls, cached, tokens_in, known_out


def estimate_lines(run: Any, items: list[Any]) -> list[str]:
    """The estimate of asking ``items`` (``CaseItem``s), as terminal lines. Under several
    ``--nl2sql-llm`` configs each config's calls are priced at that config's prices (its cache,
    its mean output tokens), one block a config, and the total is their sum."""
    settings, k = run.settings, int(run.settings.repeat)
    head = f"{len(items)} items x {k} attempt{'s' if k != 1 else ''}"
    engine = run.engine
    if settings.mode != "full" or settings.predictions is not None or not getattr(engine, "needs_llm", True):
        why = "no LLM is asked in this mode" if settings.mode != "full" else "the engine asks no LLM of the plugin's"
        return [f"{head}: 0 LLM calls, $0 ({why})"]
    by_config: dict[str | None, list[Any]] = {}
    for item in items:
        by_config.setdefault(getattr(item, "llm", None), []).append(item)
    blocks, total_calls, total_cached, total_cost = [], 0, 0, 0.0
    for name, group in (by_config or {None: []}).items():
        llm = run.shared_llm(name)
        calls, cached, tokens_in, known_out = _ask(engine, llm, group, k)
        per_call = round(sum(known_out) / len(known_out)) if known_out else DEFAULT_OUTPUT_TOKENS
        source = "the mean of the cached answers" if known_out else "a guess: no cached answer to go by"
        tokens_out = per_call * calls
        cost = llm.cost_usd(tokens_in, tokens_out)
        total_calls, total_cached, total_cost = total_calls + calls, total_cached + cached, total_cost + cost
        blocks.append((name, calls, cached, llm, [
            f"  ~{tokens_in:,} input tokens, ~{tokens_out:,} output tokens ({per_call} a call, {source})",
            f"  ~${cost:.4f} at ${llm.price_input_per_1k:g} / ${llm.price_output_per_1k:g} per 1k tokens in / out",
        ]))
    ask = "  nothing was asked: run without --nl2sql-estimate to ask"
    if len(blocks) == 1 and blocks[0][0] is None:
        _, calls, cached, llm, lines = blocks[0]
        return [f"{head} = {calls + cached} LLM calls: {cached} answered from the cache, {calls} to ask "
                f"(model {llm.model} at {llm.base_url})", *lines, ask]
    out = [f"{head} = {total_calls + total_cached} LLM calls: {total_cached} answered from the cache, {total_calls} to ask; "
           f"~${total_cost:.4f} in all, each --nl2sql-llm config at its own prices:"]
    for name, calls, cached, llm, lines in blocks:
        out.append(f" {name}: {calls + cached} LLM calls: {cached} answered from the cache, {calls} to ask (model {llm.model} at {llm.base_url})")
        out += ["  " + line for line in lines]
    return [*out, ask]


class Estimate:
    """The plugin object of ``--nl2sql-estimate`` (registered on the controller)."""

    def __init__(self, run: Any) -> None:
        self.run = run
        self.lines: list[str] = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
        from pytest_nl2sql.plugin.collect import CaseItem

        self.lines = estimate_lines(self.run, [i for i in items if isinstance(i, CaseItem)])
        config.hook.pytest_deselected(items=list(items))
        items[:] = []

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.lines:
            terminalreporter.section("nl2sql estimate")
            for line in self.lines:
                terminalreporter.write_line(line)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.lines and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK

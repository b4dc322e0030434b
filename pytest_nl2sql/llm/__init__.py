"""LLM clients of the reference engine: they turn a question into a query plan.

``FakeLLM`` serves hand-written plans (mode ``plans``); ``OpenAICompatibleLLM`` asks any
OpenAI-compatible server (mode ``full``).  Both satisfy the ``LLM`` protocol and report
token usage and cost on every call.
"""

from pytest_nl2sql.llm.base import LLM, LLMError, LLMResult, PlanRequest
from pytest_nl2sql.llm.fake import FakeLLM
from pytest_nl2sql.llm.openai_client import OpenAICompatibleLLM
from pytest_nl2sql.llm.prompt import build_messages

__all__ = [
    "LLM",
    "FakeLLM",
    "LLMError",
    "LLMResult",
    "OpenAICompatibleLLM",
    "PlanRequest",
    "build_messages",
]

"""The LLM of mode ``full``: any server that speaks OpenAI's chat-completions API.

OpenAI itself, vLLM, Ollama and llama.cpp all serve ``POST {base_url}/chat/completions``,
so one client built on the official ``openai`` package covers them.  The package is an
optional extra (``pip install 'pytest-nl2sql[openai]'``) and is imported only when a client
is made.

Each call asks for structured output against the engine's JSON Schema, parses the answer
into a dict, and prices the reported token usage, so a run can keep to its cost cap.
Rate limits (429), server errors (5xx), 408, timeouts and connection failures are retried
with exponential backoff (``backoff_s``, doubled each time, or the server's
``Retry-After`` when it sends one), both capped by ``max_wait_s``; ``max_retries`` counts
the retries after the first attempt.  Other 4xx answers fail at once.  The API key never
appears in an error message or a repr.

Limits: ``timeout_s`` bounds each attempt as a whole -- connecting, sending, the response
headers and the whole body -- even against a server that trickles one byte at a time (so one
call takes at most ``(max_retries + 1) * timeout_s`` plus the waits between attempts). The
response body is capped at ``max_response_bytes`` (``MAX_RESPONSE_BYTES``, 8 MiB; a plan is a
few KiB), counted after decompression. Every failure, these included, is an ``LLMError``: no
other exception leaves the client.

Cache: with a ``ResponseCache`` (``cache=``, or set ``llm.cache`` later), an answer is looked up
before the server is asked and stored after it answered, keyed on ``request_parts(request,
attempt)``: the base URL, the model, the messages, the response format, ``params`` (extra
request parameters such as ``temperature``, sent as they are) and the attempt. A cached answer
is parsed as a fresh one and reports ``cached=True``, 0 tokens and $0. Only answers the server
gave are stored (never a failure to reach it).
"""

from __future__ import annotations

import email.utils
import json
import os
import threading
import time
from collections.abc import Mapping
from typing import Any

from pytest_nl2sql.llm.base import LLMError, LLMResult, PlanRequest
from pytest_nl2sql.llm.prompt import build_messages

__all__ = ["MAX_RESPONSE_BYTES", "OpenAICompatibleLLM"]

#: The largest response body the client reads (after decompression), in bytes.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024

INSTALL_HINT = "pip install 'pytest-nl2sql[openai]'"
# Sent when no key is configured: local servers (Ollama, llama.cpp) ignore it, but the
# openai package refuses to build a client without one.
_NO_KEY = "no-key"
_SNIPPET = 200


def _import_openai() -> Any:
    """Import the optional ``openai`` package or say how to install it."""
    try:
        import openai
    except ImportError:
        raise LLMError(
            "mode full talks to the LLM through the 'openai' package, which is not "
            f"installed; install it with: {INSTALL_HINT}"
        ) from None
    return openai


def _check_openai() -> None:
    """Raise the install hint when the ``openai`` package is missing, without importing it."""
    import importlib.util
    import sys

    try:
        missing = sys.modules["openai"] is None if "openai" in sys.modules else importlib.util.find_spec("openai") is None
    except (ImportError, ValueError):
        missing = True
    if missing:
        _import_openai()


def _check_number(name: str, value: Any, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if positive and not value > 0:
        raise ValueError(f"{name} must be greater than 0, got {value!r}")
    if not value >= 0:
        raise ValueError(f"{name} must be 0 or more, got {value!r}")
    return float(value)


class OpenAICompatibleLLM:
    """Ask an OpenAI-compatible server for plans; see the module docstring for retries.

    ``api_key`` may be empty for local servers that need none.  Prices are US dollars per
    1000 tokens.  Bad arguments raise ``ValueError`` naming the argument.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        *,
        price_input_per_1k: float,
        price_output_per_1k: float,
        timeout_s: float = 30.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        max_wait_s: float = 30.0,
        api_key_env: str | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        params: Mapping[str, Any] | None = None,
        cache: Any = None,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"base_url must be an http(s) URL such as 'https://api.openai.com/v1', "
                f"got {base_url!r}"
            )
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must name the model to ask, e.g. 'gpt-4o-mini', got {model!r}")
        if api_key is not None and not isinstance(api_key, str):
            raise ValueError("api_key must be a string or None")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be an integer, 0 or more, got {max_retries!r}")
        if isinstance(max_response_bytes, bool) or not isinstance(max_response_bytes, int) or max_response_bytes < 1:
            raise ValueError(f"max_response_bytes must be a whole number of bytes, 1 or more, got {max_response_bytes!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.price_input_per_1k = _check_number("price_input_per_1k", price_input_per_1k)
        self.price_output_per_1k = _check_number("price_output_per_1k", price_output_per_1k)
        self.timeout_s = _check_number("timeout_s", timeout_s, positive=True)
        self.max_retries = max_retries
        self.backoff_s = _check_number("backoff_s", backoff_s)
        self.max_wait_s = _check_number("max_wait_s", max_wait_s)
        self._api_key = api_key or ""
        self._key_hint = f"the API key in ${api_key_env}" if api_key_env else "the API key"
        self.max_response_bytes = max_response_bytes
        self.params: dict[str, Any] = dict(params or {})
        self.cache = cache  # a pytest_nl2sql.llm.cache.ResponseCache, or None
        _check_openai()  # the package is imported, and the client built, on the first request
        self._openai_module: Any = None
        self._client_obj: Any = None
        self._build_lock = threading.Lock()

    @property
    def _openai(self) -> Any:
        if self._openai_module is None:
            self._openai_module = _import_openai()
        return self._openai_module

    @property
    def _limits(self) -> Any:
        from pytest_nl2sql.llm import http_limits

        return http_limits

    @property
    def _client(self) -> Any:
        if self._client_obj is None:
            with self._build_lock:
                if self._client_obj is None:
                    self._client_obj = self._build_client()
        return self._client_obj

    def _build_client(self) -> Any:
        http_limits = self._limits
        max_response_bytes = self.max_response_bytes
        http_client = self._openai.DefaultHttpxClient(
            timeout=self.timeout_s,
            headers={"Accept-Encoding": "identity"},  # a compressed body is decoded (capped) if sent anyway
            event_hooks={"response": [http_limits.response_hook(max_response_bytes)]},
        )
        http_limits.install(http_client)  # the whole-request deadline, on every socket operation
        return self._openai.OpenAI(
            api_key=self._api_key or _NO_KEY,
            base_url=self.base_url,
            timeout=self.timeout_s,
            max_retries=0,  # retries are ours, so they are visible and priced
            http_client=http_client,
        )

    @classmethod
    def from_config(cls, llm_config: Any) -> OpenAICompatibleLLM:
        """Build a client from any object with the ``llm`` settings as attributes.

        Reads ``base_url``, ``model``, ``price_input_per_1k``, ``price_output_per_1k``
        (required), ``api_key_env``, ``timeout_s``, ``max_retries`` and ``backoff_s``
        (optional).  The key is read from the environment variable named by
        ``api_key_env``; leave that unset (None or empty) for a server that needs no key.
        """

        def required(name: str) -> Any:
            value = getattr(llm_config, name, None)
            if value is None:
                raise LLMError(f"the llm settings have no '{name}'; set llm.{name}")
            return value

        kwargs: dict[str, Any] = {}
        for name in ("timeout_s", "max_retries", "backoff_s"):
            value = getattr(llm_config, name, None)
            if value is not None:
                kwargs[name] = value
        api_key_env = getattr(llm_config, "api_key_env", None) or None
        api_key = None
        if api_key_env is not None:
            api_key = os.environ.get(api_key_env)
            if not api_key:
                raise LLMError(
                    f"environment variable {api_key_env} is not set (or is empty); export "
                    f"it with the API key for {required('base_url')}, or set "
                    "llm.api_key_env to the variable that holds the key"
                )
        return cls(
            required("base_url"),
            required("model"),
            api_key,
            price_input_per_1k=required("price_input_per_1k"),
            price_output_per_1k=required("price_output_per_1k"),
            api_key_env=api_key_env,
            **kwargs,
        )

    def __repr__(self) -> str:
        return f"OpenAICompatibleLLM(base_url={self.base_url!r}, model={self.model!r})"

    def close(self) -> None:
        """Close the HTTP connections; the client cannot be used afterwards."""
        if self._client_obj is not None:
            self._client_obj.close()

    def __enter__(self) -> OpenAICompatibleLLM:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def cost_usd(self, input_tokens: int, output_tokens: int) -> float:
        """The price of a call that used these many tokens."""
        return (
            input_tokens * self.price_input_per_1k + output_tokens * self.price_output_per_1k
        ) / 1000.0

    # -- one plan --------------------------------------------------------------------

    supports_attempt = True  # generate_plan takes attempt= (the cache keys on it)

    def request_parts(self, request: PlanRequest, attempt: int = 0) -> dict[str, Any]:
        """Everything that decides the answer to ``request``: what the cache keys on."""
        return {
            "base_url": self.base_url,
            "model": self.model,
            "messages": build_messages(request),
            "response_format": self._response_format(request),
            "params": self.params,
            "attempt": int(attempt),
        }

    @staticmethod
    def _response_format(request: PlanRequest) -> dict[str, Any]:
        return {"type": "json_schema", "json_schema": {"name": "plan", "schema": request.json_schema, "strict": False}}

    def generate_plan(self, request: PlanRequest, *, attempt: int = 0) -> LLMResult:
        """Ask the model for a plan for ``request``, retrying transient failures.

        ``attempt`` is the repeat index: with a cache, each attempt is its own entry."""
        started = time.monotonic()
        key = None
        if self.cache is not None:
            from pytest_nl2sql.llm.cache import cache_key

            key = cache_key(self.request_parts(request, attempt))
            entry = self.cache.get(key)
            if entry is not None:
                return self._parse(
                    entry["content"], entry["refusal"], entry["finish_reason"], entry["model"],
                    0, 0, time.monotonic() - started, cached=True,
                )
        messages = build_messages(request)
        response_format = self._response_format(request)
        tries = 0
        while True:
            try:
                with self._limits.deadline(self.timeout_s):
                    completion = self._client.chat.completions.create(
                        model=self.model, messages=messages, response_format=response_format, **self.params
                    )
            except Exception as exc:  # every failure becomes an LLMError
                error, retry_after = self._classify(exc)
                if not error.retryable:
                    raise error from None
                if tries >= self.max_retries:
                    raise self._exhausted(error, tries + 1) from None
                time.sleep(self._wait_s(tries, retry_after))
                tries += 1
                continue
            try:
                return self._result(completion, time.monotonic() - started, key)
            except LLMError:
                raise
            except Exception as exc:  # an answer the parser did not expect: still an LLMError
                raise LLMError(
                    f"LLM server at {self.base_url} answered with a completion that cannot be read "
                    f"({type(exc).__name__}: {self._redact(str(exc))[:_SNIPPET]})",
                    kind="response",
                ) from None

    def _result(self, completion: Any, latency_s: float, key: str | None = None) -> LLMResult:
        """Turn a completion into an LLMResult, or raise an LLMError that keeps its cost."""
        usage = getattr(completion, "usage", None)
        input_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        output_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        model = getattr(completion, "model", None) or self.model
        choices = getattr(completion, "choices", None) or []
        if not choices:
            raise LLMError(
                f"model {model!r} at {self.base_url} returned no choices",
                input_tokens=input_tokens, output_tokens=output_tokens,
                cost_usd=self.cost_usd(input_tokens, output_tokens), kind="response",
            )
        message = choices[0].message
        finish_reason = getattr(choices[0], "finish_reason", None)
        refusal = getattr(message, "refusal", None)
        raw = message.content or ""
        if key is not None and self.cache is not None and isinstance(raw, str):
            self.cache.put(
                key, content=raw, model=str(model), usage=(max(0, input_tokens), max(0, output_tokens)),
                refusal=refusal if isinstance(refusal, str) else None,
                finish_reason=finish_reason if isinstance(finish_reason, str) else None,
            )
        return self._parse(raw, refusal, finish_reason, model, input_tokens, output_tokens, latency_s)

    def _parse(
        self, raw: str, refusal: Any, finish_reason: Any, model: str,
        input_tokens: int, output_tokens: int, latency_s: float, *, cached: bool = False,
    ) -> LLMResult:
        """The plan in an answer (fresh or cached), or an LLMError that keeps its cost."""
        cost = self.cost_usd(input_tokens, output_tokens)

        def fail(message: str) -> LLMError:
            return LLMError(
                f"model {model!r} at {self.base_url} {message}",
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                cost_usd=cost,
                kind="response",
                cached=cached,
            )

        if refusal:
            raise fail(f"refused to answer: {self._redact(refusal)[:_SNIPPET]!r}")
        if not raw.strip():
            raise fail("returned an empty answer instead of a plan object")
        try:
            plan = json.loads(_strip_code_fence(raw))
        except (ValueError, RecursionError):
            cut = (
                " (the answer was cut off at the token limit)" if finish_reason == "length" else ""
            )
            raise fail(
                f"answered with text that is not JSON{cut}; a plan must be one JSON object. "
                f"First {_SNIPPET} characters: {self._redact(raw)[:_SNIPPET]!r}"
            ) from None
        if not isinstance(plan, dict):
            raise fail(
                f"answered with a JSON {type(plan).__name__}, but a plan must be a JSON object "
                f"({{...}}). First {_SNIPPET} characters: {self._redact(raw)[:_SNIPPET]!r}"
            )
        return LLMResult(
            plan=plan,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=cost,
            latency_s=latency_s,
            model=model,
            raw=raw,
            cached=cached,
        )

    # -- failures --------------------------------------------------------------------

    def _classify(self, exc: Exception) -> tuple[LLMError, float | None]:
        """Map an exception from the openai package to an LLMError and a Retry-After."""
        openai = self._openai
        where = f"LLM server at {self.base_url}"
        cause = _root(exc)
        if isinstance(cause, self._limits.ResponseTooLarge):
            return LLMError(
                f"{where} answered with a body over the {_size(self.max_response_bytes)} limit "
                "(a plan is a few KiB); is base_url an OpenAI-compatible API?",
                kind="response",
            ), None
        if isinstance(cause, self._limits.UnsupportedEncoding):
            return LLMError(f"{where} failed: {cause}", kind="response"), None
        if isinstance(exc, openai.APITimeoutError):
            return LLMError(
                f"{where} did not answer within timeout_s={self.timeout_s:g} s "
                "(the whole request, its body included)",
                retryable=True,
                kind="timeout",
            ), None
        if isinstance(exc, openai.APIConnectionError):
            return LLMError(
                f"could not connect to the {where}; is it running and is base_url right?",
                retryable=True,
                kind="connection",
            ), None
        if isinstance(exc, openai.APIStatusError):
            return self._status_error(exc), _retry_after_s(exc.response.headers)
        if isinstance(exc, openai.APIResponseValidationError | ValueError):
            return LLMError(
                f"{where} answered with something that is not a chat completion; base_url "
                "must point at an OpenAI-compatible API (it usually ends in /v1)",
                kind="response",
            ), None
        if isinstance(exc, openai.OpenAIError):
            return LLMError(f"{where} failed: {self._redact(str(exc))[:_SNIPPET]}"), None
        if isinstance(exc, MemoryError | RecursionError):
            return LLMError(f"{where} answered with something too large or too deeply nested to read"), None
        return LLMError(f"{where} failed: {type(exc).__name__}: {self._redact(str(exc))[:_SNIPPET]}"), None

    def _status_error(self, exc: Any) -> LLMError:
        status = int(exc.status_code)
        detail = self._server_message(exc)
        where = f"LLM server at {self.base_url}"
        said = f"HTTP {status}: {detail}" if detail else f"HTTP {status}"
        retryable = status in (408, 429) or status >= 500
        if retryable:
            text = f"{where} answered {said}"
        elif status == 401:
            text = f"{where} rejected {self._key_hint} ({said}); check that the key is valid"
        elif status == 403:
            text = f"{where} refused access ({said}); the key may lack access to model {self.model!r}"
        elif status == 404:
            text = (
                f"{where} has no model {self.model!r} or no chat-completions endpoint "
                f"({said}); check llm.model and llm.base_url (it usually ends in /v1)"
            )
        elif status in (400, 422):
            text = (
                f"{where} rejected the request ({said}); the server or model may not "
                "support structured output (response_format json_schema)"
            )
        else:
            text = f"{where} answered {said}"
        if status in (401, 403):
            kind = "auth"
        elif status == 429:
            kind = "rate_limit"
        elif status >= 500:
            kind = "server"
        elif status == 408:
            kind = "timeout"
        else:
            kind = "request"
        return LLMError(text, retryable=retryable, status=status, kind=kind)

    def _exhausted(self, error: LLMError, attempts: int) -> LLMError:
        """The error raised once retries run out: the last failure and how often it happened."""
        return LLMError(
            f"{error.message}; gave up after {attempts} attempts (max_retries="
            f"{self.max_retries})",
            retryable=True,
            status=error.status,
            kind=error.kind,
        )

    def _server_message(self, exc: Any) -> str:
        body = getattr(exc, "body", None)
        message = None
        if isinstance(body, Mapping):
            inner = body.get("error", body)
            message = inner.get("message") if isinstance(inner, Mapping) else inner
        if message is None:
            message = getattr(exc, "message", None) or ""
        return self._redact(str(message))[:_SNIPPET]

    def _redact(self, text: str) -> str:
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text

    def _wait_s(self, attempt: int, retry_after: float | None) -> float:
        wait = retry_after if retry_after is not None else self.backoff_s * (2**attempt)
        return max(0.0, min(wait, self.max_wait_s))


def _root(exc: BaseException) -> BaseException:
    """The first exception of the chain that caused ``exc`` (or ``exc``)."""
    seen = 0
    while exc.__cause__ is not None and seen < 10:
        exc = exc.__cause__
        seen += 1
    return exc


def _size(n: int) -> str:
    if n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)} MiB"
    if n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} bytes"


def _retry_after_s(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``Retry-After``), if any."""
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return float(value) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return when.timestamp() - time.time()


def _strip_code_fence(text: str) -> str:
    """Drop a Markdown code fence some local models put around JSON despite the prompt."""
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```") and "\n" in stripped:
        stripped = stripped[stripped.index("\n") + 1 : -3]
    return stripped

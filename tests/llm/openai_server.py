"""A real, scriptable OpenAI-compatible HTTP server for tests.

It listens on ``127.0.0.1`` on a free port (port 0, so parallel test processes never
collide) and speaks the chat-completions wire format, so the official ``openai`` client
talks to it exactly as it would to OpenAI, vLLM, Ollama or llama.cpp.

Endpoints
    ``POST /v1/chat/completions``  a completion whose ``choices[0].message.content`` is a
                                   JSON plan, with a ``usage`` block.
    ``GET /v1/models``             lists the server's model.
    anything else                  404 in OpenAI's error format.

Use
    ::

        from tests.llm.openai_server import OpenAITestServer, ScriptedResponse

        with OpenAITestServer(plan_producer=lambda req: {"kind": "sql", "sql": "SELECT 1"}) as srv:
            srv.script(ScriptedResponse(status=429, headers={"Retry-After": "0"}))
            client = OpenAICompatibleLLM(srv.base_url, "m", "sk-test", ...)
            ...
            assert srv.requests[0].authorization == "Bearer sk-test"

    or take the ``openai_server`` fixture from ``tests/llm/conftest.py`` (already started,
    stopped after the test).

Scripting
    :meth:`OpenAITestServer.script` queues :class:`ScriptedResponse` objects; each
    chat-completions request takes the next one.  When the queue is empty the server
    answers 200 with ``plan_producer(request_json)`` and the default usage
    (``prompt_tokens``/``completion_tokens`` given to the constructor).  A scripted
    response may set the status, extra headers (``Retry-After``), the plan, raw message
    content (for invalid JSON), a whole raw body, the usage (``None`` leaves the block
    out) and a delay before answering (to provoke client timeouts) It may also misbehave on
    purpose: ``trickle_s`` sends the answer one byte every ``trickle_s`` seconds (with
    ``trickle_headers`` the status line and headers too, else only the body), and ``endless``
    sends headers without a length and then a body that never ends (until the client hangs up
    or the server stops).

Recording
    :attr:`OpenAITestServer.requests` lists every request received, in order, as
    :class:`RecordedRequest` (method, path, lower-cased headers, body, parsed JSON).
    :attr:`OpenAITestServer.completion_requests` keeps only the chat-completions ones.

Stopping the server wakes any delayed handler at once, so a test never waits out a delay.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "DEFAULT_MODEL",
    "OpenAITestServer",
    "PlanProducer",
    "RecordedRequest",
    "ScriptedResponse",
    "default_plan",
]

DEFAULT_MODEL = "test-model"

PlanProducer = Callable[[dict[str, Any]], dict[str, Any]]

_UNSET: Any = object()


def default_plan(request_json: dict[str, Any]) -> dict[str, Any]:
    """The plan served when no producer is given: a fixed, valid-looking SQL plan."""
    return {"kind": "sql", "sql": "SELECT 1 AS one"}


@dataclass(frozen=True)
class ScriptedResponse:
    """One scripted answer to one chat-completions request.

    Precedence for the body: ``body`` (sent verbatim; a dict/list is JSON-encoded) over
    ``content`` (raw ``message.content``) over ``plan`` (JSON-encoded into the content)
    over the server's ``plan_producer``.  A status of 400 or more with no ``body`` gets an
    OpenAI-style error object.  ``usage`` is ``(prompt_tokens, completion_tokens)``;
    leave it unset for the server's defaults, or pass ``None`` to omit the block.
    """

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    plan: dict[str, Any] | None = None
    content: str | None = None
    body: bytes | str | dict[str, Any] | list[Any] | None = None
    usage: tuple[int, int] | None = _UNSET
    delay_s: float = 0.0
    model: str | None = None
    finish_reason: str = "stop"
    trickle_s: float = 0.0
    trickle_headers: bool = False
    endless: bool = False


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server received it; header names are lower-cased."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any

    @property
    def authorization(self) -> str | None:
        """The ``Authorization`` header, e.g. ``'Bearer sk-...'``, or None."""
        return self.headers.get("authorization")

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages of a chat-completions request (empty otherwise)."""
        if isinstance(self.json, dict):
            return list(self.json.get("messages") or [])
        return []


class OpenAITestServer:
    """A local OpenAI-compatible server that answers from a script (see module docstring)."""

    def __init__(
        self,
        plan_producer: PlanProducer | None = None,
        *,
        model: str = DEFAULT_MODEL,
        prompt_tokens: int = 120,
        completion_tokens: int = 30,
    ) -> None:
        self.plan_producer: PlanProducer = plan_producer or default_plan
        self.model = model
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self._lock = threading.Lock()
        self._recorded = threading.Condition(self._lock)  # notified on each request recorded
        self.connections = 0  # connections accepted (a client that timed out early may send no request)
        self._script: deque[ScriptedResponse] = deque()
        self._requests: list[RecordedRequest] = []
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> OpenAITestServer:
        """Bind to a free port on 127.0.0.1 and serve in a background thread."""
        if self._httpd is not None:
            return self
        handler = type("_BoundHandler", (_Handler,), {"server_state": self})
        self._stopping.clear()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"openai-test-server:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake delayed handlers and release the port."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> OpenAITestServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- addresses -------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The port the server listens on (only once started)."""
        if self._httpd is None:
            raise RuntimeError("OpenAITestServer is not started; call start() or use 'with'")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """The ``base_url`` to give an OpenAI client, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting and recording -----------------------------------------------------

    def script(self, *responses: ScriptedResponse) -> None:
        """Queue responses; each chat-completions request takes the next one."""
        with self._lock:
            self._script.extend(responses)

    @property
    def pending(self) -> int:
        """How many scripted responses have not been served yet."""
        with self._lock:
            return len(self._script)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def completion_requests(self) -> list[RecordedRequest]:
        """Only the ``POST /v1/chat/completions`` requests, oldest first."""
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def wait_for_connections(self, count: int, *, limit_s: float = 60.0) -> int:
        """The connections accepted, once ``count`` were (or ``limit_s`` passed). A client
        that gives up after a short timeout has connected, but under load it may give up
        before its request is written, and the server may accept the connection only later:
        a test that counts a client's attempts counts connections, and waits for them here."""
        with self._recorded:
            self._recorded.wait_for(lambda: self.connections >= count, timeout=limit_s)
            return self.connections

    # -- used by the handler ---------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)
            self._recorded.notify_all()

    def _next_scripted(self) -> ScriptedResponse:
        with self._lock:
            if self._script:
                return self._script.popleft()
        return ScriptedResponse()

    def _completion_body(self, scripted: ScriptedResponse, request_json: Any) -> bytes:
        """Build the response body for a chat-completions request."""
        if scripted.body is not None:
            if isinstance(scripted.body, bytes):
                return scripted.body
            if isinstance(scripted.body, str):
                return scripted.body.encode()
            return json.dumps(scripted.body).encode()
        if scripted.status >= 400:
            return json.dumps(_error_object(scripted.status)).encode()
        if scripted.content is not None:
            content = scripted.content
        else:
            plan = scripted.plan
            if plan is None:
                plan = self.plan_producer(request_json if isinstance(request_json, dict) else {})
            content = json.dumps(plan)
        completion: dict[str, Any] = {
            "id": f"chatcmpl-test-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": scripted.model or _requested_model(request_json) or self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": scripted.finish_reason,
                }
            ],
        }
        usage = scripted.usage
        if usage is _UNSET:
            usage = (self.prompt_tokens, self.completion_tokens)
        if usage is not None:
            prompt, completion_tokens = usage
            completion["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt + completion_tokens,
            }
        return json.dumps(completion).encode()


def _requested_model(request_json: Any) -> str | None:
    if isinstance(request_json, dict) and isinstance(request_json.get("model"), str):
        return request_json["model"]
    return None


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_exceeded",
}


def _error_object(status: int, message: str | None = None) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(status, "server_error")
    return {
        "error": {
            "message": message or f"scripted error {status}",
            "type": kind,
            "param": None,
            "code": kind,
        }
    }


class _Handler(BaseHTTPRequestHandler):
    """Serves one connection; ``server_state`` is set on a per-server subclass."""

    server_state: OpenAITestServer
    protocol_version = "HTTP/1.0"

    def setup(self) -> None:
        super().setup()
        state = self.server_state
        with state._lock:
            state.connections += 1  # every connection accepted, whether a request came or not
            state._recorded.notify_all()

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _record(self, body: bytes) -> Any:
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        self.server_state._record(
            RecordedRequest(
                method=self.command,
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                json=parsed,
            )
        )
        return parsed

    def _send(self, status: int, body: bytes, headers: Mapping[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout); nothing left to tell it

    def do_GET(self) -> None:
        self._record(b"")
        state = self.server_state
        if self.path.rstrip("/") == "/v1/models":
            body = {
                "object": "list",
                "data": [{"id": state.model, "object": "model", "created": 0, "owned_by": "test"}],
            }
            self._send(200, json.dumps(body).encode())
        else:
            self._send(404, json.dumps(_error_object(404, f"no route {self.path}")).encode())

    def do_POST(self) -> None:
        body = self._read_body()
        parsed = self._record(body)
        state = self.server_state
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, json.dumps(_error_object(404, f"no route {self.path}")).encode())
            return
        if not isinstance(parsed, dict):
            self._send(400, json.dumps(_error_object(400, "body is not a JSON object")).encode())
            return
        scripted = state._next_scripted()
        if scripted.delay_s > 0 and state._stopping.wait(scripted.delay_s):
            return  # server is stopping: drop the connection without an answer
        body = state._completion_body(scripted, parsed)
        if scripted.endless:
            self._send_endless(scripted.status, scripted.headers)
        elif scripted.trickle_s > 0:
            self._send_trickle(scripted.status, body, scripted.headers, scripted.trickle_s, scripted.trickle_headers)
        else:
            self._send(scripted.status, body, scripted.headers)

    def _head(self, status: int, headers: Mapping[str, str], length: int | None) -> bytes:
        lines = [f"HTTP/1.0 {status} {'OK' if status < 400 else 'Error'}", "Content-Type: application/json"]
        if length is not None:
            lines.append(f"Content-Length: {length}")
        lines += [f"{name}: {value}" for name, value in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    def _send_trickle(self, status: int, body: bytes, headers: Mapping[str, str], every_s: float, with_headers: bool) -> None:
        """One byte every ``every_s`` seconds: of the body, or of the whole answer."""
        head = self._head(status, headers, len(body))
        stopping = self.server_state._stopping
        try:
            if not with_headers:
                self.wfile.write(head)
                self.wfile.flush()
            for byte in ((head + body) if with_headers else body):
                if stopping.wait(every_s):
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _send_endless(self, status: int, headers: Mapping[str, str]) -> None:
        """Headers without a length, then a body that never ends."""
        chunk = b'{"padding": "' + b"x" * 65536
        stopping = self.server_state._stopping
        try:
            self.wfile.write(self._head(status, headers, None))
            while not stopping.is_set():
                self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass

"""Hard limits on one HTTP exchange with an LLM server: a deadline and a body cap.

``timeout_s`` of the HTTP stack bounds each socket operation, not the request: a server that
sends one byte a second never trips it. So the client sets a *deadline* for the whole request
(connect, TLS, sending, the response headers and the body) in a context variable, and every
socket operation of its connection pool is given at most the time left until then; once it has
passed, the next operation times out at once. The body is read through a counter that stops at
``max_bytes`` (checked against ``Content-Length`` first, and after decompression, so a small
gzip bomb is as bounded as an endless body).

Imported only by ``OpenAICompatibleLLM`` (it needs the optional ``openai`` package's HTTP
stack, ``httpx2``/``httpcore2``).
"""

from __future__ import annotations

import contextlib
import contextvars
import time
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore2
import httpx2

__all__ = ["DeadlineExceeded", "ResponseTooLarge", "deadline", "install", "response_hook"]

#: The request's budget: ``[seconds, at]``, ``at`` set by its first socket operation.
_DEADLINE: contextvars.ContextVar[list[float | None] | None] = contextvars.ContextVar("nl2sql_llm_deadline", default=None)


class ResponseTooLarge(httpx2.TransportError):
    """The answer's body is over the client's cap (an error of the transport, never retried)."""

    def __init__(self, limit: int, seen: int | None = None) -> None:
        self.limit = limit
        self.seen = seen
        super().__init__(f"the response body is over {limit} bytes")


class UnsupportedEncoding(httpx2.TransportError):
    """The server compressed the answer in a way the client cannot bound (not gzip/deflate)."""


class DeadlineExceeded(httpx2.ReadTimeout):
    """The whole request ran past its deadline."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Within the block, every socket operation of an installed pool ends by ``seconds`` after
    the request's first one (its connect): the time the HTTP stack spends building the request
    in this process is not the server's, and under load it could spend the whole budget
    before the request is even sent."""
    token = _DEADLINE.set([seconds, None])
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    budget = _DEADLINE.get()
    if budget is None:
        return timeout
    if budget[1] is None:
        budget[1] = time.monotonic() + float(budget[0] or 0.0)  # the clock starts at the first socket operation
    left = float(budget[1]) - time.monotonic()
    if left <= 0:
        raise error("the request ran past its deadline")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore2.NetworkStream):
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, _left(timeout, httpcore2.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> Any:
        left = _left(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_tcp(host, port, left, local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None) -> Any:
        left = _left(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def install(client: httpx2.Client) -> int:
    """Put the deadline under every connection pool of ``client`` (before its first request);
    return how many pools got it. (The pools are reached through httpx2's private attributes;
    where they are not found, the deadline is still checked between chunks of the body.)"""
    transports = [getattr(client, "_transport", None), *getattr(client, "_mounts", {}).values()]
    done = 0
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is None or isinstance(backend, _DeadlineBackend):
            continue
        pool._network_backend = _DeadlineBackend(backend)  # type: ignore[union-attr]
        done += 1
    return done


class _CappedStream(httpx2.SyncByteStream):
    def __init__(self, inner: Any, limit: int, encoding: str | None) -> None:
        self._inner = inner
        self._limit = limit
        # wbits 47: a zlib or gzip header, detected (HTTP "deflate" is zlib in practice)
        self._decoder = zlib.decompressobj(47) if encoding else None

    def __iter__(self) -> Iterator[bytes]:
        total = 0
        for chunk in self._inner:
            _left(None, DeadlineExceeded)
            if self._decoder is not None:
                try:
                    chunk = self._decoder.decompress(chunk, self._limit - total + 1)
                except zlib.error as exc:
                    raise httpx2.DecodingError(f"the compressed response is broken: {exc}") from None
            total += len(chunk)
            if total > self._limit:
                raise ResponseTooLarge(self._limit)
            yield chunk
        if self._decoder is not None:
            rest = self._decoder.flush()
            if total + len(rest) > self._limit:
                raise ResponseTooLarge(self._limit)
            if rest:
                yield rest

    def close(self) -> None:
        self._inner.close()


def response_hook(limit: int) -> Any:
    """An httpx2 response event hook that caps the body at ``limit`` bytes (decoded)."""

    def hook(response: httpx2.Response) -> None:
        length = response.headers.get("content-length")
        if length is not None and length.strip().isdigit() and len(length.strip()) < 20 and int(length) > limit:
            raise ResponseTooLarge(limit, int(length))
        encodings = [e.strip().lower() for e in response.headers.get_list("content-encoding", split_commas=True)]
        encodings = [e for e in encodings if e and e != "identity"]
        if len(encodings) > 1 or (encodings and encodings[0] not in ("gzip", "x-gzip", "deflate")):
            raise UnsupportedEncoding(f"the server compressed its answer as {', '.join(encodings)} (asked for none)")
        if encodings:
            del response.headers["content-encoding"]  # decoded (and counted) by the capped stream
        response.stream = _CappedStream(response.stream, limit, encodings[0] if encodings else None)

    return hook

"""A child process that takes Ctrl-C as a user's terminal gives it, whoever started the tests.

A shell without job control starts a background command (``cmd &`` in a script, ``nohup``) with
SIGINT ignored, and every process below inherits that across exec: a pytest child started from
such a test run ignores the SIGINT a test sends it, and the run it should stop goes on. Started
while this process handles SIGINT (in Python, so exec resets it to the default), the child gets
Python's own handler: KeyboardInterrupt, pytest's "Interrupted"."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["sigint_as_a_terminal_gives_it"]


@contextlib.contextmanager
def sigint_as_a_terminal_gives_it() -> Iterator[None]:
    """Around starting a child that a test will send SIGINT."""
    previous = signal.getsignal(signal.SIGINT)
    if previous != signal.SIG_IGN or threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)

"""Checks done ahead on a second core: a forked copy of this process works through a list of
items, in order, ahead of this process, which reads the results as it needs them.

Used by the replay engine in a serial run (engine/replay.py, ``--nl2sql-second-core``):
checking a prediction's SQL (the guard's and the validator's verdicts) is pure computation on
values this process already holds, so a copy of the process (``os.fork``) can check the run's
predictions one after the other while this one runs the items. What the helper computes
reaches this process the way a verdict from an earlier run does: as entries of the verdict
store (datasources.memo.STORE), sent back as JSON lines through a pipe, one line per item, in
the items' order. Before an item is answered, this process reads the lines up to that item's;
the verdicts are then looked up, not computed, and this process imports no sqlglot at all.

The helper is only ever waited for while it makes progress: when no line comes for
:data:`STALL_S` seconds, or the helper ends early, it is stopped and this process checks the
rest itself, as without a helper. The helper writes nothing but the pipe (no file, no
terminal, no store flush), opens no database (the engine refuses to, in a copy) and leaves with
``os._exit``, so nothing of the parent's (pytest's buffers, atexit handlers, open connections)
runs twice; it is killed and reaped when this process is done with it, and at the latest when
this process exits. Linux only (a forked copy of a process that uses macOS system frameworks is
not safe), and only where the process may use two CPUs.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import warnings
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["MIN_ITEMS", "STALL_S", "Helper", "available"]

#: Fewer items than this are checked here alone: a fork costs more than it saves.
MIN_ITEMS = 16
#: Seconds without a line from the helper, while this process waits for one, before it is
#: stopped and this process checks the rest itself (one check is bounded far below this).
STALL_S = 10.0
_READ = 1 << 16
_PIPE_BYTES = 1 << 20  # F_SETPIPE_SZ: the helper runs ahead without waiting for a reader


def available() -> bool:
    """Whether a helper can run: Linux, ``os.fork``, and two CPUs this process may use."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except (AttributeError, OSError):
        return (os.cpu_count() or 1) >= 2


class Helper:
    """A forked copy of this process doing ``work(0)`` .. ``work(count - 1)`` in order, each
    followed by ``take()`` (what the item computed, JSON) sent back; see the module doc."""

    def __init__(self, pid: int, read_end: int) -> None:
        self.pid = pid
        self._fd = read_end
        self._pending = b""
        self.received = 0  # items 0 .. received - 1 have been handed over
        self.ended = False
        self._poll: Any = None
        self._finalizer = weakref.finalize(self, _end, pid, read_end)

    @classmethod
    def start(cls, count: int, work: Callable[[int], None], take: Callable[[], Any]) -> Helper | None:
        """Fork a helper for ``count`` items, or None (too few items, no second CPU, no fork).
        ``work`` must never raise; the helper discards what ``take()`` holds at the fork."""
        if count < MIN_ITEMS or not available():
            return None
        try:
            read_end, write_end = os.pipe()
        except OSError:
            return None
        try:
            import fcntl

            fcntl.fcntl(write_end, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
        except (ImportError, OSError):
            pass  # a smaller pipe: the helper waits for this process to read
        with warnings.catch_warnings():  # Python 3.12+ warns on fork with other threads alive
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                pid = os.fork()
            except OSError:
                pid = -1
        if pid == 0:
            _helper(count, work, take, read_end, write_end)  # never returns
        os.close(write_end)
        if pid < 0:
            os.close(read_end)
            return None
        return cls(pid, read_end)

    def wait_for(self, index: int, give: Callable[[Any], None]) -> bool:
        """Hand ``give`` every line that has come, waiting (while the helper makes progress) until
        item ``index``'s has. False when it will not come: the helper ended or stalled (it is
        stopped), and this process checks the item itself."""
        while self.received <= index:
            if self.ended:
                return False
            if self._poll is None:  # poll, not select: a busy process's descriptors pass 1024
                self._poll = select.poll()
                self._poll.register(self._fd, select.POLLIN)
            ready = self._poll.poll(STALL_S * 1000)
            if not ready or not self._read(give):
                self.stop()
                return False
        return True

    def _read(self, give: Callable[[Any], None]) -> bool:
        """Read what the pipe holds (it is readable) and hand over the whole lines; False at
        its end (the helper has ended)."""
        try:
            chunk = os.read(self._fd, _READ)
        except OSError:
            chunk = b""
        if not chunk:
            return False
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines.pop()
        for raw in lines:
            try:
                index, found = json.loads(raw)
            except (ValueError, TypeError):
                return False  # not what the helper writes: stop trusting the pipe
            if index != self.received:
                return False
            give(found)
            self.received += 1
        return True

    def stop(self) -> None:
        """Kill and reap the helper (it may have ended already); nothing more is read."""
        self.ended = True
        self._finalizer()


def _helper(count: int, work: Callable[[int], None], take: Callable[[], Any], read_end: int, write_end: int) -> None:
    try:
        os.close(read_end)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends the helper too, quietly
        take()  # what this process computed before the fork is not the helper's to send
        for i in range(count):
            work(i)
            line = json.dumps([i, take()], separators=(",", ":")).encode("utf-8", "surrogatepass") + b"\n"
            view = memoryview(line)
            while view:
                view = view[os.write(write_end, view):]
    except BaseException:  # noqa: BLE001,S110 -- this process checks whatever is not sent
        pass
    finally:
        os._exit(0)


def _end(pid: int, read_end: int) -> None:
    try:
        os.close(read_end)
    except OSError:
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        os.waitpid(pid, 0)
    except OSError:
        pass

"""A batch of independent checks on two cores: this process from the front, a forked helper
from the back, until they meet.

Used by the replay engine's ``prepare_cases`` in a serial run (engine/replay.py): checking a
prediction's SQL (the guard's and the validator's verdicts) is pure computation on values this
process already holds, so a copy of the process (``os.fork``) can compute the verdicts of the
batch's last items while this one computes the first. What the helper computes reaches this
process the way a verdict from an earlier run does: as entries of the verdict store
(datasources.memo.STORE), sent back as JSON lines through a pipe, one line per item done.

This process never waits for the helper: before each of its own items it reads whatever the
helper has sent (without blocking), and it stops when the next item is one the helper has done.
A helper that is slow, stuck or dead only leaves more items to this process; at the end the
helper is killed and reaped. The helper writes nothing but the pipe (no file, no terminal, no
store flush) and leaves with ``os._exit``, so nothing of the parent's (pytest's buffers,
atexit handlers, open databases) runs twice. Linux only (a forked copy of a process that
uses macOS system frameworks is not safe), and only where the process may use two CPUs.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["MIN_ITEMS", "available", "split"]

#: Fewer items than this are checked here alone: a fork costs more than it saves.
MIN_ITEMS = 16
_READ = 1 << 16


def available() -> bool:
    """Whether a helper can run: Linux, ``os.fork``, and two CPUs this process may use."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except (AttributeError, OSError):
        return (os.cpu_count() or 1) >= 2


def split(count: int, work: Callable[[int], None], take: Callable[[], Any], give: Callable[[Any], None]) -> int:
    """Call ``work(i)`` for each ``i`` in ``range(count)``: here from 0 up, in a forked helper from
    ``count - 1`` down (module doc). After each of its items the helper sends ``take()`` (what
    the item computed, JSON); here each of those is handed to ``give``. Returns how many items
    the helper did. ``work`` must never raise."""
    if count < MIN_ITEMS or not available():
        for i in range(count):
            work(i)
        return 0
    work(0)  # here first: what the checks import and load is then the helper's too
    try:
        read_end, write_end = os.pipe()
    except OSError:
        read_end = -1
    if read_end < 0:
        for i in range(1, count):
            work(i)
        return 0
    with warnings.catch_warnings():  # Python 3.12+ warns on fork with other threads alive
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            pid = os.fork()
        except OSError:
            pid = -1
    if pid == 0:  # the helper
        _helper(count, work, take, read_end, write_end)  # never returns
    os.close(write_end)
    if pid < 0:
        os.close(read_end)
        for i in range(1, count):
            work(i)
        return 0
    return _front(count, work, give, pid, read_end)


def _helper(count: int, work: Callable[[int], None], take: Callable[[], Any], read_end: int, write_end: int) -> None:
    try:
        os.close(read_end)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends the helper too, quietly
        take()  # what this process computed before the fork is not the helper's to send
        for i in range(count - 1, 0, -1):
            work(i)
            line = json.dumps([i, take()], separators=(",", ":")).encode("utf-8", "surrogatepass") + b"\n"
            view = memoryview(line)
            while view:
                view = view[os.write(write_end, view):]
    except BaseException:  # noqa: BLE001,S110 -- the parent does whatever is not sent
        pass
    finally:
        os._exit(0)


def _front(count: int, work: Callable[[int], None], give: Callable[[Any], None], pid: int, read_end: int) -> int:
    os.set_blocking(read_end, False)
    low = count  # the lowest item the helper has done
    pending = b""
    ended = False
    helped = 0
    try:
        for i in range(1, count):
            if not ended:
                chunk, ended = _drain(read_end)
                pending += chunk
                lines = pending.split(b"\n")
                pending = lines.pop()
                for raw in lines:
                    done = _parse(raw)
                    if done is None:
                        continue
                    give(done[1])
                    helped += 1
                    low = min(low, done[0])
            if i >= low:
                break
            work(i)
    finally:
        os.close(read_end)
        _end(pid)
    return helped


def _drain(fd: int) -> tuple[bytes, bool]:
    """What the pipe holds now, and whether the helper has closed it."""
    parts = []
    while True:
        try:
            chunk = os.read(fd, _READ)
        except BlockingIOError:
            return b"".join(parts), False
        except OSError:
            return b"".join(parts), True
        if not chunk:
            return b"".join(parts), True
        parts.append(chunk)


def _parse(raw: bytes) -> tuple[int, Any] | None:
    try:
        done = json.loads(raw)
    except ValueError:
        return None
    if type(done) is not list or len(done) != 2 or type(done[0]) is not int:
        return None
    return done[0], done[1]


def _end(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        os.waitpid(pid, 0)
    except OSError:
        pass

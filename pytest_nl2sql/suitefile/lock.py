"""Writing a suite file safely: the inter-process lock and the atomic write.

Every write is atomic (temporary file in the same folder, fsync, ``os.replace``) and done under
an inter-process lock, so a crash or a second writer never leaves a truncated or interleaved
file. The lock is keyed on the file's real path, so writers that reach one file through a
symlinked file or folder share it; a symlink is written through (its target is replaced, the
link stays). Waiting for the lock is bounded (``LOCK_TIMEOUT_S``, 60 s, or
``$NL2SQL_LOCK_TIMEOUT_S``) and ends in a one-line ``LockTimeout``. A temporary file is removed
on every error, and one left behind by a killed process (its name carries the pid) is removed
by the next write to the same file.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import socket
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from pytest_nl2sql.errors import LockTimeout, Nl2sqlError

__all__ = ["CACHE_MAX_AGE_S", "LOCK_TIMEOUT_S", "TOUCH_AFTER_S", "SuiteLock", "lock_for", "lock_timeout_s", "real_path", "remove_stale_temps", "remove_unused", "replace_bytes", "replace_with", "temp_prefix", "touch_if_old", "write_atomic", "write_atomic_with"]

# -- files -----------------------------------------------------------------------------


#: Seconds a writer waits for another process's lock on the same file before it gives up
#: with a one-line ``LockTimeout`` (override with NL2SQL_LOCK_TIMEOUT_S).
LOCK_TIMEOUT_S = 60.0


def lock_timeout_s() -> float:
    value = os.environ.get("NL2SQL_LOCK_TIMEOUT_S", "")
    try:
        seconds = float(value)
    except ValueError:
        return LOCK_TIMEOUT_S
    return seconds if math.isfinite(seconds) and seconds >= 0 else LOCK_TIMEOUT_S


def real_path(path: str | os.PathLike[str]) -> Path:
    """The file a path names once every symlink (of the file or its folders) is followed."""
    return Path(os.path.realpath(path))


def _lock_folder() -> Path:
    """A lock folder of this user's own (mode 0700) in the system's temp folder."""
    user = str(os.getuid()) if hasattr(os, "getuid") else hashlib.sha256(os.path.expanduser("~").encode()).hexdigest()[:12]
    folder = Path(tempfile.gettempdir()) / f"pytest-nl2sql-locks-{user}"
    folder.mkdir(mode=0o700, exist_ok=True)
    if hasattr(os, "getuid"):
        st = os.lstat(folder)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            raise Nl2sqlError(f"{folder}: the lock folder is not a folder of yours; remove it and try again")
    return folder


class SuiteLock:
    """The inter-process lock of one file, keyed on its real path (so a symlinked file or
    folder shares the lock of its target). Waiting longer than ``timeout`` s raises
    ``LockTimeout`` with one line naming the file."""

    def __init__(self, path: str | os.PathLike[str], timeout: float | None = None) -> None:
        self.path = str(path)
        self.real = real_path(path)
        self.timeout = lock_timeout_s() if timeout is None else timeout
        digest = hashlib.sha256(str(self.real).encode()).hexdigest()[:32]
        self.lock_file = str(_lock_folder() / f"{digest}.lock")
        from filelock import FileLock  # here: a run that writes no file never imports it (~13 ms)

        self._lock = FileLock(self.lock_file, timeout=self.timeout)

    def acquire(self) -> SuiteLock:
        from filelock import Timeout

        try:
            self._lock.acquire()
        except Timeout:
            raise LockTimeout(
                f"{self.path}: another process is writing this file (waited {self.timeout:g} s for its lock "
                f"{self.lock_file}); try again once it is done, or raise NL2SQL_LOCK_TIMEOUT_S"
            ) from None
        return self

    def release(self) -> None:
        self._lock.release()

    @property
    def is_locked(self) -> bool:
        return self._lock.is_locked

    def __enter__(self) -> SuiteLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_for(path: str | os.PathLike[str], timeout: float | None = None) -> SuiteLock:
    """The inter-process lock that guards writes to one suite file (kept out of the repo)."""
    return SuiteLock(path, timeout)


# Temporary files: ``.<name>.<pid>@<host>.<random>.tmp`` beside the file they replace, so the
# next write can tell one left behind by a process that died (SIGKILL, power loss) and remove it.
_HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
_TMP = re.compile(r"\.(?P<pid>\d+)@(?P<host>[0-9a-f]{8})\.[^.]+\.tmp\Z")
#: A temporary file this old is stale whoever wrote it (another host, an older version).
STALE_TMP_S = 3600.0


def _pid_alive(pid: int) -> bool:
    if os.name == "nt":  # os.kill(pid, 0) would terminate the process there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists (another user's process)
    return True


def remove_stale_temps(target: str | os.PathLike[str]) -> list[str]:
    """Remove the temporary files of writes to ``target`` whose process is gone; return them."""
    target = Path(target)
    prefix = f".{target.name}."
    removed: list[str] = []
    try:
        names = [n for n in os.listdir(target.parent) if n.startswith(prefix) and n.endswith(".tmp")]
    except OSError:
        return removed
    now = time.time()
    for name in names:
        m = _TMP.match(name[len(prefix) - 1 :])
        full = target.parent / name
        try:
            age = now - os.lstat(full).st_mtime
        except OSError:
            continue
        if m is not None and m["host"] == _HOST:
            pid = int(m["pid"])
            stale = pid != os.getpid() and not _pid_alive(pid)
        else:
            stale = False
        if stale or age > STALE_TMP_S:
            try:
                os.unlink(full)
                removed.append(str(full))
            except OSError:
                pass
    return removed


def temp_prefix(target: Path) -> str:
    """The start of a temporary file's name for a write to ``target`` (see ``remove_stale_temps``)."""
    return f".{target.name}.{os.getpid()}@{_HOST}."


def replace_bytes(target: Path, data: bytes, *, durable: bool = False) -> None:
    """Replace the file ``target`` with ``data`` atomically (a temporary file in its folder,
    then ``os.replace``): readers see the old or the new bytes, never half. The temporary file
    is removed on every error, and one left by a killed process by the next write to ``target``
    (``remove_stale_temps``). ``durable`` also fsyncs the data and the folder and keeps the
    file's mode (suites); without it (caches) a crash may lose the write, never corrupt it."""
    replace_with(target, lambda fh: fh.write(data), durable=durable)


def replace_with(target: Path, fill: Callable[[BinaryIO], Any], *, durable: bool = False) -> None:
    """``replace_bytes`` with the bytes written by ``fill(file)`` (a report written as it is
    read back from the run's spool, never whole in memory)."""
    remove_stale_temps(target)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=temp_prefix(target), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fill(fh)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        if durable:
            try:
                os.chmod(tmp, os.stat(target).st_mode & 0o7777)
            except FileNotFoundError:
                os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        try:
            dfd = os.open(target.parent, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:
            pass


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) so readers see the old or the new file, never half.

    A symlink is written through: its target is replaced and the link stays a link. The
    temporary file is removed on every error; one left by a killed process is removed by the
    next write to the same file.
    """
    replace_bytes(real_path(path), text.encode("utf-8"), durable=True)


def write_atomic_with(path: str | os.PathLike[str], fill: Callable[[TextIO], Any]) -> None:
    """``write_atomic`` with the text written by ``fill(file)`` (UTF-8)."""
    import io

    def text(fh: BinaryIO) -> None:
        wrapper = io.TextIOWrapper(fh, encoding="utf-8", write_through=False)
        fill(wrapper)
        wrapper.flush()
        wrapper.detach()

    replace_with(real_path(path), text, durable=True)



#: How long a cache file nobody wrote (or read: ``touch_if_old``) is kept: a suite cache entry of
#: another package version or of a suite since renamed, a verdict file of another sqlglot, stays
#: this long after its last use, then the next write of its kind removes it (``remove_unused``).
CACHE_MAX_AGE_S = 30 * 24 * 3600.0
#: A read of a cache file older than this refreshes its time (``touch_if_old``).
TOUCH_AFTER_S = 24 * 3600.0


def touch_if_old(fd: int) -> None:
    """Refresh the time of the open cache file ``fd`` when it is older than ``TOUCH_AFTER_S``: a
    file in use is never taken for an unused one. A folder it may not change is left as it is."""
    try:
        if os.fstat(fd).st_mtime < time.time() - TOUCH_AFTER_S:
            os.utime(fd)
    except OSError:
        pass


def remove_unused(folder: Path, name: re.Pattern[str], *, keep: Callable[[str], bool],
                  at_once: Callable[[str], bool] = lambda _: False) -> list[str]:  # fmt: skip
    """Remove the files of ``folder`` whose whole name matches ``name`` and that ``keep`` does not
    keep: those ``at_once`` names whatever their age, the others once not modified for
    ``CACHE_MAX_AGE_S``. Nothing else in the folder is touched; a file that cannot be removed
    (gone already, another owner) is left. Returns the names removed."""
    removed = []
    cutoff = time.time() - CACHE_MAX_AGE_S
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not name.fullmatch(entry.name) or keep(entry.name):
            continue
        try:
            if not at_once(entry.name) and entry.stat(follow_symlinks=False).st_mtime >= cutoff:
                continue
            os.unlink(entry.path)
        except OSError:
            continue
        removed.append(entry.name)
    return removed

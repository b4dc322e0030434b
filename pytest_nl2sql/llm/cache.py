"""The response cache of mode full: an LLM answer already paid for is not asked again.

An entry is keyed on everything that decides the answer -- the base URL, the model, the chat
messages, the response format, every other request parameter and the *attempt* (the repeat
index of ``--nl2sql-repeat``, so K attempts are K entries) -- as the SHA-256 of their canonical
JSON. It stores what the server answered (the message content, a refusal, the finish reason,
the model and the usage), so a cached answer is parsed exactly as a fresh one.

What it protects against, and what not:

* **JSON, never pickle**: reading a cache folder cannot run code; an entry that is not the
  JSON this module writes (broken, cut short, another version) is only a miss.
* **No integrity check**: an entry edited in place, keeping the shape, is served as a hit.
  Whoever can write the folder can change the answers (and so the scores) of the runs that
  read it; keep it where only you can write. What it serves is still only a plan: it goes
  through the plan compiler, the statement guard and the validator for the role, exactly as a
  fresh answer does, so an edited entry cannot read or change more than a model could.
* **No symlinks followed inside the folder**: ``CACHEDIR.TAG`` is created only where nothing
  is (``O_CREAT | O_EXCL | O_NOFOLLOW``), an entry is read with ``O_NOFOLLOW``, and a
  two-letter folder that is a symlink (or not a folder) is neither read nor written -- a
  warning says so once per cache.
* **Atomic writes**: an entry is written to a temporary file in its folder and renamed into
  place, so xdist workers and threads sharing the folder never read half an entry; two
  writers of one key write the same answer's bytes, and the last rename wins.
* **Bounded**: an answer over ``MAX_ENTRY_BYTES`` is not stored, and once the folder holds
  more than ``max_entries`` entries or ``max_bytes`` bytes the least recently used ones go
  (a hit refreshes an entry's time) until it is back under 90 % of both.

Layout: ``<folder>/CACHEDIR.TAG`` and ``<folder>/<2 hex>/<64 hex>.json``. ``clear()`` removes
only files of that layout.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import threading
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_nl2sql.suitefile.lock import replace_bytes

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_ENTRIES", "MAX_ENTRY_BYTES", "ResponseCache", "cache_key"]

FORMAT = 1
#: The largest answer stored (a plan is a few KiB).
MAX_ENTRY_BYTES = 1024 * 1024
DEFAULT_MAX_ENTRIES = 100_000
DEFAULT_MAX_BYTES = 512 * 1024 * 1024
_NAME = re.compile(r"^[0-9a-f]{64}\.json$")
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# pytest-nl2sql response cache (pytest-nl2sql cache clear)\n"


def cache_key(parts: Mapping[str, Any]) -> str:
    """The SHA-256 (hex) of ``parts`` as canonical JSON (sorted keys, no whitespace)."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _valid(entry: Any) -> bool:
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        return False
    usage = entry.get("usage")
    return (
        isinstance(entry.get("content"), str)
        and isinstance(entry.get("model"), str)
        and (entry.get("refusal") is None or isinstance(entry.get("refusal"), str))
        and (entry.get("finish_reason") is None or isinstance(entry.get("finish_reason"), str))
        and isinstance(usage, list)
        and len(usage) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in usage)
    )


class ResponseCache:
    """A folder of cached LLM answers; see the module docstring. Thread-safe."""

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self.folder = Path(folder)
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        self.stores = 0
        self._lock = threading.Lock()
        self._size: tuple[int, int] | None = None  # (entries, bytes), counted on the first store
        self._warned = False

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.folder)!r})"

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def _not_followed(self, path: Path, what: str) -> None:
        with self._lock:
            if self._warned:
                return
            self._warned = True
        warnings.warn(
            f"pytest-nl2sql response cache: {path} is {what}; the cache does not follow it "
            "(those entries are neither read nor stored; remove it, or pytest-nl2sql cache clear)",
            stacklevel=3,
        )

    def _shard(self, key: str, *, create: bool) -> Path | None:
        """The entry's two-letter folder when it is a real folder (made if ``create``), else None."""
        shard = self.folder / key[:2]
        try:
            mode = os.lstat(shard).st_mode
        except FileNotFoundError:
            if not create:
                return None
            try:
                os.mkdir(shard)
                return shard
            except FileExistsError:
                return self._shard(key, create=False)
        if stat.S_ISLNK(mode):
            self._not_followed(shard, "a symlink")
            return None
        if not stat.S_ISDIR(mode):
            self._not_followed(shard, "not a folder")
            return None
        return shard

    # -- reading and writing ------------------------------------------------------------
    def get(self, key: str) -> dict[str, Any] | None:
        """The entry stored under ``key``, or None (a broken entry is a miss)."""
        path = self._path(key)
        entry: Any = None
        try:
            if self._shard(key, create=False) is not None:
                entry = json.loads(_read_nofollow(path, MAX_ENTRY_BYTES + 4096))
        except (OSError, ValueError, RecursionError):
            entry = None
        with self._lock:
            if _valid(entry):
                self.hits += 1
            else:
                self.misses += 1
                return None
        try:
            os.utime(path, follow_symlinks=False)  # least recently *used* goes first
        except (OSError, NotImplementedError):
            pass
        return entry

    def put(self, key: str, *, content: str, model: str, usage: tuple[int, int],
            refusal: str | None = None, finish_reason: str | None = None) -> bool:
        """Store an answer under ``key``; False when it is too large or cannot be written."""
        entry = {
            "format": FORMAT,
            "content": content,
            "refusal": refusal,
            "finish_reason": finish_reason,
            "model": model,
            "usage": [int(usage[0]), int(usage[1])],
        }
        data = json.dumps(entry, sort_keys=True, ensure_ascii=False).encode("utf-8")
        if len(data) > MAX_ENTRY_BYTES:
            return False
        path = self._path(key)
        try:
            self._tag()
            if self._shard(key, create=True) is None:
                return False
            replace_bytes(path, data)
        except OSError:
            return False
        with self._lock:
            self.stores += 1
            if self._size is None:
                self._size = self._count()
            else:
                self._size = (self._size[0] + 1, self._size[1] + len(data))
            over = self._size[0] > self.max_entries or self._size[1] > self.max_bytes
        if over:
            self.evict()
        return True

    def _tag(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tag = self.folder / "CACHEDIR.TAG"
        try:
            mode = os.lstat(tag).st_mode
        except FileNotFoundError:
            try:  # only where nothing is: never through a (dangling) symlink
                fd = os.open(tag, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
            except OSError:
                return
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(_TAG)
            return
        if stat.S_ISLNK(mode):
            self._not_followed(tag, "a symlink")


    # -- upkeep ----------------------------------------------------------------------
    def _entries(self) -> list[tuple[float, int, Path]]:
        out = []
        try:
            subs = [d for d in os.scandir(self.folder) if d.is_dir(follow_symlinks=False) and len(d.name) == 2]
        except OSError:
            return []
        for sub in subs:
            try:
                for f in os.scandir(sub.path):
                    if _NAME.match(f.name) and f.is_file(follow_symlinks=False):
                        st = f.stat(follow_symlinks=False)
                        out.append((st.st_mtime, st.st_size, Path(f.path)))
            except OSError:
                continue
        return out

    def _count(self) -> tuple[int, int]:
        entries = self._entries()
        return len(entries), sum(size for _, size, _ in entries)

    def evict(self) -> int:
        """Remove least recently used entries until under 90 % of both bounds; how many went."""
        entries = sorted(self._entries())
        count, total = len(entries), sum(size for _, size, _ in entries)
        removed = 0
        for _, size, path in entries:
            if count <= self.max_entries * 0.9 and total <= self.max_bytes * 0.9:
                break
            try:
                path.unlink()
            except OSError:
                continue
            count, total, removed = count - 1, total - size, removed + 1
        with self._lock:
            self._size = (count, total)
        return removed

    def stats(self) -> dict[str, Any]:
        """Entries and bytes on disk, and this process's hits, misses and stores."""
        entries = self._entries()
        return {
            "folder": str(self.folder),
            "entries": len(entries),
            "bytes": sum(size for _, size, _ in entries),
            "oldest": min((t for t, _, _ in entries), default=None),
            "newest": max((t for t, _, _ in entries), default=None),
            "hits": self.hits,
            "misses": self.misses,
            "stores": self.stores,
        }

    def clear(self) -> int:
        """Remove every entry (and temporary file) of this layout; return how many entries went."""
        removed = 0
        for _, _, path in self._entries():
            try:
                path.unlink()
                removed += 1
            except OSError:
                pass
        try:
            for sub in os.scandir(self.folder):
                if sub.is_dir(follow_symlinks=False) and len(sub.name) == 2:
                    for f in os.scandir(sub.path):
                        if f.name.startswith(".") and f.name.endswith(".tmp"):  # replace_bytes' temporaries
                            os.unlink(f.path)
                    try:
                        os.rmdir(sub.path)
                    except OSError:
                        pass
        except OSError:
            pass
        with self._lock:
            self._size = (0, 0)
        return removed


def _read_nofollow(path: Path, limit: int) -> str:
    """The text of the file ``path`` (at most ``limit`` bytes), never through a symlink."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError("not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError("entry too large")
    return data.decode("utf-8")

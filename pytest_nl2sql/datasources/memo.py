"""Memos of the work done per SQL text: one parse per (dialect, SQL), and the verdicts of the
statement guard and of the validator, so that the same SQL is parsed and judged once per run.

An item's predicted SQL passes the guard in the engine, the validator (which asks the guard
again) and the adapter (which asks it a third time before it runs anything); the same SQL is
checked again for every role and on every neighbour database. Each of those answers depends
only on the SQL text, the dialect and -- for the validator -- the schema and the role's policy,
so each is computed once and looked up after that.

A memo is a small bounded LRU map, safe across threads. It keeps what a computation returned
or the exception it raised (the exception's type and arguments: every look-up raises a fresh
one, with no traceback carried over). What is kept must not be changed by its users: parse
trees are shared, so a user that edits a tree edits a ``copy()`` of it.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.metadata
import importlib.util
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, Generic, TypeVar

__all__ = ["MISSING", "STORE", "Memo", "VerdictStore", "canonical", "text_key"]

T = TypeVar("T")

_MISSING = object()
#: What :meth:`VerdictStore.lookup` returns for a key it does not hold.
MISSING = _MISSING


class _Raised:
    """An exception a computation raised: raised again, afresh, at each look-up."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def again(self) -> BaseException:
        error = self.error
        kind = type(error)
        fresh = kind.__new__(kind)
        state = getattr(error, "__dict__", None)
        if state:
            try:
                fresh.__dict__.update(state)
            except AttributeError:
                # a compiled exception class (sqlglotc's ParseError, built by mypyc): an instance
                # has no __dict__ until its __init__ has run
                try:
                    fresh = kind(*error.args)
                    fresh.__dict__.update(state)
                except Exception:  # noqa: BLE001 - an __init__ that wants other arguments
                    fresh = copy.copy(error)
        fresh.args = error.args
        return fresh


def text_key(text: str) -> bytes:
    """A 128-bit digest of ``text``: memo keys stay small whatever the SQL's length."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class Memo(Generic[T]):
    """At most ``size`` results of ``compute`` by key, the least recently used dropped first.

    ``remember`` lists the exception types worth keeping (a verdict such as a refusal); any
    other exception propagates and nothing is kept, so a ``RecursionError`` or a
    ``KeyboardInterrupt`` is never replayed.
    """

    def __init__(self, size: int, remember: tuple[type[BaseException], ...] = ()) -> None:
        self.size = size
        self.remember = remember
        self.hits = 0
        self.misses = 0
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            found = self._data.get(key, _MISSING)
            if found is not _MISSING:
                self._data.move_to_end(key)
                self.hits += 1
        if found is _MISSING:
            self.misses += 1
            try:
                found = compute()
            except self.remember as error:
                found = _Raised(error)
            with self._lock:
                self._data[key] = found
                while len(self._data) > self.size:
                    self._data.popitem(last=False)
        if isinstance(found, _Raised):
            raise found.again()
        return found  # type: ignore[no-any-return]

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0


# -- verdicts remembered across runs ---------------------------------------------------------

#: The modules whose code decides a guard or validator verdict (or the replay engine's SQLite
#: string fallback, or a plan's SQL): their bytes are part of every key, so a changed
#: allow-list, resolver or compiler never reads a verdict an older one gave.
_VERDICT_MODULES = (
    "pytest_nl2sql.datasources.guard", "pytest_nl2sql.datasources.guardbase",
    "pytest_nl2sql.datasources.guardrules", "pytest_nl2sql.datasources.functions",
    "pytest_nl2sql.datasources.syntax", "pytest_nl2sql.datasources.memo",
    "pytest_nl2sql.engine.validator", "pytest_nl2sql.engine.validatorbase",
    "pytest_nl2sql.engine.validatorrules", "pytest_nl2sql.engine.plainscope",
    "pytest_nl2sql.engine.tablefunctions", "pytest_nl2sql.engine.dialects",
    "pytest_nl2sql.engine.refusals", "pytest_nl2sql.engine.stringfallback",
    "pytest_nl2sql.config.policy",
    # a plan's SQL (engine.compiler remembers it like a verdict)
    "pytest_nl2sql.engine.compiler", "pytest_nl2sql.engine.plancompiler",
    "pytest_nl2sql.engine.plan.model", "pytest_nl2sql.engine.plan.nodes",
    "pytest_nl2sql.engine.plan.parse", "pytest_nl2sql.engine.plan.specplan",
    "pytest_nl2sql.engine.plan.vocabulary",
)  # fmt: skip
_STORE_FORMAT = 1
_STORE_HEADER = b"pytest-nl2sql verdict cache sha256="
#: A store file larger than this is not read; a store holding this many entries takes no more.
MAX_STORE_BYTES = 64 * 1024 * 1024
MAX_STORE_ENTRIES = 200_000
#: How long a process waits for another one's flush of the same store (then its own new
#: verdicts are dropped: a cache).
STORE_LOCK_TIMEOUT_S = 30.0


def canonical(value: Any) -> Any:
    """``value`` as plain JSON data that is the same in every process (sets sorted, attrs
    classes as their name and fields); raises ``TypeError`` for anything else."""
    if value is None or type(value) in (str, int, bool, float):
        return value
    if type(value) in (tuple, list):
        return [canonical(v) for v in value]
    if type(value) in (set, frozenset):
        items = [canonical(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    if type(value) is dict:
        return sorted(([canonical(k), canonical(v)] for k, v in value.items()), key=lambda kv: json.dumps(kv))
    fields = getattr(type(value), "__attrs_attrs__", None)
    if fields is not None:
        return [type(value).__qualname__, [[f.name, canonical(getattr(value, f.name))] for f in fields]]
    raise TypeError(f"no canonical form for {type(value).__name__}")


class VerdictStore:
    """Guard and validator verdicts remembered across runs, in one file of the suite cache's
    folder (``verdicts-<code>.json``, ``<code>`` a digest of the package version, sqlglot's
    version and the bytes of the modules that decide a verdict).

    Off until :meth:`enable` names a folder (the plugin does, in a run that uses it). The file
    is read once, on the first look-up; the verdicts computed in this process are added to it
    by :meth:`flush` (the file read again and merged, then replaced atomically). The file is a
    header line holding the sha256 of the JSON after it, then the JSON: a file whose sum does
    not match (edited in place, cut short, corrupted) or that holds anything unexpected is
    only a miss for every key. The sum is not a signature - whoever can write the folder can
    write a matching one - and the database's own enforcement (SQLite's authorizer and
    read-only connection, PostgreSQL's read-only transaction and GRANTs) applies to every
    query whatever a remembered verdict says.
    """

    def __init__(self) -> None:
        self.folder: Path | None = None
        self._entries: dict[str, Any] | None = None
        self._new: dict[str, Any] = {}
        self._code = ""
        self._lock = threading.Lock()
        self.hits = 0
        self._canonicals: dict[Any, Any] = {}

    def enable(self, folder: Path | None) -> None:
        with self._lock:
            self.folder = folder
            self._entries = None
            self._new = {}
            self._code = ""  # computed on first use: a process that judges nothing imports no sqlglot

    @property
    def path(self) -> Path | None:
        if self.folder is None:
            return None
        if not self._code:  # the file is named by the code digest: never read or write another's
            self._code = _code_digest()
        return self.folder / f"verdicts-{self._code[:24]}.json"

    def key(self, *parts: Any) -> str | None:
        """The store's key of a verdict, or None when a part has no canonical form."""
        if self.folder is None:
            return None
        if not self._code:
            self._code = _code_digest()
        try:
            raw = json.dumps([self._code, *(self._canonical(p) for p in parts)], ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):
            return None
        return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()

    def _canonical(self, part: Any) -> Any:
        """:func:`canonical`, once per frozen attrs value (a role's policy: the same for every
        verdict of a run, and sorting its sets was most of a key's cost)."""
        kind = type(part)
        if getattr(kind, "__attrs_attrs__", None) is None or kind.__hash__ in (None, object.__hash__):
            return canonical(part)  # not an attrs value hashed by its fields (frozen): computed each time
        try:
            found = self._canonicals.get(part)
        except TypeError:  # not hashable: no value to key on
            return canonical(part)
        if found is None:
            found = canonical(part)
            if len(self._canonicals) >= 64:
                self._canonicals.clear()
            self._canonicals[part] = found
        return found

    def lookup(self, key: str | None) -> Any:
        if key is None:
            return _MISSING
        with self._lock:
            if self._entries is None:
                self._entries = self._read()
            found = self._entries.get(key, _MISSING)
        if found is not _MISSING:
            self.hits += 1
        return found

    def record(self, key: str | None, value: Any) -> None:
        if key is None:
            return
        with self._lock:
            if self._entries is not None and len(self._entries) + len(self._new) < MAX_STORE_ENTRIES:
                self._new[key] = value
                self._entries[key] = value

    def take_new(self) -> dict[str, Any]:
        """The verdicts recorded since the last call (or the last flush), no longer new here."""
        with self._lock:
            new, self._new = self._new, {}
        return new

    def merge(self, entries: Any) -> None:
        """Record verdicts another process computed (engine/forkhelper.py), as if computed here."""
        if type(entries) is not dict or self.folder is None:
            return
        with self._lock:
            if self._entries is None:
                self._entries = self._read()
            for key, value in entries.items():
                if type(key) is str and len(self._entries) + len(self._new) < MAX_STORE_ENTRIES:
                    self._new[key] = value
                    self._entries[key] = value

    def flush(self) -> None:
        """Add this process's new verdicts to the file (a cache: any error only loses them)."""
        with self._lock:
            new, self._new = self._new, {}
            path = self.path
        if not new or path is None:
            return
        from filelock import FileLock, Timeout

        from pytest_nl2sql.suitefile.lock import remove_unused, replace_bytes

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # xdist's workers flush as they end, often at once: read, merge and replace one at a
            # time, or the last to replace drops the others' verdicts (the lock file stays in
            # the cache folder, beside the store)
            with FileLock(f"{path}.lock", timeout=STORE_LOCK_TIMEOUT_S):
                merged = self._read()
                for k, v in new.items():
                    if len(merged) >= MAX_STORE_ENTRIES:
                        break
                    merged[k] = v
                body = json.dumps({"format": _STORE_FORMAT, "entries": merged}, separators=(",", ":")).encode("utf-8")
                replace_bytes(path, _STORE_HEADER + hashlib.sha256(body).hexdigest().encode("ascii") + b"\n" + body)
        except (OSError, TypeError, ValueError, Timeout):
            return
        # the verdict files of other codes (another version of this package or of sqlglot) go
        # once nobody has written or read them for lock.CACHE_MAX_AGE_S
        mine = path.name
        remove_unused(path.parent, _STORE_NAME, keep=lambda n: n in (mine, f"{mine}.lock"))

    def _read(self) -> dict[str, Any]:
        path = self.path
        if path is None:
            return {}
        from pytest_nl2sql.suitefile.lock import touch_if_old

        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_STORE_BYTES + 1)
                touch_if_old(fh.fileno())  # in use: never taken for another code's unused file
            if len(data) > MAX_STORE_BYTES:
                return {}
            header, _, body = data.partition(b"\n")
            if header != _STORE_HEADER + hashlib.sha256(body).hexdigest().encode("ascii"):
                return {}  # edited, cut short or corrupted: every key is a miss
            doc = json.loads(body)
            entries = doc.get("entries") if type(doc) is dict and doc.get("format") == _STORE_FORMAT else None
            return entries if type(entries) is dict else {}
        except Exception:  # noqa: BLE001 - a missing or unreadable store is only a miss
            return {}


#: The names of verdict files (and their lock files): ``verdicts-<code>.json``.
_STORE_NAME = re.compile(r"verdicts-[0-9a-f]{24}\.json(?:\.lock)?")


def _code_digest() -> str:
    from pytest_nl2sql import __version__

    digest = hashlib.sha256(f"{__version__}\0{_sqlglot_version()}\0".encode())
    package = Path(__file__).resolve().parent.parent  # the installed pytest_nl2sql folder
    for name in _VERDICT_MODULES:
        # read by path: ``find_spec`` would import each module's parent packages (the plan
        # model's, which a replay run never needs)
        try:
            digest.update((package / name.removeprefix("pytest_nl2sql.").replace(".", "/")).with_suffix(".py").read_bytes())
        except OSError:
            digest.update(b"?")
        digest.update(b"\0")
    return digest.hexdigest()


def _sqlglot_version() -> str:
    """sqlglot's version, read without importing sqlglot (a warm run imports none): its
    distribution's metadata, else the bytes of its ``_version.py``."""
    try:
        return importlib.metadata.version("sqlglot")
    except importlib.metadata.PackageNotFoundError:
        pass
    spec = importlib.util.find_spec("sqlglot")
    folder = spec.submodule_search_locations if spec is not None else None
    for place in folder or ():
        try:
            return "?" + hashlib.sha256((Path(place) / "_version.py").read_bytes()).hexdigest()
        except OSError:
            continue
    return "?"


#: The one store of a process (guard and validator verdicts; see :class:`VerdictStore`).
STORE = VerdictStore()

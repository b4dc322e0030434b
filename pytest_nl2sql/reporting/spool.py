"""A run's records on disk, and its scratch folder.

The controller never holds every record: each record is written, as it arrives, to the run's
spool (``records.jsonl`` in the run folder, one JSON record a line); in memory it keeps per
item only where the line is and a slim *view* -- the fields the summary reads (verdicts,
scores without their details, groups, usage), never the SQL, the question, the row diff or
the failure text. The JSON report and the HTML page are written by reading the spool back,
one record at a time, in node id order (``RecordSpool.records``).

The run folder (``nl2sql-run-<pid>-*`` in the temp folder) also holds the cost ledger
(``plugin.ledger``). It is removed when the run ends; a run killed by SIGKILL leaves it, and
the next run removes the folders of processes that are gone (``clean_dead_run_folders``).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pytest_nl2sql.reporting.figures import NOT_ASKED

__all__ = ["RUN_FOLDER_PREFIX", "LazyRecords", "RecordSpool", "clean_dead_run_folders", "make_run_folder", "record_text", "slim"]

RUN_FOLDER_PREFIX = "nl2sql-run-"
#: The spool's write buffer (bytes).
WRITE_BUFFER = 1 << 20

#: What a record's slim view leaves out: text the summary never reads (the JSON and HTML
#: reports read it back from the spool).
_HEAVY = frozenset({"sql", "gold_sql", "question", "row_diff", "message", "gold_digest", "route"})


def record_text(record: Mapping[str, Any]) -> str:
    """``record`` as one line of the spool: JSON with sorted keys (what an xdist worker sends, too)."""
    return json.dumps(record, sort_keys=True, default=str, ensure_ascii=False)


def slim(record: Mapping[str, Any], shared: dict[Any, Any] | None = None) -> dict[str, Any]:
    """The fields of ``record`` the run summary and the terminal lines read (module doc); with
    ``shared`` (a spool's), its nested lists and dicts equal to an earlier view's are that view's
    objects (see ``_shared``)."""
    shared = {} if shared is None else shared
    out: dict[str, Any] = {}
    for k, v in record.items():  # one pass: the heavy fields left out, the rest shared (_shared)
        if k in _HEAVY:
            continue
        if k == "error":
            if isinstance(v, str) and not v.startswith(NOT_ASKED):
                v = None  # only fail fast's "not asked: ..." is counted
        elif k == "scores" and isinstance(v, Mapping):
            v = {name: {n: x for n, x in s.items() if n != "detail"} if isinstance(s, Mapping) else s for name, s in v.items()}
        out[_intern(k) if type(k) is str else k] = _shared(v, shared, True)
    return out



#: How many distinct nested values a spool shares at most (then new ones are kept as they are).
SHARED_MAX = 1 << 16


def _shared(value: Any, shared: dict[Any, Any], nested: bool) -> Any:
    """``value`` with its strings interned, its 0.0 and 1.0 shared and -- below the top level --
    each list and dict replaced by an equal one seen before: a record that crossed from an xdist
    worker is made of fresh objects, and most records spell the same tags, usage counters and
    score verdicts (``{"gating": True, "passed": True, "value": 1.0}``); shared, each is held
    once for the whole run. Views are read, never changed, so sharing is safe."""
    kind = type(value)  # plain JSON data: exact types, the cheapest test
    if kind is str:
        return _intern(value)
    if kind is float:
        return _FLOATS.get(value, value)
    if kind is int or kind is bool or value is None:
        return value
    if kind is dict:
        out: Any = {}
        for k, v in value.items():  # the scalars of a JSON record here, without a call each
            t = type(v)
            if t is str:
                v = _intern(v)
            elif t is float:
                v = _FLOATS.get(v, v)
            elif not (t is int or t is bool or v is None):
                v = _shared(v, shared, True)
            out[_intern(k) if type(k) is str else k] = v
    elif kind is list:
        out = [_shared(v, shared, True) for v in value]
    else:  # anything else as it is; a subclass of those (an enum with a str mixin, an OrderedDict) as its base
        for base in _BASES:
            if isinstance(value, base):
                return _shared(_AS_BASE[base](value), shared, nested)
        return value
    if not nested:
        return out
    try:
        if kind is dict:
            key: Any = (dict, tuple([(k, id(v) if type(v) in _CONTAINERS else (type(v), v)) for k, v in out.items()]))
        else:
            key = (list, tuple([id(v) if type(v) in _CONTAINERS else (type(v), v) for v in out]))
        seen = shared.get(key)
    except TypeError:  # an unhashable value (not from a JSON record): kept as it is
        return out
    if seen is not None:
        return seen
    if len(shared) < SHARED_MAX:
        shared[key] = out
    return out


_intern = sys.intern
_AS_BASE: dict[type, Any] = {str: str.__str__, float: float, dict: dict, list: list}  # str.__str__: the text, not an enum's name
_BASES = tuple(_AS_BASE)
#: A list or dict is told apart from another by the object (the shared one, alive as long as
#: the spool); anything else by its type and value (1, 1.0 and True differ).
_CONTAINERS = frozenset({dict, list})


_FLOATS = {0.0: 0.0, 1.0: 1.0}


class LazyRecords:
    """A sized, re-iterable sequence of records read from somewhere else (a spool, a report
    file) each time it is iterated: what ``render_html`` and ``compare_reports`` take as a
    report's ``items`` without the list in memory."""

    def __init__(self, count: int, reader: Any) -> None:
        self._count = count
        self._reader = reader

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._reader())


class RecordSpool:
    """The run's records, one JSON line each in ``folder / records.jsonl`` (module doc)."""

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / "records.jsonl"
        # a large write buffer: a write that reaches the disk lets the execnet threads of an xdist
        # controller take the GIL for up to a switch interval; one flush per megabyte, not per 8 KB
        self._fh = open(self.path, "w+b", buffering=WRITE_BUFFER)  # noqa: SIM115 -- closed by close()
        self._end = 0
        self._at_end = True  # the file position is at the end (no read since the last write)
        self._where: dict[str, tuple[int, int]] = {}
        self._views: dict[str, dict[str, Any]] = {}
        self._shared: dict[Any, Any] = {}  # the nested values the views share (``_shared``)

    def add(self, record: Mapping[str, Any], text: str | None = None) -> None:
        """Append ``record``; a later record of the same node id replaces the earlier one.
        ``text``: ``record`` as :func:`record_text` wrote it, when the caller has it (a record
        that crossed from an xdist worker as that text): not written out again."""
        line = (record_text(record) if text is None else text).encode("utf-8") + b"\n"
        if not self._at_end:  # a seek flushes the write buffer: only after a read
            self._fh.seek(self._end)
            self._at_end = True
        try:
            self._fh.write(line)
        except BaseException:
            self._at_end = False  # a partial write: the next record starts at self._end again
            raise
        nodeid = sys.intern(str(record["nodeid"]))
        self._where[nodeid] = (self._end, len(line))
        self._end += len(line)
        self._views[nodeid] = slim(record, self._shared)

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, nodeid: object) -> bool:
        return nodeid in self._where

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def get(self, nodeid: str) -> dict[str, Any]:
        offset, length = self._where[nodeid]
        self._fh.flush()
        self._at_end = False
        self._fh.seek(offset)
        return json.loads(self._fh.read(length))

    def views(self) -> list[dict[str, Any]]:
        """The slim views, in node id order."""
        return [self._views[n] for n in sorted(self._where)]

    def _read(self) -> Iterator[dict[str, Any]]:
        for nodeid in sorted(self._where):
            yield self.get(nodeid)

    def records(self) -> LazyRecords:
        """The whole records, read back one at a time, in node id order."""
        return LazyRecords(len(self._where), self._read)

    def close(self) -> None:
        try:
            self._fh.close()
        except OSError:
            pass


def make_run_folder() -> Path:
    """A new run folder in the temp folder, named after this process (module doc)."""
    clean_dead_run_folders()
    return Path(tempfile.mkdtemp(prefix=f"{RUN_FOLDER_PREFIX}{os.getpid()}-"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive
    return True


def clean_dead_run_folders(where: str | os.PathLike[str] | None = None) -> list[Path]:
    """Remove the run folders (and the ledgers of older versions beside them) whose process is
    gone; return what was removed."""
    folder = Path(where or tempfile.gettempdir())
    removed = []
    try:
        entries: Iterable[Path] = list(folder.glob(f"{RUN_FOLDER_PREFIX}*"))
    except OSError:
        return removed
    for path in entries:
        pid = path.name[len(RUN_FOLDER_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        if path.is_dir() and not path.is_symlink():
            try:
                if path.stat().st_uid != os.getuid():
                    continue  # another user's
            except OSError:
                continue
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed

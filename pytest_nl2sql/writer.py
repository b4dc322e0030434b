"""The one writer of suite files.

Two jobs, one module:

* ``update_rows(path, {case_id: (rows, alt_rows)})`` rewrites the ``rows``/``alt_rows`` of
  some cases *in place*: it edits only the text of those values, so every comment, blank line,
  quote style, key order and line ending elsewhere stays byte for byte (and a file whose rows
  did not change is written back unchanged). Editing text at the node positions libyaml reports
  is what makes a 10,000-case rewrite cost about one fast load, where a ruamel round-trip
  load+dump costs five.
* ``dump_suite(cases, header)`` writes a new suite file (drafts, migrations) in the layout the
  shipped suites use, which ``update_rows`` then keeps.

Every write is atomic (temporary file in the same folder, fsync, ``os.replace``) and done under
an inter-process lock, so a crash or a second writer never leaves a truncated or interleaved
file, and a second writer re-reads the file under the lock (no lost update). The lock is keyed
on the file's real path, so writers that reach one file through a symlinked file or folder
share it; a symlink is written through (its target is replaced, the link stays). Waiting for
the lock is bounded (``LOCK_TIMEOUT_S``, 60 s, or ``$NL2SQL_LOCK_TIMEOUT_S``) and ends in a
one-line ``LockTimeout``. A temporary file is removed on every error, and one left behind by a
killed process (its name carries the pid) is removed by the next write to the same file.

Values are written by one rule: int, float, text, true/false, null; other values are first
normalized by ``values.normalize_value`` (Decimal, dates, bytes, UUID).
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
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from filelock import FileLock, Timeout

from .errors import LockTimeout, Nl2sqlError, Problem, SuiteError
from .loader import CaseSpans, load_text, parse_suite, read_suite_bytes
from .model import EvalCase, Kind, Origin
from .values import normalize_value
from .yamlnodes import T_STR, resolve_plain

__all__ = [
    "LOCK_TIMEOUT_S",
    "RowsUpdate",
    "SuiteEdit",
    "SuiteLock",
    "edit_suite",
    "dump_suite",
    "format_scalar",
    "lock_for",
    "open_suite",
    "real_path",
    "remove_stale_temps",
    "temp_prefix",
    "update_rows",
    "write_atomic",
]

Rows = Sequence[Mapping[str, Any]]


@attrs.frozen
class RowsUpdate:
    """New expected rows for one case: ``rows`` and one list of rows per ``alt_sql``."""

    rows: Rows
    alt_rows: Sequence[Rows] | None = None


# -- scalars ---------------------------------------------------------------------------

_PLAIN = re.compile(r"\w[\w .\-/()+'&$%@=;!~^<>|]*\Z")
# Plain words that other YAML readers (YAML 1.1: yes/no/on/off, dates) would not read as text.
_YAML11 = re.compile(
    r"(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|[0-9][0-9_:.eE+\-]*|\.[0-9].*|[<=]+)\Z"
)
# everything but printable characters, and the line separators libyaml folds (U+2028/9)
_ESCAPE = re.compile("[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


def _escape_char(m: re.Match[str]) -> str:
    c = m.group()
    return {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}.get(c) or f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"


def _quote(text: str) -> str:
    body = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + _ESCAPE.sub(_escape_char, body) + '"'


_TEXT_CACHE: dict[str, str] = {}


def format_text(text: str) -> str:
    """Text as a flow-context YAML scalar: plain when it reads back as the same text."""
    cached = _TEXT_CACHE.get(text)
    if cached is not None:
        return cached
    if (
        _PLAIN.match(text)
        and not text.endswith(" ")
        and "  " not in text
        and resolve_plain(text) is T_STR
        and not _YAML11.match(text)
    ):
        out = text
    else:
        out = _quote(text)
    if len(_TEXT_CACHE) < 100_000:
        _TEXT_CACHE[text] = out
    return out


_PLAIN_BLOCK = re.compile(r"\w[\w .\-/()+'&$%@=;!~^<>|?,]*\Z")


def format_block_text(text: str) -> str:
    """Text as a block-context value (``key: value`` on its own line), where '?' and ','
    may stay plain (``question: How many tracks?``)."""
    if (
        _PLAIN_BLOCK.match(text)
        and not text.endswith(" ")
        and "  " not in text
        and resolve_plain(text) is T_STR
        and not _YAML11.match(text)
    ):
        return text
    return format_text(text)


def format_scalar(value: Any) -> str:
    """One value as a YAML flow scalar, by the module's rule."""
    if value is None:
        return "null"
    t = type(value)
    if t is str:
        return format_text(value)
    if t is bool:
        return "true" if value else "false"
    if t is int:
        return str(value)
    if t is float:
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        if "e" in text and "." not in text.split("e")[0]:
            mantissa, exp = text.split("e")
            text = f"{mantissa}.0e{exp}"
        return text
    return format_scalar(normalize_value(value))


def format_row(row: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{format_text(str(k))}: {format_scalar(v)}" for k, v in row.items()) + "}"


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
        self._lock = FileLock(self.lock_file, timeout=self.timeout)

    def acquire(self) -> SuiteLock:
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


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) so readers see the old or the new file, never half.

    A symlink is written through: its target is replaced and the link stays a link. The
    temporary file is removed on every error; one left by a killed process is removed by the
    next write to the same file.
    """
    target = real_path(path)
    data = text.encode("utf-8")
    remove_stale_temps(target)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=temp_prefix(target), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
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
    try:
        dfd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


# -- in-place row updates ----------------------------------------------------------------


def _newline(text: str) -> str:
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def _content_end(node: Any, text: str) -> int:
    """Where a node's own text ends (libyaml's end mark of a block collection runs on)."""
    while True:
        if hasattr(node, "flow_style") and not node.flow_style and node.value:
            last = node.value[-1]
            node = last[1] if isinstance(last, tuple) else last
            continue
        start, end = node.start_mark.index, node.end_mark.index
        if getattr(node, "style", None) in ("|", ">"):
            return start + len(text[start:end].rstrip())
        return end


def _line_end(text: str, index: int) -> int:
    end = text.find("\n", index)
    if end < 0:
        return len(text)
    return end - 1 if end > 0 and text[end - 1] == "\r" else end


def _column(text: str, index: int) -> int:
    return index - (text.rfind("\n", 0, index) + 1)


def _rows_block(rows: Rows, col: int, nl: str) -> list[str]:
    pad = " " * col
    return [f"{pad}- {format_row(r)}" for r in rows]


def _alt_block(alts: Sequence[Rows], col: int, nl: str) -> list[str]:
    pad = " " * col
    lines: list[str] = []
    for rows in alts:
        if not rows:
            lines.append(f"{pad}- []")
            continue
        for i, r in enumerate(rows):
            lines.append(f"{pad}{'- - ' if i == 0 else '  - '}{format_row(r)}")
    return lines


def _flow_value(key: str, value: Any) -> str:
    if key == "rows":
        return "[" + ", ".join(format_row(r) for r in value) + "]"
    return "[" + ", ".join(_flow_value("rows", rows) for rows in value) + "]"


class _Edits:
    def __init__(self) -> None:
        self.items: list[tuple[int, int, str]] = []

    def add(self, start: int, end: int, new: str) -> None:
        self.items.append((start, end, new))

    def apply(self, text: str) -> str:
        out: list[str] = []
        pos = 0
        for start, end, new in sorted(self.items, key=lambda e: (e[0], e[1])):
            out.append(text[pos:start])
            out.append(new)
            pos = end
        out.append(text[pos:])
        return "".join(out)


def _edit_value(
    edits: _Edits, text: str, nodes: dict[str, tuple[Any, Any]], spans: CaseSpans, key: str, value: Any, after: Sequence[str], nl: str
) -> None:
    if key in nodes:
        knode, vnode = nodes[key]
        if spans.flow:
            edits.add(vnode.start_mark.index, _content_end(vnode, text), _flow_value(key, value))
            return
        empty = not value
        is_block = type(vnode).__name__ == "SequenceNode" and not vnode.flow_style and vnode.value
        if is_block and not empty:
            col = _column(text, vnode.start_mark.index)
            lines = (_rows_block if key == "rows" else _alt_block)(value, col, nl)
            edits.add(vnode.start_mark.index, _content_end(vnode, text), nl.join(lines)[col:])
            return
        kstart = knode.start_mark.index
        vend = _content_end(vnode, text)
        colon = text.index(":", knode.end_mark.index)
        head_end = vnode.start_mark.index if vend > vnode.start_mark.index else colon + 1
        if is_block:  # block list -> []
            line_end = _line_end(text, colon)
            comment = text[colon + 1 : line_end].rstrip() if "#" in text[colon + 1 : line_end] else ""
            edits.add(kstart, vend, f"{key}: []{comment}")
            return
        if empty:
            edits.add(kstart, max(vend, head_end), f"{key}: []")
            return
        # an inline value (null, [], a flow list): the new block goes under the key's line
        tail_start = max(vend, colon + 1)
        line_end = _line_end(text, tail_start)
        edits.add(kstart, tail_start, f"{key}:")
        lines = (_rows_block if key == "rows" else _alt_block)(value, spans.indent, nl)
        edits.add(line_end, line_end, nl + nl.join(lines))
        return
    # the key is missing: add it after the key it follows in the canonical order
    anchor_key = next((k for k in after if k in nodes), None)
    if anchor_key is None:
        anchor = max(_content_end(v, text) for _, v in nodes.values())
    else:
        anchor = _content_end(nodes[anchor_key][1], text)
    if spans.flow:
        edits.add(anchor, anchor, f", {key}: {_flow_value(key, value)}")
        return
    pad = " " * spans.indent
    if not value:
        edits.add(anchor, anchor, f"{nl}{pad}{key}: []")
        return
    lines = (_rows_block if key == "rows" else _alt_block)(value, spans.indent, nl)
    edits.add(anchor, anchor, f"{nl}{pad}{key}:{nl}" + nl.join(lines))


def _same(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> bool:
    """Equal rows, with equal value types (1, 1.0 and True are different values in a file)."""
    if len(old) != len(new):
        return False
    for a, b in zip(old, new, strict=True):
        if list(a) != list(b):
            return False
        for x, y in zip(a.values(), b.values(), strict=True):
            y = normalize_value(y)
            if type(x) is not type(y) or x != y:
                return False
    return True


def apply_rows(text: str, updates: Mapping[str, RowsUpdate], path: str = "<suite>") -> str:
    """Return ``text`` with the given cases' rows replaced (pure; see ``update_rows``)."""
    spans: dict[str, CaseSpans] = {}
    suite = parse_suite(text, path, strict=False, spans=spans)
    return _apply(text, suite, spans, updates, path)


def _apply(text: str, suite: Any, spans: dict[str, CaseSpans], updates: Mapping[str, RowsUpdate], path: str) -> str:
    current = {c.id: c for c in suite.cases}
    missing = [cid for cid in updates if cid not in spans]
    if missing:
        raise SuiteError([Problem(path, 0, 0, f"no case {cid!r} in this suite") for cid in missing])
    nl = _newline(text)
    edits = _Edits()
    for cid, update in updates.items():
        nodes = spans[cid].nodes
        rows = [dict(r) for r in update.rows]
        case = current[cid]
        same_rows = case.rows is not None and _same(case.rows, rows)
        same_alts = update.alt_rows is None or (
            len(case.alt_rows) == len(update.alt_rows)
            and all(_same(a, b) for a, b in zip(case.alt_rows, update.alt_rows, strict=True))
        )
        if same_rows and same_alts:
            continue  # nothing to write: the text (and its comments) stays as it is
        if not same_rows:
            _edit_value(edits, text, nodes, spans[cid], "rows", rows, ("sql", "order_matters", "columns"), nl)
        if not same_alts and update.alt_rows is not None and (update.alt_rows or "alt_rows" in nodes):
            alts = [[dict(r) for r in rs] for rs in update.alt_rows]
            _edit_value(edits, text, nodes, spans[cid], "alt_rows", alts, ("alt_sql", "rows", "sql"), nl)
    return edits.apply(text)


def _has_bom(path: str | os.PathLike[str]) -> bool:
    with open(path, "rb") as fh:
        return fh.read(3) == b"\xef\xbb\xbf"


class SuiteEdit:
    """A suite opened for an in-place edit: read and parsed once.

    ``with edit_suite(path) as edit:`` holds the file's lock from the read to the end:
    ``edit.suite`` (parsed leniently: rows may be missing or stale), ``edit.write_rows(updates)``
    writes atomically before the lock is let go. For a long edit (regenerate runs queries
    between the read and the write), ``open_suite(path)`` reads without the lock and
    ``edit.commit(updates, keep)`` takes it only for the write (see ``commit``).
    """

    def __init__(self, path: str | os.PathLike[str], *, locked: bool = True) -> None:
        self.path = path
        self._lock = lock_for(path)
        self._locked = locked
        self._held = False

    def _read(self) -> None:
        self.text, self.sha256 = load_text(self.path)
        self.spans: dict[str, CaseSpans] = {}
        self.suite = parse_suite(self.text, str(self.path), strict=False, spans=self.spans, sha256=self.sha256)

    def __enter__(self) -> SuiteEdit:
        if self._locked:
            self._lock.acquire()
            self._held = True
        try:
            self._read()
        except BaseException:
            self._release()
            raise
        return self

    def _release(self) -> None:
        if self._held:
            self._held = False
            self._lock.release()

    def write_rows(self, updates: Mapping[str, RowsUpdate]) -> bool:
        """Apply the updates and replace the file; True if its bytes changed (under the lock)."""
        if not self._held:
            return self.commit(updates)[0]
        new = _apply(self.text, self.suite, self.spans, updates, str(self.path))
        if new == self.text:
            return False
        write_atomic(self.path, ("\ufeff" if _has_bom(self.path) else "") + new)
        self.text = new
        return True

    def commit(
        self, updates: Mapping[str, RowsUpdate], keep: Callable[[EvalCase, EvalCase], bool] | None = None
    ) -> tuple[bool, tuple[str, ...]]:
        """Take the file's lock, re-read it and write the updates; ``(changed, dropped)``.

        When the file is the one read, the updates are applied as computed. When another
        process changed it in between, the file is parsed again and each update is applied to
        the new text only if its case is still there and ``keep(case as read, case now)`` says
        the update still holds (regenerate: the same SQL); the ids of the others are returned
        in ``dropped`` and their cases stay as the other process left them.
        """
        dropped: list[str] = []
        with self._lock:
            data = read_suite_bytes(self.path)
            if hashlib.sha256(data).hexdigest() != self.sha256:
                before = {c.id: c for c in self.suite.cases}
                self._read()
                now = {c.id: c for c in self.suite.cases}
                kept: dict[str, RowsUpdate] = {}
                for cid, update in updates.items():
                    old, new_case = before.get(cid), now.get(cid)
                    if old is None or new_case is None or (keep is not None and not keep(old, new_case)):
                        dropped.append(cid)
                    else:
                        kept[cid] = update
                updates = kept
            new = _apply(self.text, self.suite, self.spans, updates, str(self.path))
            if new == self.text:
                return False, tuple(dropped)
            written = ("\ufeff" if data.startswith(b"\xef\xbb\xbf") else "") + new
            write_atomic(self.path, written)
            self.text = new
            self.sha256 = hashlib.sha256(written.encode("utf-8")).hexdigest()
        return True, tuple(dropped)

    def __exit__(self, *exc: object) -> None:
        self.spans = {}
        self._release()


def edit_suite(path: str | os.PathLike[str]) -> SuiteEdit:
    """Open a suite for an edit under its lock (held until the ``with`` block ends)."""
    return SuiteEdit(path)


def open_suite(path: str | os.PathLike[str]) -> SuiteEdit:
    """Open a suite for a long edit: read without the lock, written by ``commit``."""
    return SuiteEdit(path, locked=False)


def update_rows(path: str | os.PathLike[str], updates: Mapping[str, RowsUpdate]) -> bool:
    """Rewrite the rows of the given cases in the file at ``path``; True if the bytes changed.

    The file is read, edited and replaced under the file's lock, so concurrent writers queue
    instead of losing updates. (Values are written by ``format_scalar``, whose output is
    property-tested to read back equal, so the file is not parsed a second time.)
    """
    with edit_suite(path) as edit:
        return edit.write_rows(updates)


# -- new files -------------------------------------------------------------------------


def _flow_list(items: Iterable[Any]) -> str:
    return "[" + ", ".join(format_scalar(i) for i in items) + "]"


def _block_text(key: str, text: str, pad: str) -> str:
    body = text[:-1] if text.endswith("\n") else text
    simple = (
        body
        and not body[0].isspace()
        and not _ESCAPE.search(body.replace("\n", ""))
        and all(line == line.rstrip() for line in body.split("\n"))
        and not body.endswith("\n")
    )
    if not simple:
        return f"{pad}{key}: {_quote(text)}"
    chomp = "" if text.endswith("\n") else "-"
    inner = pad + "  "
    lines = [(inner + line) if line else "" for line in body.split("\n")]
    return f"{pad}{key}: |{chomp}\n" + "\n".join(lines)


def _data_block(value: Any, pad: str) -> list[str]:
    """Free-form data (a plan) as block YAML; lists of scalars and small maps stay inline."""
    lines: list[str] = []
    if isinstance(value, Mapping):
        for k, v in value.items():
            key = format_text(str(k))
            if isinstance(v, Mapping) and v and not _is_flat(v):
                lines.append(f"{pad}{key}:")
                lines.extend(_data_block(v, pad + "  "))
            elif isinstance(v, list) and v and not all(_is_flat(i) for i in v):
                lines.append(f"{pad}{key}:")
                lines.extend(_data_block(v, pad))
            else:
                lines.append(f"{pad}{key}: {_inline(v)}")
        return lines
    for item in value:
        sub = _data_block(item, pad + "  ") if isinstance(item, (Mapping, list)) and not _is_flat(item) else None
        if sub:
            lines.append(f"{pad}- {sub[0].lstrip()}")
            lines.extend(sub[1:])
        else:
            lines.append(f"{pad}- {_inline(item)}")
    return lines


def _is_flat(value: Any) -> bool:
    if isinstance(value, Mapping):
        return len(value) <= 4 and all(not isinstance(v, (Mapping, list)) for v in value.values())
    if isinstance(value, list):
        return all(not isinstance(v, (Mapping, list)) for v in value)
    return True


def _inline(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{format_text(str(k))}: {_inline(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return format_scalar(value)


def dump_case(case: EvalCase) -> str:
    """One case as text, in the shipped suites' layout (``- id: ...`` at column 0)."""
    pad = "  "
    out = [f"- id: {format_text(case.id)}", f"{pad}question: {format_block_text(case.question)}"]
    out.append(f"{pad}datasources: {_flow_list(case.datasources)}")
    out.append(f"{pad}status: {case.status.value}")
    if case.kind is not Kind.ANSWER:
        out.append(f"{pad}kind: {case.kind.value}")
    out.append(f"{pad}origin: {(case.origin or Origin.HAND).value}")
    if case.difficulty is not None:
        out.append(f"{pad}difficulty: {case.difficulty.value}")
    if case.tags:
        out.append(f"{pad}tags: {_flow_list(case.tags)}")
    if case.paraphrase_group is not None:
        out.append(f"{pad}paraphrase_group: {format_block_text(case.paraphrase_group)}")
    outcome = ", ".join(f"{format_text(role)}: {o.value}" for role, o in case.outcome.items())
    out.append(f"{pad}outcome: {{{outcome}}}")
    if case.tables:
        out.append(f"{pad}tables: {_flow_list(case.tables)}")
    if case.columns:
        out.append(f"{pad}columns: {_flow_list(case.columns)}")
    if case.kind is Kind.ANSWER:
        out.append(f"{pad}order_matters: {'true' if case.order_matters else 'false'}")
    if case.match:
        out.append(f"{pad}match: {_inline(dict(case.match))}")
    if case.sql is not None:
        out.append(_block_text("sql", case.sql, pad))
    elif case.kind is Kind.ANSWER:
        out.append(f"{pad}sql: null")
    if case.rows is not None:
        if case.rows:
            out.append(f"{pad}rows:")
            out.extend(_rows_block(case.rows, len(pad), "\n"))
        else:
            out.append(f"{pad}rows: []")
    if case.alt_sql:
        out.append(f"{pad}alt_sql:")
        for sql in case.alt_sql:
            block = _block_text("x", sql, pad)
            out.append(f"{pad}- " + block[len(pad) + 3 :].replace("\n" + pad + "  ", "\n" + pad + "    "))
    if case.alt_rows:
        out.append(f"{pad}alt_rows:")
        out.extend(_alt_block(case.alt_rows, len(pad), "\n"))
    if case.plan:
        out.append(f"{pad}plan:")
        out.extend(_data_block(dict(case.plan), pad + "  "))
    return "\n".join(out) + "\n"


def dump_suite(cases: Iterable[EvalCase], header: str = "", match: Mapping[str, Any] | None = None) -> str:
    """A whole new suite file as text."""
    lines: list[str] = []
    if header:
        for line in header.strip("\r\n").splitlines():
            line = _ESCAPE.sub("", line)
            lines.append(line if line.startswith("#") else f"# {line}".rstrip())
    lines.append("version: 1")
    if match:
        lines.append(f"match: {_inline(dict(match))}")
    body = [dump_case(c) for c in cases]
    if not body:
        lines.append("cases: []")
        return "\n".join(lines) + "\n"
    lines.append("cases:")
    return "\n".join(lines) + "\n" + "\n".join(body)

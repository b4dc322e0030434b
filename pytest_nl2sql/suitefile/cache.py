"""An on-disk cache of loaded suites, keyed on the suite's path and bytes.

Loading a large suite is the slowest part of collection, and under xdist every worker
collects the same files. A suite whose bytes did not change is read back from its cache entry
instead. Entries are written to a temporary file and moved into place (``os.replace``), so a
concurrent reader sees a whole entry or none; a broken entry is ignored and rewritten.

The format is JSON of the suite's plain data (``_FORMAT`` 6): a cache folder is a folder of the
user's, so an entry must never be able to run code when read (a pickle can). An entry is a
header line holding the sha256 of the JSON after it, then the JSON. Reading one checks that
sum, then ``json.loads`` plus building the cases; a sum that does not match (an entry edited
in place, cut short or corrupted) and anything unexpected in it are only a miss. The sum is
not a signature: whoever can write the folder can write a matching one, so keep the folder
where only you can write (what a forged entry can hold is still only a suite). Each case
is one JSON list in the order of ``_FIELDS``; enums are their values; a suite whose ``plan``
values have keys that are not text (JSON would turn them into text) is not cached. Each case
also keeps its digests (``suitefile.digest.digests_of``: the provenance's case digest, the
records' gold digest per role), computed from the case as it was read from its YAML when the
entry was written; a case read back from the entry is handed them (``digest.remember``), so
a warm run hashes no case. A forged entry could hold wrong digests: what a comparison of two
runs calls "case changed" (the same caution as above).

An entry's name is its slot (the package version and format, the suite's path, the way it is
loaded) and a sum over the slot and the suite's bytes; writing one removes the slot's other
entries (the suite before an edit), and entries unused for ``lock.CACHE_MAX_AGE_S`` (a hit
refreshes an entry's time), so a folder carried from commit to commit (a CI cache) stays bounded.

The folder (``suitefile.cachefolder``) is ``$NL2SQL_CACHE_DIR``, else ``$XDG_CACHE_HOME/pytest-nl2sql``, else
``~/.cache/pytest-nl2sql``; ``NL2SQL_CACHE_DIR=off`` disables the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any

from pytest_nl2sql import __version__, collector
from pytest_nl2sql.suitefile import clarifications as clar
from pytest_nl2sql.suitefile import digest as digests
from pytest_nl2sql.suitefile.cachefolder import cache_dir, cache_problem, cache_warning
from pytest_nl2sql.suitefile.lock import touch_if_old
from pytest_nl2sql.suitefile.model import (
    Difficulty,
    EvalCase,
    EvalSuite,
    Kind,
    Location,
    Origin,
    Outcome,
    Status,
)

__all__ = ["cache_dir", "cache_problem", "cache_warning", "decode_suite", "encode_suite", "entry_stat", "get", "key", "put"]

_FORMAT = 6
_SUFFIX = ".json"
_HEADER = b"pytest-nl2sql suite cache sha256="
#: An entry larger than this is not read (a suite is at most 32 MiB of YAML).
MAX_ENTRY_BYTES = 256 * 1024 * 1024

_FIELDS = (
    "id", "question", "datasources", "outcome", "status", "kind", "origin", "difficulty", "tags",
    "paraphrase_group", "tables", "columns", "order_matters", "sql", "rows", "alt_sql", "alt_rows",
    "plan", "match", "reviewed", "location", "clarify", "digests",
)  # fmt: skip


def key(path: str, digest: str, *extra: Any) -> str:
    """An entry's name: its slot (this package version and format, the suite's path, ``extra``:
    one slot per suite file and way of loading it), then a sha256 over the slot and the bytes'
    ``digest``. A slot holds one entry: writing one removes the slot's others (``put``)."""
    slot = "\0".join([__version__, str(_FORMAT), os.path.abspath(path), *map(str, extra)])
    whole = f"{slot}\0{digest}"
    return f"{hashlib.sha256(slot.encode()).hexdigest()[:_SLOT_HEX]}-{hashlib.sha256(whole.encode()).hexdigest()}"


_SLOT_HEX = 16
#: The names of suite cache entries (and of the entries of earlier formats, one sha256 each).
_ENTRY_NAME = re.compile(r"(?:[0-9a-f]{16}-)?[0-9a-f]{64}\.json")


# -- the format -------------------------------------------------------------------------


def _text_keys(value: Any) -> bool:
    """Do all maps in ``value`` have text keys (so JSON keeps them as they are)?"""
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is dict:
            for k, item in v.items():
                if type(k) is not str:
                    return False
                if type(item) is dict or type(item) is list:
                    stack.append(item)
        elif type(v) is list:
            stack.extend(i for i in v if type(i) is dict or type(i) is list)
    return True


def encode_suite(suite: EvalSuite) -> str | None:
    """The suite as cache text, or None when JSON could not keep it exactly."""
    cases = []
    for c in suite.cases:
        if c.plan is not None and not _text_keys(c.plan):
            return None
        readings = [{**clar.to_plain(r), "line": r.line} for r in c.clarifications]
        if not _text_keys(readings):
            return None
        case_digest, by_role = digests.digests_of(c)
        loc = c.location
        cases.append(
            [
                c.id, c.question, c.datasources, {r: o.value for r, o in c.outcome.items()}, c.status.value,
                c.kind.value, c.origin.value, c.difficulty.value if c.difficulty is not None else None, c.tags,
                c.paraphrase_group, c.tables, c.columns, c.order_matters, c.sql, c.rows, c.alt_sql, c.alt_rows,
                c.plan, c.match, [[r.sql, r.verdict, r.note] for r in c.reviewed],
                None if loc is None else [loc.line, loc.column] if loc.path == suite.path else [loc.line, loc.column, loc.path],
                [readings, c.default, c.turns] if readings or c.default is not None or c.turns != 1 else None,
                [case_digest, by_role],
            ]  # fmt: skip
        )
    data = {
        "format": _FORMAT,
        "path": suite.path,
        "version": suite.version,
        "match": suite.match,
        "sha256": suite.sha256,
        "cases": cases,
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


_STATUS = {e.value: e for e in Status}
_KIND = {e.value: e for e in Kind}
_ORIGIN = {e.value: e for e in Origin}
_DIFFICULTY = {e.value: e for e in Difficulty}
_OUTCOME = {e.value: e for e in Outcome}


def decode_suite(text: str, path: str | None = None) -> EvalSuite:
    """The suite an entry holds (as loaded through ``path``, when given: the same file under
    another spelling of its path); raises (ValueError, KeyError, TypeError, ...) on anything else."""
    # a large entry's hundred thousand values hold no cycles: without the pause the collector
    # walked the whole heap again while they were built (as the loader's parse_suite pauses it)
    with collector.paused():
        return _decode_suite(text, path)


def _decode_suite(text: str, path: str | None) -> EvalSuite:
    data = json.loads(text)
    if type(data) is not dict or data.get("format") != _FORMAT or type(data.get("cases")) is not list:
        raise ValueError("not a suite cache entry")
    if path is None:
        path = data["path"]
    if type(path) is not str:
        raise ValueError("path")
    cases = []
    for raw in data["cases"]:
        if type(raw) is not list or len(raw) != len(_FIELDS):
            raise ValueError("not a case")
        (cid, question, datasources, outcome, status, kind, origin, difficulty, tags, group, tables, columns,
         order_matters, sql, rows, alt_sql, alt_rows, plan, match, reviewed, loc, clarify, digested) = raw  # fmt: skip
        if type(outcome) is not dict:
            raise ValueError("outcome")
        case_digest, by_role = digested
        if type(by_role) is not dict:
            raise ValueError("digests")
        case = EvalCase(
            id=cid, question=question, datasources=datasources,
            outcome={role: _OUTCOME[o] for role, o in outcome.items()},
            status=_STATUS[status], kind=_KIND[kind], origin=_ORIGIN[origin],
            difficulty=None if difficulty is None else _DIFFICULTY[difficulty],
            tags=tags, paraphrase_group=group, tables=tables, columns=columns, order_matters=order_matters,
            sql=sql, rows=None if rows is None else tuple(rows), alt_sql=alt_sql, alt_rows=alt_rows, plan=plan, match=match,
            reviewed=tuple(tuple(r) for r in reviewed),
            location=None if loc is None else Location(loc[2] if len(loc) > 2 else path, loc[0], loc[1]),
            **({} if clarify is None else {
                "clarifications": [clar.from_plain(r) for r in clarify[0]], "default": clarify[1], "turns": clarify[2],
            }),
        )  # fmt: skip
        digests.remember(case, case_digest, by_role)
        cases.append(case)
    return EvalSuite(path=path, cases=cases, version=data["version"], match=data["match"], sha256=data["sha256"])


# -- the folder -------------------------------------------------------------------------


def get(name: str, path: str | None = None) -> EvalSuite | None:
    """The suite cached under ``name`` (its paths spelled as ``path``), or None."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        with open(folder / f"{name}{_SUFFIX}", "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_ENTRY_BYTES:
                return None
            touch_if_old(fh.fileno())  # a hit: in use
            # read what is there (plus one byte to see growth): read(MAX) would reserve 256 MB
            data = fh.read(size + 1)
        if len(data) > MAX_ENTRY_BYTES:
            return None
        header, _, body = data.partition(b"\n")
        if header != _HEADER + hashlib.sha256(body).hexdigest().encode("ascii"):
            return None  # edited, cut short or corrupted
        return decode_suite(body.decode("utf-8"), path)
    except Exception:  # a missing, partial, stale or tampered entry is only a miss
        return None


def entry_stat(name: str) -> tuple[int, ...] | None:
    """The identity of the entry ``name`` (inode, size, mtime, ctime), or None when there is none."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        st = os.stat(folder / f"{name}{_SUFFIX}")
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def put(name: str, suite: EvalSuite) -> None:
    folder = cache_dir()
    if folder is None:
        return
    try:
        text = encode_suite(suite)
    except (TypeError, ValueError, RecursionError):
        return  # a value JSON cannot hold: this suite is simply not cached
    if text is None:
        return
    from pytest_nl2sql.suitefile.lock import replace_bytes

    try:
        folder.mkdir(parents=True, exist_ok=True)
        body = text.encode("utf-8")
        header = _HEADER + hashlib.sha256(body).hexdigest().encode("ascii")
        replace_bytes(folder / f"{name}{_SUFFIX}", header + b"\n" + body)
    except OSError:
        return  # a read-only home is not an error: the cache is an optimisation
    from pytest_nl2sql.suitefile.lock import remove_unused

    # the folder stays bounded: the slot's earlier entries (the suite's bytes before an edit)
    # go now, anything else of the kind once unused for lock.CACHE_MAX_AGE_S (another version's
    # entries, a renamed suite's, the entries of an earlier format)
    mine, slot = f"{name}{_SUFFIX}", name.partition("-")[0] + "-"
    remove_unused(folder, _ENTRY_NAME, keep=lambda n: n == mine, at_once=lambda n: n.startswith(slot))

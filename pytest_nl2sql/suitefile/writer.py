"""The one writer of suite files: in-place row updates that keep everything else.

``update_rows(path, {case_id: (rows, alt_rows)})`` rewrites the ``rows``/``alt_rows`` of some
cases *in place*: it edits only the text of those values, so every comment, blank line, quote
style, key order and line ending elsewhere stays byte for byte (and a file whose rows did not
change is written back unchanged). Editing text at the node positions libyaml reports is what
makes a 10,000-case rewrite cost about one fast load, where a ruamel round-trip load+dump
costs five. ``SuiteEdit`` / ``open_suite`` re-read the file under the lock
(``suitefile.lock``) so a second writer never loses an update; new text is formatted by
``suitefile.yamltext``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from pytest_nl2sql.errors import Problem, SuiteError
from pytest_nl2sql.suitefile.loader import CaseSpans, load_text, parse_suite, read_suite_bytes
from pytest_nl2sql.suitefile.lock import lock_for, write_atomic
from pytest_nl2sql.suitefile.model import EvalCase
from pytest_nl2sql.suitefile.textedit import (
    Edits,
    column,
    content_end,
    line_end,
    line_start,
    newline,
)
from pytest_nl2sql.suitefile.values import normalize_value
from pytest_nl2sql.suitefile.yamltext import (
    alt_block,
    data_block,
    format_row,
    reviewed_item,
    rows_block,
)

__all__ = [
    "RowsUpdate",
    "SuiteEdit",
    "apply_plans",
    "apply_rows",
    "edit_suite",
    "open_suite",
    "update_plans",
    "update_rows",
]

Rows = Sequence[Mapping[str, Any]]


@attrs.frozen
class RowsUpdate:
    """New expected rows for one case: ``rows`` and one list of rows per ``alt_sql``; for a
    clarify case, ``clarification_rows``: one list of rows per clarification (None: keep).
    ``rows`` None keeps the case's rows (a clarify case has no sql of its own)."""

    rows: Rows | None
    alt_rows: Sequence[Rows] | None = None
    clarification_rows: Sequence[Rows | None] | None = None


# -- in-place row updates ----------------------------------------------------------------


def _flow_value(key: str, value: Any) -> str:
    if key == "rows":
        return "[" + ", ".join(format_row(r) for r in value) + "]"
    return "[" + ", ".join(_flow_value("rows", rows) for rows in value) + "]"


def _edit_value(
    edits: Edits, text: str, nodes: dict[str, tuple[Any, Any]], spans: CaseSpans, key: str, value: Any, after: Sequence[str], nl: str
) -> None:
    if key in nodes:
        knode, vnode = nodes[key]
        if spans.flow:
            edits.add(vnode.start_mark.index, content_end(vnode, text), _flow_value(key, value))
            return
        empty = not value
        is_block = type(vnode).__name__ == "SequenceNode" and not vnode.flow_style and vnode.value
        if is_block and not empty:
            col = column(text, vnode.start_mark.index)
            lines = (rows_block if key == "rows" else alt_block)(value, col, nl)
            edits.add(vnode.start_mark.index, content_end(vnode, text), nl.join(lines)[col:])
            return
        kstart = knode.start_mark.index
        vend = content_end(vnode, text)
        colon = text.index(":", knode.end_mark.index)
        head_end = vnode.start_mark.index if vend > vnode.start_mark.index else colon + 1
        if is_block:  # block list -> []
            eol = line_end(text, colon)
            comment = text[colon + 1 : eol].rstrip() if "#" in text[colon + 1 : eol] else ""
            edits.add(kstart, vend, f"{key}: []{comment}")
            return
        if empty:
            edits.add(kstart, max(vend, head_end), f"{key}: []")
            return
        # an inline value (null, [], a flow list): the new block goes under the key's line
        tail_start = max(vend, colon + 1)
        eol = line_end(text, tail_start)
        edits.add(kstart, tail_start, f"{key}:")
        lines = (rows_block if key == "rows" else alt_block)(value, spans.indent, nl)
        edits.add(eol, eol, nl + nl.join(lines))
        return
    # the key is missing: add it after the key it follows in the canonical order
    anchor_key = next((k for k in after if k in nodes), None)
    if anchor_key is None:
        anchor = max(content_end(v, text) for _, v in nodes.values())
    else:
        anchor = content_end(nodes[anchor_key][1], text)
    if spans.flow:
        edits.add(anchor, anchor, f", {key}: {_flow_value(key, value)}")
        return
    pad = " " * spans.indent
    if not value:
        edits.add(anchor, anchor, f"{nl}{pad}{key}: []")
        return
    lines = (rows_block if key == "rows" else alt_block)(value, spans.indent, nl)
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
    nl = newline(text)
    edits = Edits()
    for cid, update in updates.items():
        nodes = spans[cid].nodes
        case = current[cid]
        if update.clarification_rows is not None:
            _edit_clarification_rows(edits, text, nodes, case, update.clarification_rows, nl)
        if update.rows is None:
            continue
        rows = [dict(r) for r in update.rows]
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


def _edit_clarification_rows(
    edits: Edits, text: str, nodes: dict[str, tuple[Any, Any]], case: EvalCase, updates: Sequence[Rows | None], nl: str
) -> None:
    """Each clarification's ``rows`` edited in place, as a case's rows are (``_edit_value`` on
    the clarification's own map: its keys, its indent)."""
    if "clarifications" not in nodes:
        return
    items = nodes["clarifications"][1].value
    for reading, node, new in zip(case.clarifications, items, updates, strict=False):
        if new is None or type(node).__name__ != "MappingNode":
            continue
        rows = [dict(r) for r in new]
        if reading.rows is not None and _same(reading.rows, rows):
            continue
        sub = _map_spans(node)
        _edit_value(edits, text, sub.nodes, sub, "rows", rows, ("sql", "reply", "when", "about"), nl)


def _map_spans(node: Any) -> CaseSpans:
    """A clarification's map as the writer edits a case: its keys, its indent."""
    return CaseSpans(
        start=node.start_mark.index,
        end=node.end_mark.index,
        indent=node.value[0][0].start_mark.column if node.value else 0,
        flow=bool(node.flow_style),
        nodes={k.value: (k, v) for k, v in node.value},
    )


def reading_spans(spans: Mapping[str, CaseSpans]) -> dict[str, CaseSpans]:
    """``"CASE_ID#N"`` (N from 1) -> the spans of that case's N-th clarification."""
    out: dict[str, CaseSpans] = {}
    for cid, span in spans.items():
        if "clarifications" not in span.nodes:
            continue
        for n, node in enumerate(span.nodes["clarifications"][1].value, 1):
            if type(node).__name__ == "MappingNode" and node.value:
                out[f"{cid}#{n}"] = _map_spans(node)
    return out


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




def apply_plans(text: str, plans: Mapping[str, Mapping[str, Any]], path: str = "<suite>") -> str:
    """``text`` with each case of ``plans`` given that ``plan`` (added after the case's last
    field, or replacing the plan it has); every other byte stays as it was."""
    spans: dict[str, CaseSpans] = {}
    parse_suite(text, path, strict=False, spans=spans)
    return _apply_plans(text, spans, plans, path)


def _apply_plans(text: str, spans: Mapping[str, CaseSpans], plans: Mapping[str, Mapping[str, Any]], path: str) -> str:
    nl = newline(text)
    edits = Edits()
    for case_id, plan in plans.items():
        span = spans.get(case_id)
        if span is None:
            raise SuiteError([Problem(path, 0, 0, f"no case {case_id!r} to give a plan", case_id)])
        if span.flow:
            raise SuiteError([Problem(path, 0, 0, "a case written as a flow map {...} cannot get a block plan; write it as a block", case_id)])
        pad = " " * span.indent
        block = nl.join([f"{pad}plan:", *data_block(dict(plan), pad + "  ")])
        if "plan" in span.nodes:
            key, value = span.nodes["plan"]
            start = line_start(text, key.start_mark.index)
            edits.add(start, content_end(value, text), block)
            continue
        last = max(content_end(v, text) for _, v in span.nodes.values())
        at = line_end(text, last)  # after a trailing comment on the last line
        edits.add(at, at, nl + block)
    return edits.apply(text)


def update_plans(
    path: str | os.PathLike[str], plans: Mapping[str, Mapping[str, Any]], sql_of: Mapping[str, str | None]
) -> tuple[bool, tuple[str, ...]]:
    """Write ``plans`` into the suite at ``path`` under its lock; ``(changed, dropped)``.

    A key ``CASE_ID#N`` gives the case's N-th clarification its plan.
    ``sql_of`` is each case's SQL as the plans were derived from it: a case whose SQL another
    writer changed meanwhile (or that is gone) is dropped, not given a stale plan."""
    with lock_for(path):
        text, _ = load_text(path)
        spans: dict[str, CaseSpans] = {}
        suite = parse_suite(text, str(path), strict=False, spans=spans)  # parsed once, under the lock
        now = {c.id: c.sql for c in suite.cases}
        for c in suite.cases:  # a clarification's plan is keyed "CASE_ID#N" (issue 24)
            now.update({f"{c.id}#{n}": r.sql for n, r in enumerate(c.clarifications, 1)})
        dropped = tuple(cid for cid in plans if cid not in now or now[cid] != sql_of.get(cid))
        kept = {cid: p for cid, p in plans.items() if cid not in dropped}
        new = _apply_plans(text, {**spans, **reading_spans(spans)}, kept, str(path))
        if new == text:
            return False, dropped
        write_atomic(path, ("\ufeff" if _has_bom(path) else "") + new)
    return True, dropped


def apply_reviewed(text: str, case_id: str, entry: Mapping[str, Any], path: str = "<suite>") -> str:
    """``text`` with ``entry`` (``sql``, ``verdict``, ``note``) added to the case's ``reviewed``
    list: appended after the entries it has (their comments kept), or a new ``reviewed:`` key
    after the case's last field; every other byte stays as it was."""
    spans: dict[str, CaseSpans] = {}
    parse_suite(text, path, strict=False, spans=spans)
    span = spans.get(case_id)
    if span is None:
        raise SuiteError([Problem(path, 0, 0, f"no case {case_id!r} in this suite", case_id)])
    if span.flow:
        raise SuiteError([Problem(path, 0, 0, "a case written as a flow map {...} cannot get a block list; write it as a block", case_id)])
    nl = newline(text)
    edits = Edits()
    pad = " " * span.indent
    if "reviewed" in span.nodes:
        key, value = span.nodes["reviewed"]
        if type(value).__name__ == "SequenceNode" and not value.flow_style and value.value:
            at = line_end(text, content_end(value, text))
            item_pad = " " * column(text, value.value[0].start_mark.index - 2)
            edits.add(at, at, nl + reviewed_item(entry, item_pad, nl))
            return edits.apply(text)
        raise SuiteError([Problem(path, key.start_mark.line + 1, key.start_mark.column + 1,
                                  "reviewed is not a block list here; write it as one ('- sql: ...' lines) to add to it", case_id)])
    last = max(content_end(v, text) for _, v in span.nodes.values())
    at = line_end(text, last)  # after a trailing comment on the last line
    edits.add(at, at, nl + f"{pad}reviewed:" + nl + reviewed_item(entry, pad + "  ", nl))
    return edits.apply(text)


def add_reviewed(path: str | os.PathLike[str], case_id: str, entry: Mapping[str, Any]) -> None:
    """Add a reviewed answer to a case of the suite at ``path``, under the file's lock; the
    result is parsed before it replaces the file (never half-written)."""
    with lock_for(path):
        text, _ = load_text(path)
        new = apply_reviewed(text, case_id, entry, str(path))
        parse_suite(new, str(path), strict=False)  # the edit must read back: raises SuiteError if not
        write_atomic(path, ("\ufeff" if _has_bom(path) else "") + new)

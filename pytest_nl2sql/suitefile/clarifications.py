"""A clarify case's readings: what the scripted user answers when the engine asks (issue 24).

A case whose outcome is ``clarify`` for some role may list ``clarifications``, one per reading
of its question::

    clarifications:
    - about: per year                 # what is ambiguous (unique in the case)
      when: [year, annual]            # how to recognise that the engine asked about it
      reply: Per year, please.        # what the user says
      sql: SELECT ...                 # the reviewed query of the clarified question
      rows: [...]                     # what sql returns: written by regenerate, never by hand
      plan: {...}                     # optional: the plan mode plans serves after the reply
    default: per year                 # optional: the reading used when the engine asks about
                                      # something else (the user then says NO_PREFERENCE)
    turns: 1                          # how many questions the engine may ask (default 1)

``when`` is one entry or a list; an entry ``re:PATTERN`` is a regular expression searched in
the engine's question (case-insensitive); any other entry is words, and it matches when each of
its words starts a word of the question (case-insensitive: ``spend`` matches "spending").
The scripted user answers with the first reading, in file order, that one entry matches.

This module reads these keys for the loader (``path:line:col`` problems, as every other
field), checks the rules that tie them to the case, and recognises a question.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from pytest_nl2sql.suitefile.fields import BAD, FieldReader, nearest, show_node
from pytest_nl2sql.suitefile.model import Row
from pytest_nl2sql.suitefile.yamlnodes import MappingNode, ScalarNode, SequenceNode

__all__ = [
    "CASE_KEYS",
    "CLARIFICATION_KEYS",
    "MAX_TURNS",
    "NO_PREFERENCE",
    "Clarification",
    "from_plain",
    "read_field",
    "recognise",
    "rules",
    "to_plain",
]

#: The case keys this module reads.
CASE_KEYS = ("clarifications", "default", "turns")
#: The keys of one clarification, in the order the writer puts them.
CLARIFICATION_KEYS = ("about", "when", "reply", "sql", "rows", "plan")
_REQUIRED = ("about", "when", "reply")
#: What the scripted user says when the engine asks about no listed reading and a default exists.
NO_PREFERENCE = "No preference - whichever you think is most usual."
#: The most questions a case may allow (a conversation is bounded).
MAX_TURNS = 5
#: The longest ``re:`` pattern accepted.
MAX_PATTERN_CHARS = 500


def _rows(value: Any) -> tuple[Row, ...] | None:
    return None if value is None else tuple(dict(r) for r in value)


def _tuple(value: Any) -> tuple:
    return (value,) if isinstance(value, str) else tuple(value or ())


@attrs.frozen(kw_only=True)
class Clarification:
    """One reading of an ambiguous question and the reviewed answer to it."""

    about: str
    when: tuple[str, ...] = attrs.field(converter=_tuple)
    reply: str
    sql: str | None = None
    rows: tuple[Row, ...] | None = attrs.field(default=None, converter=_rows)
    plan: Mapping[str, Any] | None = None
    line: int = attrs.field(default=0, eq=False)

    def matches(self, question: str) -> bool:
        return any(_entry_matches(entry, question) for entry in self.when)


def _entry_matches(entry: str, question: str) -> bool:
    if entry.startswith("re:"):
        return re.search(entry[3:], question, re.IGNORECASE) is not None
    words = entry.split()
    return bool(words) and all(re.search(r"(?<!\w)" + re.escape(w), question, re.IGNORECASE) for w in words)


def recognise(
    question: str, clarifications: Sequence[Clarification], default: str | None
) -> tuple[Clarification | None, str]:
    """The reading the engine's ``question`` asks about and what the scripted user replies:
    ``(reading, reply)``; ``(default reading, NO_PREFERENCE)`` when none matches and the case
    has a ``default``; ``(None, NO_PREFERENCE)`` when neither."""
    for c in clarifications:
        if c.matches(question or ""):
            return c, c.reply
    if default is not None:
        for c in clarifications:
            if c.about == default:
                return c, NO_PREFERENCE
    return None, NO_PREFERENCE


# -- plain data (the suite cache, drafts) ------------------------------------------------


def to_plain(c: Clarification) -> dict[str, Any]:
    out: dict[str, Any] = {"about": c.about, "when": list(c.when) if len(c.when) != 1 else c.when[0], "reply": c.reply}
    if c.sql is not None:
        out["sql"] = c.sql
    if c.rows is not None:
        out["rows"] = [dict(r) for r in c.rows]
    if c.plan is not None:
        out["plan"] = dict(c.plan)
    return out


def from_plain(data: Mapping[str, Any]) -> Clarification:
    return Clarification(
        about=data["about"], when=data["when"], reply=data["reply"], sql=data.get("sql"),
        rows=data.get("rows"), plan=data.get("plan"), line=int(data.get("line") or 0),
    )  # fmt: skip


# -- reading (the loader calls these) -----------------------------------------------------


def read_field(reader: FieldReader, key: str, node: Any) -> Any:
    """The value of case key ``key`` (one of ``CASE_KEYS``), or ``BAD`` after a problem."""
    before = len(reader.problems)
    if key == "clarifications":
        value: Any = _clarifications(reader, node)
    elif key == "default":
        value = reader.text(node, "default", allow_null=True)
    else:
        value = _turns(reader, node)
    return BAD if len(reader.problems) > before else value


def _turns(reader: FieldReader, node: Any) -> int | None:
    from pytest_nl2sql.suitefile.fields import scalar_value_safe

    value = scalar_value_safe(node) if type(node) is ScalarNode else None
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_TURNS:
        return value
    reader.err(node, f"turns must be a whole number from 1 to {MAX_TURNS} (how many questions the engine may ask), got {show_node(node)}")
    return None


def _when(reader: FieldReader, node: Any, where: str) -> tuple[str, ...] | None:
    if type(node) is SequenceNode:
        entries = reader.names(node, f"{where}.when", example="[year, annual]")
        if entries == ():
            reader.err(node, f"{where}.when lists nothing (give words or 're:PATTERN')")
            return None
        nodes = list(node.value)
    else:
        one = reader.text(node, f"{where}.when")
        entries = None if one is None else (one,)
        nodes = [node]
    if entries is None:
        return None
    ok = True
    for entry, at in zip(entries, nodes, strict=False):
        if not entry.startswith("re:"):
            continue
        pattern = entry[3:]
        if not pattern.strip() or len(pattern) > MAX_PATTERN_CHARS:
            reader.err(at, f"{where}.when: a 're:' pattern must be 1 to {MAX_PATTERN_CHARS} characters")
            ok = False
            continue
        try:
            re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            reader.err(at, f"{where}.when: {entry!r} is not a valid regular expression ({exc}); write words, or fix the pattern")
            ok = False
    return entries if ok else None


def _clarifications(reader: FieldReader, node: Any) -> tuple[Clarification, ...] | None:
    if type(node) is not SequenceNode or not node.value:
        reader.err(node, "clarifications must be a list of readings, e.g. - {about: per year, when: [year], reply: Per year., sql: SELECT ...}")
        return None
    out: list[Clarification] = []
    seen: dict[str, int] = {}
    for n, item in enumerate(node.value, 1):
        where = f"clarifications[{n}]"
        if type(item) is not MappingNode:
            reader.err(item, f"{where} must be a map with about, when, reply and sql, got {show_node(item)}")
            continue
        raw: dict[str, Any] = {}
        for k, v in item.value:
            key = k.value if type(k) is ScalarNode else None
            if key not in CLARIFICATION_KEYS:
                reader.err(k, f"{where}: unknown key {key!r}: {nearest(str(key), CLARIFICATION_KEYS)}")
            elif key in raw:
                reader.err(k, f"{where}: duplicate key {key!r}")
            else:
                raw[key] = v
        missing = [k for k in _REQUIRED if k not in raw]
        if missing:
            reader.err(item, f"{where}: missing {', '.join(repr(k) for k in missing)} (a reading has about, when and reply)")
            continue
        about = reader.text(raw["about"], f"{where}.about")
        when = _when(reader, raw["when"], where)
        reply = reader.text(raw["reply"], f"{where}.reply")
        sql = reader.text(raw["sql"], f"{where}.sql", allow_null=True) if "sql" in raw else None
        rows = reader.rows(raw["rows"], f"{where}.rows") if "rows" in raw else None
        plan = reader.free_map(raw["plan"], f"{where}.plan") if "plan" in raw else None
        if about is None or when is None or reply is None:
            continue
        if about in seen:
            reader.err(raw["about"], f"{where}: about {about!r} is already the reading at line {seen[about]} (each reading is about something else)")
            continue
        seen[about] = item.start_mark.line + 1
        if rows is not None and sql is None:
            reader.err(raw["rows"], f"{where}: rows without sql (rows are what sql returns; remove them or add sql)")
            continue
        out.append(Clarification(about=about, when=when, reply=reply, sql=sql, rows=rows, plan=plan, line=item.start_mark.line + 1))
    return tuple(out)


def rules(reader: FieldReader, case: Any, at: Any) -> None:
    """The rules that tie ``clarifications``, ``default`` and ``turns`` to the rest of the case
    (``at(key)`` is the node to point at)."""
    from pytest_nl2sql.suitefile.model import Outcome, Status

    has_clarify = any(o is Outcome.CLARIFY for o in case.outcome.values())
    for key in CASE_KEYS:
        present = (case.clarifications if key == "clarifications" else case.default if key == "default" else case.turns != 1)
        if present and not has_clarify:
            reader.err(at(key), f"{key} belongs to a case whose outcome is clarify for some role (this case has none)")
            return
    if case.default is not None:
        abouts = tuple(c.about for c in case.clarifications)
        if not abouts:
            reader.err(at("default"), "default names a reading, but the case lists no clarifications")
        elif case.default not in abouts:
            reader.err(at("default"), f"default {case.default!r} is no reading's about: {nearest(case.default, abouts)}")
    if case.status is Status.APPROVED and reader.strict:
        for c in case.clarifications:
            if c.sql is None:
                reader.err(at("clarifications"), f"clarification {c.about!r} (line {c.line}) of an approved case needs sql, the reviewed answer to the clarified question")

"""Reading a suite's fields: one reader per family of value (text, names, enums, booleans,
rows and alt_rows, the match rule, the outcome map, free-form maps).

Each reader takes a YAML node, returns the value, or reports a ``path:line:col`` problem (with
what would be right) and returns None; ``loader`` composes them into cases and suites and
checks the rules that tie fields together.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

import attrs

from pytest_nl2sql.errors import Problem
from pytest_nl2sql.suitefile.model import Outcome
from pytest_nl2sql.suitefile.yamlnodes import (
    BadScalar,
    MappingNode,
    ScalarNode,
    SequenceNode,
    check_tag,
    scalar_value,
    to_python,
)

__all__ = [
    "BAD",
    "MATCH_COLUMN_TOLERANCE",
    "MATCH_OPTIONS",
    "REQUIRED",
    "WORD",
    "CaseSpans",
    "FieldReader",
    "is_null",
    "nearest",
    "row_key",
    "scalar_value_safe",
    "show_node",
]

REQUIRED = ("id", "question", "datasources", "status", "outcome")
#: The keys of one ``reviewed:`` entry, and the verdicts it may give.
REVIEWED_KEYS = ("sql", "verdict", "note")
REVIEWED_VERDICTS = ("equivalent",)

#: ``match:`` settings (suite default or per case) and the values each accepts.
MATCH_OPTIONS: dict[str, tuple[str, ...] | type] = {
    "column_names": ("ignore", "require"),
    "column_order": ("any", "strict"),
    "duplicates": ("count", "ignore"),
    "extra_columns": ("forbid", "allow"),
    "float_tolerance": float,  # the older spelling: abs_tol = rel_tol = the value
    "abs_tol": float,
    "rel_tol": float,
}
#: The per-column tolerance, ``column_tolerance: {column: {abs_tol: .., rel_tol: ..}}``.
MATCH_COLUMN_TOLERANCE = "column_tolerance"

WORD = re.compile(r"[^\s\[\]]+\Z")


@attrs.define
class CaseSpans:
    """Where a case's parts stand in the text (code-point offsets), for the writer."""

    start: int
    end: int
    indent: int
    flow: bool
    nodes: dict[str, tuple[Any, Any]] = attrs.field(factory=dict)
    """key name -> (key node, value node)."""


def nearest(word: str, choices: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if close:
        return f"did you mean '{close[0]}'?"
    return "expected one of: " + ", ".join(choices)

BAD = object()

def row_key(row: dict[str, Any]) -> tuple:
    return tuple(sorted(row.items(), key=lambda kv: kv[0]))

def scalar_value_safe(node: Any) -> Any:
    try:
        return scalar_value(node)
    except BadScalar:
        return node.value

def is_null(node: Any) -> bool:
    return type(node) is ScalarNode and scalar_value_safe(node) is None and node.value in ("", "~", "null", "Null", "NULL")

def _kind(node: Any) -> str:
    if type(node) is MappingNode:
        return "map"
    if type(node) is SequenceNode:
        return "list"
    return "value"

def show_node(node: Any) -> str:
    if type(node) is ScalarNode:
        value = scalar_value_safe(node)
        return "null" if value is None else repr(value)
    return f"a {_kind(node)}"



class FieldReader:
    """The value readers of one suite file; problems collect in ``problems``."""

    def __init__(self, path: str, strict: bool, spans: dict[str, CaseSpans] | None) -> None:
        self.path = path
        self.strict = strict
        self.spans = spans
        self.problems: list[Problem] = []
        self.case_id: str | None = None

    # -- reporting -------------------------------------------------------------------
    def err(self, node: Any, message: str) -> None:
        mark = node.start_mark
        self.problems.append(Problem(self.path, mark.line + 1, mark.column + 1, message, self.case_id))

    # -- value readers (each returns None after reporting a problem) ------------------
    def text(self, node: Any, field: str, *, allow_null: bool = False) -> str | None:
        if type(node) is ScalarNode:
            try:
                value = scalar_value(node)
            except BadScalar as exc:
                self.err(node, f"{field}: {exc}")
                return None
            if value is None and allow_null:
                return None
            if isinstance(value, str):
                if not value.strip():
                    hint = "it is required" if field in REQUIRED else f"write the {field}, or leave the key out"
                    self.err(node, f"{field} is empty ({hint})")
                    return None
                return value
            shown = "null" if value is None else repr(value)
            hint = f"quote it: '{node.value}'" if node.value else "write text"
            self.err(node, f"{field} must be text, got {shown} ({hint})")
            return None
        self.err(node, f"{field} must be text, got a {_kind(node)}")
        return None

    def names(self, node: Any, field: str, *, example: str, word: bool = False) -> tuple[str, ...] | None:
        if type(node) is not SequenceNode:
            if type(node) is ScalarNode and scalar_value_safe(node) is None:
                return ()
            self.err(node, f"{field} must be a list, e.g. {field}: {example}")
            return None
        out: list[str] = []
        ok = True
        for item in node.value:
            value = self.text(item, f"{field} entry")
            if value is None:
                ok = False
                continue
            if word and not WORD.match(value):
                self.err(item, f"{field} entry {value!r} must be one word (no spaces or brackets)")
                ok = False
                continue
            if value in out:
                self.err(item, f"{field} lists {value!r} twice")
                ok = False
                continue
            out.append(value)
        return tuple(out) if ok else None

    def enum(self, node: Any, field: str, enum_cls: Any) -> Any:
        choices = tuple(e.value for e in enum_cls)
        value = None
        if type(node) is ScalarNode:
            try:
                value = scalar_value(node)
            except BadScalar as exc:
                self.err(node, f"{field}: {exc}")
                return None
        if isinstance(value, str) and value in choices:
            return enum_cls(value)
        got = repr(value) if value is not None else f"a {_kind(node)}"
        self.err(node, f"{field} must be one of {', '.join(choices)}, got {got}")
        return None

    def boolean(self, node: Any, field: str) -> bool | None:
        if type(node) is ScalarNode:
            try:
                value = scalar_value(node)
            except BadScalar:
                value = node.value
            if isinstance(value, bool):
                return value
        self.err(node, f"{field} must be true or false, got {show_node(node)}")
        return None

    def rows(self, node: Any, field: str) -> tuple[dict[str, Any], ...] | None:
        if type(node) is not SequenceNode:
            if type(node) is ScalarNode and scalar_value_safe(node) is None:
                return None
            self.err(node, f"{field} must be a list of {{column: value}} maps, got {show_node(node)}")
            return None
        out: list[dict[str, Any]] = []
        first: tuple[str, ...] | None = None
        ok = True
        for n, item in enumerate(node.value, 1):
            if type(item) is not MappingNode:
                self.err(item, f"{field}: row {n} must be a {{column: value}} map, got {show_node(item)}")
                ok = False
                continue
            try:
                check_tag(item)
            except BadScalar as exc:
                self.err(item, f"{field}: row {n}: {exc}")
                ok = False
                continue
            row: dict[str, Any] = {}
            for k, v in item.value:
                if type(k) is not ScalarNode:
                    self.err(k, f"{field}: row {n} has a column name that is not text")
                    ok = False
                    continue
                if type(v) is not ScalarNode:
                    self.err(
                        v,
                        f"{field}: row {n}, column {k.value!r} holds a {_kind(v)} "
                        "(a value must be text, a number, true/false or null)",
                    )
                    ok = False
                    continue
                if k.value in row:
                    self.err(k, f"{field}: row {n} names column {k.value!r} twice")
                    ok = False
                    continue
                try:
                    row[k.value] = scalar_value(v)
                except BadScalar as exc:
                    self.err(v, f"{field}: row {n}, column {k.value!r}: {exc}")
                    ok = False
            keys = tuple(row)
            if first is None:
                first = keys
            elif keys != first and set(keys) != set(first):
                self.err(
                    item,
                    f"{field}: row {n} has columns {list(keys)} but row 1 has {list(first)} "
                    "(every row has the same columns)",
                )
                ok = False
            out.append(row)
        return tuple(out) if ok else None

    def match(self, node: Any) -> dict[str, Any] | None:
        if type(node) is not MappingNode:
            self.err(node, "match must be a map, e.g. match: {column_names: ignore}")
            return None
        out: dict[str, Any] = {}
        for k, v in node.value:
            key = k.value if type(k) is ScalarNode else None
            if key == MATCH_COLUMN_TOLERANCE:
                columns = self.column_tolerance(v)
                if columns is not None:
                    out[key] = columns
                continue
            if key not in MATCH_OPTIONS:
                known = (*MATCH_OPTIONS, MATCH_COLUMN_TOLERANCE)
                self.err(k, f"unknown match setting {key!r}: {nearest(str(key), known)}")
                continue
            allowed = MATCH_OPTIONS[key]
            value = scalar_value_safe(v) if type(v) is ScalarNode else v
            if allowed is float:
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
                    out[key] = float(value)
                else:
                    self.err(v, f"match.{key} must be a number >= 0, got {show_node(v)}")
            elif value in allowed:
                out[key] = value
            else:
                self.err(v, f"match.{key} must be one of {', '.join(allowed)}, got {show_node(v)}")
        return out

    def column_tolerance(self, node: Any) -> dict[str, dict[str, float]] | None:
        """``{column: {abs_tol: .., rel_tol: ..}}``: a tolerance for some gold columns."""
        where = f"match.{MATCH_COLUMN_TOLERANCE}"
        if type(node) is not MappingNode:
            self.err(node, f"{where} must map gold columns to a tolerance, e.g. {{Total: {{abs_tol: 0.005}}}}")
            return None
        out: dict[str, dict[str, float]] = {}
        for k, v in node.value:
            column = self.text(k, f"{where} column")
            if column is None:
                continue
            if type(v) is not MappingNode or not v.value:
                self.err(v, f"{where}.{column} must be a map with abs_tol and/or rel_tol, got {show_node(v)}")
                continue
            spec: dict[str, float] = {}
            for tk, tv in v.value:
                tkey = tk.value if type(tk) is ScalarNode else None
                if tkey not in ("abs_tol", "rel_tol"):
                    self.err(tk, f"unknown {where}.{column} setting {tkey!r}: {nearest(str(tkey), ('abs_tol', 'rel_tol'))}")
                    continue
                value = scalar_value_safe(tv) if type(tv) is ScalarNode else tv
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
                    spec[tkey] = float(value)
                else:
                    self.err(tv, f"{where}.{column}.{tkey} must be a number >= 0, got {show_node(tv)}")
            out[column] = spec
        return out

    def outcome(self, node: Any) -> dict[str, Outcome] | None:
        if type(node) is not MappingNode or not node.value:
            self.err(node, "outcome must map each role to an outcome, e.g. {admin: allowed, viewer: refused}")
            return None
        out: dict[str, Outcome] = {}
        for k, v in node.value:
            role = self.text(k, "role name")
            if role is None:
                continue
            if role in out:
                self.err(k, f"outcome names role {role!r} twice")
                continue
            value = self.enum(v, f"outcome for {role}", Outcome)
            if value is not None:
                out[role] = value
        return out

    def reviewed(self, node: Any) -> tuple | None:
        """``reviewed: [{sql: ..., verdict: equivalent, note: ...}]``: answers a person judged."""
        example = "reviewed: [{sql: 'SELECT ...', verdict: equivalent, note: 'why'}]"
        if type(node) is not SequenceNode:
            self.err(node, f"reviewed must be a list of reviewed answers, e.g. {example}")
            return None
        out = []
        for item in node.value:
            if type(item) is not MappingNode:
                self.err(item, f"each reviewed answer is a map with sql, verdict and note, e.g. {example}")
                continue
            fields: dict[str, Any] = {}
            for k, v in item.value:
                key = k.value if type(k) is ScalarNode else None
                if key not in REVIEWED_KEYS:
                    self.err(k, f"unknown key {key!r} in a reviewed answer: {nearest(str(key), REVIEWED_KEYS)}")
                elif key in fields:
                    self.err(k, f"duplicate key {key!r}")
                else:
                    fields[key] = v
            sql = self.text(fields["sql"], "reviewed sql") if "sql" in fields else None
            if "sql" not in fields:
                self.err(item, f"a reviewed answer needs its sql, e.g. {example}")
            verdict = self.text(fields["verdict"], "reviewed verdict") if "verdict" in fields else None
            if "verdict" not in fields:
                self.err(item, f"a reviewed answer needs its verdict (equivalent), e.g. {example}")
            elif verdict is not None and verdict not in REVIEWED_VERDICTS:
                self.err(fields["verdict"], f"reviewed verdict must be one of {', '.join(REVIEWED_VERDICTS)}, got {verdict!r}")
                verdict = None
            note = self.text(fields["note"], "reviewed note", allow_null=True) if "note" in fields else None
            if sql is not None and verdict is not None:
                out.append((sql, verdict, note))
        return tuple(out)

    def alt_rows(self, node: Any) -> tuple | None:
        if type(node) is not SequenceNode:
            if is_null(node):
                return ()
            self.err(node, f"alt_rows must be a list with one list of rows per alt_sql, got {show_node(node)}")
            return None
        out = []
        for n, item in enumerate(node.value, 1):
            rows = self.rows(item, f"alt_rows[{n}]")
            out.append(rows if rows is not None else ())
        return tuple(out)

    def free_map(self, node: Any, field: str) -> dict | None:
        if is_null(node):
            return None
        if type(node) is not MappingNode:
            self.err(node, f"{field} must be a map, got {show_node(node)}")
            return None
        try:
            return to_python(node)
        except BadScalar as exc:
            self.err(exc.node if exc.node is not None else node, f"{field}: {exc}")
            return None


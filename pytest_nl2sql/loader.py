"""The suite loader: YAML text -> ``EvalSuite``, enforcing every rule of the spec.

``load_suite(path)`` reports **all** problems of a file at once as one ``SuiteError``, each
``path:line:col: case 'ID': what is wrong (what would be right)``. Whatever the input -- binary,
truncated, not UTF-8, deeply nested, an alias bomb, huge -- it raises only ``SuiteError``.

Loading is fast (libyaml plus a single pass over the nodes, see ``yamlnodes.py``) and a
suite loaded once is cached on disk keyed on its path and bytes (see ``cache.py``; JSON, never
a format that can run code). Free-form values (``plan``) may nest at most
``yamlnodes.MAX_NESTING`` (64) levels; deeper ones are refused at their line.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import attrs

from . import cache
from .errors import Problem, SuiteError
from .model import (
    Difficulty,
    EvalCase,
    EvalSuite,
    Kind,
    Location,
    Origin,
    Outcome,
    Status,
)
from .yamlnodes import (
    BadScalar,
    MappingNode,
    ScalarNode,
    SequenceNode,
    YamlSyntaxError,
    check_tag,
    compose,
    scalar_value,
    to_python,
)

__all__ = [
    "CASE_KEYS",
    "MATCH_OPTIONS",
    "MAX_SUITE_BYTES",
    "CaseSpans",
    "load_suite",
    "parse_suite",
]

#: The keys a case may have, in the order the writer puts them.
CASE_KEYS = (
    "id",
    "question",
    "datasources",
    "status",
    "kind",
    "origin",
    "difficulty",
    "tags",
    "paraphrase_group",
    "outcome",
    "tables",
    "columns",
    "order_matters",
    "match",
    "sql",
    "rows",
    "alt_sql",
    "alt_rows",
    "plan",
)
TOP_KEYS = ("version", "cases", "match")
REQUIRED = ("id", "question", "datasources", "status", "outcome")

#: ``match:`` settings (suite default or per case) and the values each accepts.
MATCH_OPTIONS: dict[str, tuple[str, ...] | type] = {
    "column_names": ("ignore", "require"),
    "duplicates": ("count", "ignore"),
    "extra_columns": ("forbid", "allow"),
    "float_tolerance": float,
}

#: Files larger than this are refused before parsing (override with NL2SQL_MAX_SUITE_BYTES).
MAX_SUITE_BYTES = 32 * 1024 * 1024

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*\Z")
_WORD = re.compile(r"[^\s\[\]]+\Z")


@attrs.define
class CaseSpans:
    """Where a case's parts stand in the text (code-point offsets), for the writer."""

    start: int
    end: int
    indent: int
    flow: bool
    nodes: dict[str, tuple[Any, Any]] = attrs.field(factory=dict)
    """key name -> (key node, value node)."""


def _nearest(word: str, choices: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if close:
        return f"did you mean '{close[0]}'?"
    return "expected one of: " + ", ".join(choices)


class _Parser:
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
            if word and not _WORD.match(value):
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
        self.err(node, f"{field} must be true or false, got {_shown(node)}")
        return None

    def rows(self, node: Any, field: str) -> tuple[dict[str, Any], ...] | None:
        if type(node) is not SequenceNode:
            if type(node) is ScalarNode and scalar_value_safe(node) is None:
                return None
            self.err(node, f"{field} must be a list of {{column: value}} maps, got {_shown(node)}")
            return None
        out: list[dict[str, Any]] = []
        first: tuple[str, ...] | None = None
        ok = True
        for n, item in enumerate(node.value, 1):
            if type(item) is not MappingNode:
                self.err(item, f"{field}: row {n} must be a {{column: value}} map, got {_shown(item)}")
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
            if key not in MATCH_OPTIONS:
                self.err(k, f"unknown match setting {key!r}: {_nearest(str(key), tuple(MATCH_OPTIONS))}")
                continue
            allowed = MATCH_OPTIONS[key]
            value = scalar_value_safe(v) if type(v) is ScalarNode else v
            if allowed is float:
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
                    out[key] = float(value)
                else:
                    self.err(v, f"match.{key} must be a number >= 0, got {_shown(v)}")
            elif value in allowed:
                out[key] = value
            else:
                self.err(v, f"match.{key} must be one of {', '.join(allowed)}, got {_shown(v)}")
        return out

    # -- the document --------------------------------------------------------------
    def suite(self, root: Any) -> tuple[int, tuple[EvalCase, ...], dict[str, Any] | None]:
        if type(root) is not MappingNode:
            self.err(root, f"a suite is a map with 'version: 1' and 'cases:', got {_shown(root)}")
            return 1, (), None
        fields: dict[str, Any] = {}
        for k, v in root.value:
            key = k.value if type(k) is ScalarNode else None
            if key not in TOP_KEYS:
                shown = repr(key) if key is not None else _shown(k)
                self.err(k, f"unknown top-level key {shown}: {_nearest(str(key), TOP_KEYS)}")
            elif key in fields:
                self.err(k, f"duplicate key {key!r}")
            else:
                fields[key] = v
        version = 1
        if "version" not in fields:
            self.err(root, "missing 'version: 1' at the top of the suite")
        else:
            node = fields["version"]
            value = scalar_value_safe(node) if type(node) is ScalarNode else None
            if value != 1 or isinstance(value, bool):
                self.err(node, f"unsupported suite version {_shown(node)} (this tool reads version: 1)")
        match = self.match(fields["match"]) if "match" in fields else None
        if "cases" not in fields:
            self.err(root, "missing 'cases:' (a list of cases)")
            return version, (), match
        cases_node = fields["cases"]
        if type(cases_node) is not SequenceNode:
            if type(cases_node) is ScalarNode and scalar_value_safe(cases_node) is None:
                return version, (), match
            self.err(cases_node, f"cases must be a list of cases, got {_shown(cases_node)}")
            return version, (), match
        cases: list[EvalCase] = []
        seen: dict[str, int] = {}
        items = cases_node.value
        keep_nodes = self.spans is not None
        for i, item in enumerate(items):
            case = self.case(item, seen)
            if case is not None:
                cases.append(case)
            if not keep_nodes:
                items[i] = None  # free each case's nodes once read: peak memory stays low
        self.case_id = None
        if self.strict:
            self.paraphrases(cases)
        return version, tuple(cases), match

    def case(self, node: Any, seen: dict[str, int]) -> EvalCase | None:
        self.case_id = None
        if type(node) is not MappingNode:
            self.err(node, f"a case must be a map (id, question, ...), got {_shown(node)}")
            return None
        try:
            check_tag(node)
        except BadScalar as exc:
            self.err(node, f"case: {exc}")
            return None
        raw: dict[str, Any] = {}
        keys: dict[str, Any] = {}
        for k, v in node.value:
            key = k.value if type(k) is ScalarNode else None
            if key not in CASE_KEYS:
                raw.setdefault("__unknown__", []).append((k, key))
                continue
            if key in raw:
                raw.setdefault("__dupes__", []).append(k)
                continue
            raw[key] = v
            keys[key] = k
        id_node = raw.get("id")
        case_id = self.text(id_node, "id") if id_node is not None else None
        if case_id is not None:
            if not _ID.match(case_id):
                self.err(id_node, f"id {case_id!r} may use only letters, digits, '_', '.', '-'")
                case_id = None
            elif case_id in seen:
                self.case_id = case_id
                self.err(id_node, f"duplicate id (already used by the case at line {seen[case_id]})")
                case_id = None
            else:
                seen[case_id] = node.start_mark.line + 1
        self.case_id = case_id
        ok = case_id is not None
        for k, key in raw.pop("__unknown__", ()):
            shown = repr(key) if key is not None else _shown(k)
            self.err(k, f"unknown key {shown}: {_nearest(str(key), CASE_KEYS)}")
            ok = False
        for k in raw.pop("__dupes__", ()):
            self.err(k, f"duplicate key {k.value!r}")
            ok = False
        for req in REQUIRED:
            if req not in raw:
                self.err(node, f"missing required key '{req}'")
                ok = False
        values: dict[str, Any] = {}
        for key, v in raw.items():
            if key == "id":
                continue
            value = self.field(key, v)
            if value is _BAD:
                ok = False
            else:
                values[key] = value
        if not ok:
            return None
        case = EvalCase(
            id=case_id,
            location=Location(self.path, node.start_mark.line + 1, node.start_mark.column + 1),
            **values,
        )
        if not self.rules(case, raw, node):
            return None
        if self.spans is not None:
            spans = CaseSpans(
                start=node.start_mark.index,
                end=node.end_mark.index,
                indent=node.value[0][0].start_mark.column if node.value else 0,
                flow=bool(node.flow_style),
            )
            spans.nodes = {key: (keys[key], raw[key]) for key in raw}
            self.spans[case_id] = spans
        return case

    def field(self, key: str, v: Any) -> Any:
        before = len(self.problems)
        value: Any
        try:
            check_tag(v)
        except BadScalar as exc:
            self.err(v, f"{key}: {exc}")
            return _BAD
        if key == "question":
            value = self.text(v, key)
        elif key == "datasources":
            value = self.names(v, key, example="[chinook]")
            if value == ():
                self.err(v, "datasources names no datasource (name at least one, e.g. [chinook])")
                value = None
        elif key == "status":
            value = self.enum(v, key, Status)
        elif key == "kind":
            value = self.enum(v, key, Kind)
        elif key == "origin":
            value = self.enum(v, key, Origin)
        elif key == "difficulty":
            value = None if _is_null(v) else self.enum(v, key, Difficulty)
        elif key == "tags":
            value = self.names(v, key, example="[aggregation, joins]", word=True)
        elif key == "paraphrase_group":
            value = self.text(v, key, allow_null=True)
        elif key == "outcome":
            value = self.outcome(v)
        elif key == "tables":
            value = self.names(v, key, example="[Customer, Invoice]")
        elif key == "columns":
            value = self.names(v, key, example="[Customer.Country]")
            if value:
                for item, col in zip(v.value, value, strict=False):
                    table, _, column = col.rpartition(".")
                    if not table or not column:
                        example = f"{table or 'Table'}.{column or 'Column'}"
                        self.err(item, f"column {col!r} must be written Table.Column, e.g. {example}")
        elif key == "order_matters":
            value = self.boolean(v, key)
        elif key == "sql":
            value = self.text(v, key, allow_null=True)
        elif key == "rows":
            value = self.rows(v, key)
        elif key == "alt_sql":
            value = self.names(v, key, example="['SELECT ...']")
        elif key == "alt_rows":
            value = self.alt_rows(v)
        elif key == "plan":
            value = self.free_map(v, key)
        else:  # match
            value = None if _is_null(v) else self.match(v)
        if len(self.problems) > before:
            return _BAD
        return value

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

    def alt_rows(self, node: Any) -> tuple | None:
        if type(node) is not SequenceNode:
            if _is_null(node):
                return ()
            self.err(node, f"alt_rows must be a list with one list of rows per alt_sql, got {_shown(node)}")
            return None
        out = []
        for n, item in enumerate(node.value, 1):
            rows = self.rows(item, f"alt_rows[{n}]")
            out.append(rows if rows is not None else ())
        return tuple(out)

    def free_map(self, node: Any, field: str) -> dict | None:
        if _is_null(node):
            return None
        if type(node) is not MappingNode:
            self.err(node, f"{field} must be a map, got {_shown(node)}")
            return None
        try:
            return to_python(node)
        except BadScalar as exc:
            self.err(exc.node if exc.node is not None else node, f"{field}: {exc}")
            return None

    # -- rules across fields ---------------------------------------------------------
    def rules(self, case: EvalCase, raw: dict[str, Any], node: Any) -> bool:
        before = len(self.problems)
        outcomes = set(case.outcome.values())

        def at(key: str) -> Any:
            return raw.get(key, node)

        if case.kind is Kind.ROUTING:
            for key in ("sql", "rows", "alt_sql", "alt_rows"):
                value = getattr(case, key)
                if value:
                    self.err(at(key), f"a routing case has no {key} (it only says where the question goes)")
            if len(case.outcome) != 1:
                self.err(at("outcome"), "a routing case is asked as one role, e.g. outcome: {admin: allowed}")
        else:
            if case.status is Status.APPROVED and case.answerable and case.sql is None:
                self.err(
                    at("sql"),
                    "an approved answer case that a role may answer needs sql "
                    "(the reviewed query), or status: draft",
                )
            if case.rows is not None and case.sql is None:
                self.err(at("rows"), "rows without sql (rows are what sql returns; remove them or add sql)")
        if case.sql is not None and len(case.datasources) != 1:
            self.err(
                at("datasources"),
                f"a case with sql names exactly one datasource (found {len(case.datasources)}: "
                f"{', '.join(case.datasources)})",
            )
        if Outcome.UNANSWERABLE in outcomes:
            if case.alt_sql or case.alt_rows:
                self.err(at("alt_sql" if "alt_sql" in raw else "alt_rows"), "an unanswerable case cannot have an alternative")
            if case.sql is not None:
                self.err(at("sql"), "sql must be null for an unanswerable case (the data does not exist)")
        if len(case.alt_rows) > len(case.alt_sql):
            self.err(
                at("alt_rows"),
                f"{len(case.alt_rows)} alt_rows entries but {len(case.alt_sql)} alt_sql (one per alt_sql)",
            )
        elif self.strict and case.status is Status.APPROVED and len(case.alt_rows) != len(case.alt_sql):
            self.err(
                at("alt_rows" if "alt_rows" in raw else "alt_sql"),
                f"an approved case needs one alt_rows entry per alt_sql ({len(case.alt_sql)} alt_sql, "
                f"{len(case.alt_rows)} alt_rows): run regenerate",
            )
        return len(self.problems) == before

    def paraphrases(self, cases: list[EvalCase]) -> None:
        groups: dict[str, EvalCase] = {}
        for case in cases:
            if case.paraphrase_group is None or case.rows is None or not case.approved:
                continue
            first = groups.setdefault(case.paraphrase_group, case)
            if first is case:
                continue
            if Counter(map(_row_key, first.rows)) != Counter(map(_row_key, case.rows)):
                loc = case.location
                self.problems.append(
                    Problem(
                        self.path,
                        loc.line if loc else 0,
                        loc.column if loc else 0,
                        f"paraphrase_group {case.paraphrase_group!r}: rows differ from case "
                        f"'{first.id}' (cases of one group share the same rows)",
                        case.id,
                    )
                )


_BAD = object()


def _row_key(row: dict[str, Any]) -> tuple:
    return tuple(sorted(row.items(), key=lambda kv: kv[0]))


def scalar_value_safe(node: Any) -> Any:
    try:
        return scalar_value(node)
    except BadScalar:
        return node.value


def _is_null(node: Any) -> bool:
    return type(node) is ScalarNode and scalar_value_safe(node) is None and node.value in ("", "~", "null", "Null", "NULL")


def _kind(node: Any) -> str:
    if type(node) is MappingNode:
        return "map"
    if type(node) is SequenceNode:
        return "list"
    return "value"


def _shown(node: Any) -> str:
    if type(node) is ScalarNode:
        value = scalar_value_safe(node)
        return "null" if value is None else repr(value)
    return f"a {_kind(node)}"


def _decode(data: bytes, path: str) -> str:
    if b"\x00" in data[:8192] or b"\x00" in data:
        raise SuiteError([Problem(path, 0, 0, "not a text file (it holds NUL bytes); a suite is UTF-8 YAML")])
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SuiteError(
            [Problem(path, line, col, f"not UTF-8 text (byte 0x{data[exc.start]:02x}); save the suite as UTF-8")]
        ) from None


def parse_suite(
    text: str,
    path: str = "<suite>",
    *,
    strict: bool = True,
    spans: dict[str, CaseSpans] | None = None,
    sha256: str = "",
) -> EvalSuite:
    """Parse suite text; raise ``SuiteError`` listing every problem."""
    try:
        root = compose(text)
    except YamlSyntaxError as exc:
        raise SuiteError([Problem(path, exc.line, exc.column, exc.message)]) from None
    if root is None:
        raise SuiteError([Problem(path, 1, 1, "empty file (a suite starts with 'version: 1' and 'cases:')")])
    parser = _Parser(path, strict, spans)
    try:
        version, cases, match = parser.suite(root)
    except RecursionError:
        raise SuiteError([Problem(path, 0, 0, "nesting too deep")]) from None
    if parser.problems:
        raise SuiteError(parser.problems)
    return EvalSuite(path=path, cases=cases, version=version, match=match, sha256=sha256)


def _size(n: int) -> str:
    if n >= 2**20:
        return f"{n / 2**20:.1f} MiB"
    if n >= 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n} bytes"


def max_suite_bytes() -> int:
    value = os.environ.get("NL2SQL_MAX_SUITE_BYTES")
    return int(value) if value and value.isdigit() else MAX_SUITE_BYTES


def read_suite_bytes(path: str | os.PathLike[str]) -> bytes:
    """The file's bytes, or a SuiteError for a missing, unreadable or oversized file."""
    shown = str(path)
    try:
        size = os.stat(path).st_size
        if size > max_suite_bytes():
            raise SuiteError(
                [
                    Problem(
                        shown,
                        0,
                        0,
                        f"file is {_size(size)}, over the {_size(max_suite_bytes())} limit for one suite "
                        "(split it into several suites, or raise NL2SQL_MAX_SUITE_BYTES)",
                    )
                ]
            )
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise SuiteError([Problem(shown, 0, 0, "no such suite file")]) from None
    except IsADirectoryError:
        raise SuiteError([Problem(shown, 0, 0, "is a folder, not a suite file")]) from None
    except OSError as exc:
        raise SuiteError([Problem(shown, 0, 0, f"cannot read: {exc.strerror or exc}")]) from None


def load_suite(
    path: str | os.PathLike[str], *, strict: bool = True, use_cache: bool = True, write_cache: bool = True
) -> EvalSuite:
    """Load and check one suite file (cached on its bytes; ``write_cache=False`` only reads
    the cache, as collection does, which writes nothing)."""
    shown = str(path)
    data = read_suite_bytes(path)
    digest = hashlib.sha256(data).hexdigest()
    key = cache.key(shown, digest, strict)
    if use_cache:
        hit = cache.get(key, shown)
        if isinstance(hit, EvalSuite) and hit.sha256 == digest:
            return hit
    suite = parse_suite(_decode(data, shown), shown, strict=strict, sha256=digest)
    if use_cache and write_cache:
        cache.put(key, suite)
    return suite


def load_text(path: str | os.PathLike[str]) -> tuple[str, str]:
    """The decoded text of a suite file and its SHA-256 (for the writer)."""
    data = read_suite_bytes(path)
    return _decode(data, str(path)), hashlib.sha256(data).hexdigest()


def resolve_path(path: str | os.PathLike[str]) -> Path:
    return Path(path).expanduser().resolve()

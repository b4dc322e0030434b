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

import hashlib
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from pytest_nl2sql import collector
from pytest_nl2sql.errors import Problem, SuiteError
from pytest_nl2sql.suitefile import cache, clarifications
from pytest_nl2sql.suitefile.fields import (
    BAD,
    MATCH_OPTIONS,
    REQUIRED,
    CaseSpans,
    FieldReader,
    is_null,
    nearest,
    row_key,
    scalar_value_safe,
    show_node,
)
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
from pytest_nl2sql.suitefile.yamlnodes import (
    BadScalar,
    MappingNode,
    ScalarNode,
    SequenceNode,
    YamlSyntaxError,
    check_tag,
    compose,
)

__all__ = [
    "CASE_KEYS",
    "MATCH_OPTIONS",
    "MAX_SUITE_BYTES",
    "CaseSpans",
    "in_cache",
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
    "reviewed",
    *clarifications.CASE_KEYS,
)
TOP_KEYS = ("version", "cases", "match")




#: Files larger than this are refused before parsing (override with NL2SQL_MAX_SUITE_BYTES).
MAX_SUITE_BYTES = 32 * 1024 * 1024

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*\Z")






class _Parser(FieldReader):
    """A suite's top level, its cases and the rules that tie a case's fields together."""

    # -- the document --------------------------------------------------------------
    def suite(self, root: Any) -> tuple[int, tuple[EvalCase, ...], dict[str, Any] | None]:
        if type(root) is not MappingNode:
            self.err(root, f"a suite is a map with 'version: 1' and 'cases:', got {show_node(root)}")
            return 1, (), None
        fields: dict[str, Any] = {}
        for k, v in root.value:
            key = k.value if type(k) is ScalarNode else None
            if key not in TOP_KEYS:
                shown = repr(key) if key is not None else show_node(k)
                self.err(k, f"unknown top-level key {shown}: {nearest(str(key), TOP_KEYS)}")
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
                self.err(node, f"unsupported suite version {show_node(node)} (this tool reads version: 1)")
        match = self.match(fields["match"]) if "match" in fields else None
        if "cases" not in fields:
            self.err(root, "missing 'cases:' (a list of cases)")
            return version, (), match
        cases_node = fields["cases"]
        if type(cases_node) is not SequenceNode:
            if type(cases_node) is ScalarNode and scalar_value_safe(cases_node) is None:
                return version, (), match
            self.err(cases_node, f"cases must be a list of cases, got {show_node(cases_node)}")
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
            self.err(node, f"a case must be a map (id, question, ...), got {show_node(node)}")
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
            shown = repr(key) if key is not None else show_node(k)
            self.err(k, f"unknown key {shown}: {nearest(str(key), CASE_KEYS)}")
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
            if value is BAD:
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
            return BAD
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
            value = None if is_null(v) else self.enum(v, key, Difficulty)
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
        elif key == "reviewed":
            value = self.reviewed(v)
        elif key in clarifications.CASE_KEYS:
            value = clarifications.read_field(self, key, v)
        else:  # match
            value = None if is_null(v) else self.match(v)
        if len(self.problems) > before:
            return BAD
        return value

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
        if self.strict and case.sql is not None and len(case.datasources) != 1:
            # strict only: regenerate (which reads non-strict) lists such a case in `failed`
            # and still writes the others, as the spec says
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
        clarifications.rules(self, case, at)
        return len(self.problems) == before

    def paraphrases(self, cases: list[EvalCase]) -> None:
        groups: dict[str, EvalCase] = {}
        for case in cases:
            if case.paraphrase_group is None or case.rows is None or not case.approved:
                continue
            first = groups.setdefault(case.paraphrase_group, case)
            if first is case:
                continue
            if Counter(map(row_key, first.rows)) != Counter(map(row_key, case.rows)):
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
    # the nodes and cases hold no reference cycles; every few hundred of a large suite's hundred
    # thousand nodes the collector walked the whole heap again (a third of reading Spider dev's
    # 972 cases in a pytest run)
    with collector.paused():
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
    data, digest, key = _cache_slot(path, strict)
    if use_cache:
        entry = cache.entry_stat(key)
        loaded = _LOADED.get((key, shown))
        if entry is not None and loaded is not None and loaded[1] == entry:
            return loaded[0]  # read from this very cache entry before (a suite is frozen data)
        hit = cache.get(key, shown)
        if isinstance(hit, EvalSuite) and hit.sha256 == digest:
            _remember((key, shown), hit, entry)
            return hit
    suite = parse_suite(_decode(data, shown), shown, strict=strict, sha256=digest)
    if use_cache and write_cache:
        cache.put(key, suite)
        _remember((key, shown), suite, cache.entry_stat(key))
    return suite


def in_cache(path: str | os.PathLike[str], *, strict: bool = True) -> bool:
    """Whether the disk cache has an entry for the suite file's bytes as they are now (loaded
    the same way): ``load_suite`` would read it instead of parsing the YAML."""
    try:
        key = _cache_slot(path, strict)[2]
    except SuiteError:
        return False
    return cache.entry_stat(key) is not None


def _cache_slot(path: str | os.PathLike[str], strict: bool) -> tuple[bytes, str, str]:
    """The suite file's bytes, their sha256 and its cache entry's name, as loaded through ``path``."""
    data = read_suite_bytes(path)
    digest = hashlib.sha256(data).hexdigest()
    return data, digest, cache.key(str(path), digest, strict)


#: The suites this process read from the disk cache, by key (path, bytes, strictness) and the
#: path's spelling (a suite's locations name the path it was loaded through), with the
#: entry's file identity then: precheck, collection, the gate and the provenance line each load
#: the same suite, decoded once. An entry since removed, replaced or edited is read afresh.
_LOADED: dict[tuple[str, str], tuple[EvalSuite, tuple[int, ...]]] = {}
_LOADED_MAX = 16


def _remember(key: tuple[str, str], suite: EvalSuite, entry: tuple[int, ...] | None) -> None:
    if entry is None:
        return
    if len(_LOADED) >= _LOADED_MAX:
        _LOADED.pop(next(iter(_LOADED)))
    _LOADED[key] = (suite, entry)


def load_text(path: str | os.PathLike[str]) -> tuple[str, str]:
    """The decoded text of a suite file and its SHA-256 (for the writer)."""
    data = read_suite_bytes(path)
    return _decode(data, str(path)), hashlib.sha256(data).hexdigest()


def resolve_path(path: str | os.PathLike[str]) -> Path:
    return Path(path).expanduser().resolve()

"""The 0.6 gold format, and its migration to suite version 1 (spec: "The Chinook suite").

0.6 kept a gold set in two files: ``<name>.yaml`` with the cases and ``<name>_plans.yaml``
with each case's plan keyed by case id. Version 1 renames the keys and moves each plan onto
its case; nothing else changes:

===================================================  ========================================
0.6                                                  v1
===================================================  ========================================
``datasource``                                       ``datasources`` (a name becomes a list)
``expected``                                         ``outcome``
``needed_tables``, ``needed_columns``                ``tables``, ``columns``
``gold_sql``, ``gold_result``                        ``sql``, ``rows``
``alt_gold_sql``, ``alt_gold_result``                ``alt_sql``, ``alt_rows``
plans in ``<name>_plans.yaml``                       ``plan`` on each case
===================================================  ========================================

``migrate_text`` edits the old text in place (key names only, plus the plans appended to
their cases), so comments and layout survive the migration.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_nl2sql.errors import Problem, SuiteError
from pytest_nl2sql.suitefile.loader import load_text, parse_suite
from pytest_nl2sql.suitefile.lock import write_atomic
from pytest_nl2sql.suitefile.model import EvalSuite
from pytest_nl2sql.suitefile.textedit import Edits, content_end, line_end, newline
from pytest_nl2sql.suitefile.yamlnodes import (
    MappingNode,
    ScalarNode,
    SequenceNode,
    YamlSyntaxError,
    compose,
    to_python,
)
from pytest_nl2sql.suitefile.yamltext import data_block, format_text

__all__ = ["RENAMES", "load_legacy", "load_legacy_plans", "migrate", "migrate_text"]

RENAMES = {
    "datasource": "datasources",
    "expected": "outcome",
    "needed_tables": "tables",
    "needed_columns": "columns",
    "gold_sql": "sql",
    "gold_result": "rows",
    "alt_gold_sql": "alt_sql",
    "alt_gold_result": "alt_rows",
}


def _compose(text: str, path: str) -> Any:
    try:
        return compose(text)
    except YamlSyntaxError as exc:
        raise SuiteError([Problem(path, exc.line, exc.column, exc.message)]) from None


def load_legacy_plans(path: str | os.PathLike[str]) -> dict[str, Any]:
    """``{case_id: plan}`` from a 0.6 ``*_plans.yaml`` (a map, optionally under ``plans:``)."""
    text, _ = load_text(path)
    root = _compose(text, str(path))
    try:
        data = to_python(root) if root is not None else {}
    except ValueError as exc:
        raise SuiteError([Problem(str(path), 1, 1, f"plans file: {exc}")]) from None
    if isinstance(data, dict) and set(data) == {"plans"}:
        data = data["plans"]
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise SuiteError([Problem(str(path), 1, 1, "a plans file maps case ids to plans (id: {kind: answer, ...})")])
    return {str(k): v for k, v in data.items()}


def migrate_text(text: str, plans: Mapping[str, Any] | None = None, path: str = "<0.6 suite>") -> str:
    """The v1 text of a 0.6 gold file: keys renamed, plans attached, everything else kept."""
    root = _compose(text, path)
    if type(root) is not MappingNode:
        raise SuiteError([Problem(path, 1, 1, "a 0.6 gold file is a map with 'cases:'")])
    cases = next((v for k, v in root.value if k.value == "cases"), None)
    if type(cases) is not SequenceNode:
        raise SuiteError([Problem(path, 1, 1, "a 0.6 gold file has a 'cases:' list")])
    plans = dict(plans or {})
    nl = newline(text)
    edits = Edits()
    if not any(k.value == "version" for k, _ in root.value):
        first = root.value[0][0].start_mark.index
        edits.add(first, first, f"version: 1{nl}")
    for case in cases.value:
        if type(case) is not MappingNode:
            continue
        case_id = None
        last_end = case.start_mark.index
        indent = case.value[0][0].start_mark.column if case.value else 2
        for k, v in case.value:
            if type(k) is not ScalarNode:
                continue
            if k.value == "id":
                case_id = v.value
            new = RENAMES.get(k.value)
            if new:
                edits.add(k.start_mark.index, k.end_mark.index, new)
                if k.value == "datasource" and type(v) is ScalarNode:
                    edits.add(v.start_mark.index, v.end_mark.index, f"[{format_text(v.value)}]")
            end = content_end(v, text)
            last_end = max(last_end, end)
        if case_id in plans:
            plan = plans.pop(case_id)
            pad = " " * indent
            lines = [f"{pad}plan:", *data_block(plan, pad + "  ")]
            at = line_end(text, last_end)  # after a trailing comment on the last line, not before it
            edits.add(at, at, nl + nl.join(lines))
    if plans:
        raise SuiteError(
            [Problem(path, 0, 0, f"plans for unknown case ids: {', '.join(sorted(plans))}")]
        )
    return edits.apply(text)


def load_legacy(path: str | os.PathLike[str], plans_path: str | os.PathLike[str] | None = None) -> EvalSuite:
    """Read 0.6 gold files with the legacy names, as an ``EvalSuite``."""
    text, _ = load_text(path)
    plans = load_legacy_plans(plans_path) if plans_path else None
    return parse_suite(migrate_text(text, plans, str(path)), str(path))


def migrate(
    old: str | os.PathLike[str],
    new: str | os.PathLike[str],
    plans_path: str | os.PathLike[str] | None = None,
) -> EvalSuite:
    """Write the v1 suite for 0.6 gold files; the result is checked before it is written."""
    text, _ = load_text(old)
    plans = load_legacy_plans(plans_path) if plans_path else None
    out = migrate_text(text, plans, str(old))
    parse_suite(out, str(old))  # checked first; problems name the file the user wrote
    Path(new).parent.mkdir(parents=True, exist_ok=True)
    write_atomic(new, out)
    return parse_suite(out, str(new))

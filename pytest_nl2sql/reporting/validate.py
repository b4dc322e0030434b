"""A JSON report read back (``report compare/merge/gate``, ``--nl2sql-compare``) is input: it is
checked field by field before anything reads it, and a bad one is one line naming the file
and the field (``items[3].scores.result_match.passed: expected true, false or null, got
"yes"``), never a traceback.

Only the fields the readers use are checked; others pass through as they are.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from pytest_nl2sql.reporting.spool import LazyRecords

__all__ = ["ReportInvalid", "validate_item", "validate_report"]

#: Numbers past this size are not a count, a cost or a duration.
_MAX_NUMBER = 1e15


class ReportInvalid(ValueError):
    """A report's field does not have the type its readers need (the message names it)."""


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def _str(v: Any) -> bool:
    return isinstance(v, str)


def _opt_str(v: Any) -> bool:
    return v is None or isinstance(v, str)


def _number(v: Any) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(float(v)) and abs(v) <= _MAX_NUMBER
    except OverflowError:
        return False


def _opt_number(v: Any) -> bool:
    return v is None or _number(v)


def _opt_bool(v: Any) -> bool:
    return v is None or isinstance(v, bool)


def _str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v)


def _opt_str_list(v: Any) -> bool:
    return v is None or _str_list(v)


def _opt_object(v: Any) -> bool:
    return v is None or isinstance(v, dict)


def _opt_list(v: Any) -> bool:
    return v is None or isinstance(v, list)


_WHAT = {
    _str: "a string", _opt_str: "a string or null", _number: "a finite number", _opt_number: "a finite number or null",
    _opt_bool: "true, false or null", _str_list: "a list of strings", _opt_str_list: "a list of strings or null",
    _opt_object: "an object or null", _opt_list: "a list or null",
}

_ITEM_REQUIRED: dict[str, Callable[[Any], bool]] = {"nodeid": _str, "suite": _str, "case_id": _str, "role": _str, "kind": _str}
_ITEM_OPTIONAL: dict[str, Callable[[Any], bool]] = {
    "verdict": _opt_str, "expected": _opt_str, "status": _opt_str, "mode": _opt_str, "difficulty": _opt_str,
    "baseline": _opt_str, "error": _opt_str, "sql": _opt_str, "gold_sql": _opt_str, "question": _opt_str,
    "gold_digest": _opt_str, "message": _opt_str, "code": _opt_str, "tags": _opt_str_list, "datasources": _opt_str_list, "failed_scores": _opt_str_list,
    "cost_usd": _opt_number, "latency_s": _opt_number, "rows": _opt_number, "truncated": _opt_bool, "flaky": _opt_bool, "reruns": _opt_number,
    "taxonomy": _opt_object, "llm": _opt_object, "route": _opt_object, "row_diff": _opt_object, "test_suite": _opt_object,
    "attempts": _opt_list, "scores": _opt_object,
}
_SCORE_FIELDS: dict[str, Callable[[Any], bool]] = {"passed": _opt_bool, "value": _opt_number, "detail": _opt_str, "gating": _opt_bool}
_RUN_FIELDS: dict[str, Callable[[Any], bool]] = {
    "mode": _opt_str, "suites": _opt_str_list, "started": _opt_str, "duration_s": _opt_number, "workers": _opt_number,
    "fixed": _opt_str_list, "crashed": _opt_str_list, "repeat": _opt_number, "shard": _opt_str,
    "collected": _opt_number, "complete": _opt_bool, "missing": _opt_list,
}


def _check(obj: Mapping[str, Any], fields: Mapping[str, Callable[[Any], bool]], where: str, required: bool) -> None:
    for key, ok in fields.items():
        if key not in obj:
            if required:
                raise ReportInvalid(f"{where}.{key}: missing")
            continue
        if not ok(obj[key]):
            raise ReportInvalid(f"{where}.{key}: expected {_WHAT[ok]}, got {_kind(obj[key])}")


def validate_report(data: Any) -> None:
    """Raise ``ReportInvalid`` naming the first field the readers could not use."""
    if not isinstance(data, dict):
        raise ReportInvalid(f"the top level: expected an object, got {_kind(data)}")
    run = data.get("run")
    if not isinstance(run, dict):
        raise ReportInvalid(f"run: expected an object, got {_kind(run)}" if "run" in data else "run: missing")
    _check(run, _RUN_FIELDS, "run", required=False)
    for i, m in enumerate(run.get("missing") or []):
        if not isinstance(m, dict):
            raise ReportInvalid(f"run.missing[{i}]: expected an object, got {_kind(m)}")
        _check(m, {"nodeid": _str, "why": _opt_str}, f"run.missing[{i}]", required=False)
    items = data.get("items")
    if not isinstance(items, (list, LazyRecords)):
        raise ReportInvalid(f"items: expected a list, got {_kind(items)}" if "items" in data else "items: missing")
    if "summary" in data and not isinstance(data["summary"], dict):
        raise ReportInvalid(f"summary: expected an object, got {_kind(data['summary'])}")
    if isinstance(items, list):
        for i, rec in enumerate(items):
            validate_item(rec, i)


def validate_item(rec: Any, i: int) -> None:
    """Raise ``ReportInvalid`` naming the first field of ``items[i]`` the readers could not use."""
    where = f"items[{i}]"
    if not isinstance(rec, dict):
        raise ReportInvalid(f"{where}: expected an object, got {_kind(rec)}")
    _check(rec, _ITEM_REQUIRED, where, required=True)
    _check(rec, _ITEM_OPTIONAL, where, required=False)
    for name, score in (rec.get("scores") or {}).items():
        if not isinstance(score, dict):
            raise ReportInvalid(f"{where}.scores.{name}: expected an object, got {_kind(score)}")
        _check(score, _SCORE_FIELDS, f"{where}.scores.{name}", required=False)
    for j, attempt in enumerate(rec.get("attempts") or []):
        if not isinstance(attempt, dict):
            raise ReportInvalid(f"{where}.attempts[{j}]: expected an object, got {_kind(attempt)}")
        _check(attempt, {"latency_s": _opt_number, "verdict": _opt_str}, f"{where}.attempts[{j}]", required=False)
    for name, value in (rec.get("llm") or {}).items():
        if not _opt_number(value):
            raise ReportInvalid(f"{where}.llm.{name}: expected a finite number or null, got {_kind(value)}")
    if rec.get("taxonomy"):
        _check(rec["taxonomy"], {"kinds": _opt_str_list}, f"{where}.taxonomy", required=False)

"""The JSON Schema (draft 2020-12) of plans, given to an LLM for structured output.
Imports :mod:`.vocabulary`."""

from __future__ import annotations

from typing import Any

from pytest_nl2sql.engine.plan.vocabulary import (
    _COLUMN_PATTERN,
    CAST_TYPES,
    FUNCTIONS,
    JOIN_TYPES,
    KINDS,
    NULLS,
    FunctionSpec,
)

# --------------------------------------------------------------------------------------------
# JSON Schema


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def _obj(properties: dict[str, Any], required: list[str], description: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    if description:
        out["description"] = description
    return out


def _call_schema(spec: FunctionSpec) -> dict[str, Any]:
    args: dict[str, Any] = {"type": "array", "items": _ref("expr"), "minItems": spec.min_args}
    if spec.max_args is not None:
        args["maxItems"] = spec.max_args
    if spec.min_args <= 1 and (spec.max_args is None or spec.max_args >= 1):
        args = {"anyOf": [_ref("expr"), args]}  # one argument may be written bare
    return _obj({spec.name: args}, [spec.name], f"{spec.name}: {spec.doc}")


def plan_json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) for plans, to give an LLM for structured output."""
    scalar = {"type": ["string", "number", "boolean", "null"]}
    order_item = {
        "anyOf": [
            _ref("expr"),
            _obj({"expr": _ref("expr"), "desc": {"type": "boolean"},
                  "nulls": {"enum": list(NULLS)}}, ["expr"], "a sort key"),
        ]
    }
    exprs: list[dict[str, Any]] = [
        {"type": "string", "pattern": _COLUMN_PATTERN,
         "description": "a column: Column, Table.Column or alias.Column (* only in select/count)"},
        {"type": "number"},
        {"type": "boolean"},
        _obj({"value": scalar}, ["value"], "a constant; text constants must use this form"),
        *[_call_schema(s) for s in FUNCTIONS.values() if s.category != "window"],
        _obj({"in": {"anyOf": [
            _obj({"expr": _ref("expr"), "values": {"type": "array", "items": scalar, "minItems": 1}},
                 ["expr", "values"]),
            _obj({"expr": _ref("expr"), "query": _ref("query")}, ["expr", "query"]),
        ]}}, ["in"], "expr IN (values) or expr IN (subquery)"),
        _obj({"case": _obj({
            "when": {"type": "array", "minItems": 1, "items": _obj(
                {"if": _ref("expr"), "then": _ref("expr")}, ["if", "then"])},
            "else": _ref("expr"),
        }, ["when"])}, ["case"], "CASE WHEN if THEN then ... ELSE else END"),
        _obj({"over": _obj({
            "expr": {"anyOf": [
                *[_call_schema(s) for s in FUNCTIONS.values() if s.category in ("window", "aggregate")]
            ]},
            "partition_by": {"type": "array", "items": _ref("expr")},
            "order_by": {"type": "array", "items": _ref("order_item")},
        }, ["expr"])}, ["over"], "a window function: rank/dense_rank/row_number/... or an aggregate"),
        _obj({"cast": _obj({"expr": _ref("expr"), "to": {"enum": list(CAST_TYPES)}},
                           ["expr", "to"])}, ["cast"], "CAST(expr AS type)"),
        _obj({"date_format": _obj({"expr": _ref("expr"), "format": {"type": "string"}},
                                  ["expr", "format"])}, ["date_format"],
             "a date/timestamp as text, strftime codes %Y %m %d %H %M %S"),
        _obj({"query": _ref("query")}, ["query"], "a scalar subquery (one row, one column)"),
        _obj({"exists": _ref("query")}, ["exists"], "EXISTS (subquery)"),
        _obj({"sql": {"type": "string"}}, ["sql"],
             "raw SQL for one expression, only when nothing else fits"),
    ]
    name = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}
    source_props = {"table": name, "query": _ref("query"), "alias": name}
    query_props: dict[str, Any] = {
        "with": {"type": "array", "items": _obj({"name": name, "query": _ref("query")},
                                                 ["name", "query"])},
        "from": {"anyOf": [name, _obj(source_props, [])]},
        "joins": {"type": "array", "items": _obj(
            {**source_props, "on": _ref("expr"), "type": {"enum": list(JOIN_TYPES)}}, [])},
        "select": {"type": "array", "minItems": 1, "items": {"anyOf": [
            _ref("expr"), _obj({"expr": _ref("expr"), "alias": name}, ["expr"])]}},
        "distinct": {"type": "boolean"},
        "where": _ref("expr"),
        "group_by": {"type": "array", "items": _ref("expr")},
        "having": _ref("expr"),
        "order_by": {"type": "array", "items": _ref("order_item")},
        "limit": {"type": "integer", "minimum": 0},
        "offset": {"type": "integer", "minimum": 0},
    }
    plan = _obj(
        {
            "kind": {"enum": list(KINDS)},
            "datasource": {"type": "string"},
            "reason": {"type": "string", "description": "why a not_answerable question is"},
            "clarification": {"type": "string", "description": "the question to ask back"},
            **query_props,
        },
        [],
        "A query plan. kind answer (the default) needs select; not_answerable gives a "
        "reason; clarify gives a clarification question.",
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "PlanModel",
        **plan,
        "$defs": {
            "expr": {"anyOf": exprs},
            "order_item": order_item,
            "query": _obj(query_props, ["select"], "a SELECT statement"),
        },
    }


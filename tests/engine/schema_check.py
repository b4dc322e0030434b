"""A small JSON Schema checker for the keywords plan_json_schema uses.

``jsonschema`` is not a dependency of the project, so the tests check instances with this
subset: $ref into $defs, anyOf, type, enum, properties, required, additionalProperties: false,
items, minItems, maxItems, minimum and pattern.
"""

from __future__ import annotations

import re
from typing import Any

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
KNOWN = {
    "$schema", "$defs", "$ref", "title", "description", "anyOf", "type", "enum", "properties",
    "required", "additionalProperties", "items", "minItems", "maxItems", "minimum", "pattern",
}


def errors(instance: Any, schema: dict[str, Any], root: dict[str, Any] | None = None,
           path: str = "$") -> list[str]:
    """Every way ``instance`` breaks ``schema`` (empty when it conforms)."""
    root = root if root is not None else schema
    unknown = set(schema) - KNOWN
    if unknown:
        raise AssertionError(f"{path}: schema uses keywords this checker does not know: {unknown}")
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return errors(instance, root["$defs"][name], root, path)
    if "anyOf" in schema:
        if not any(not errors(instance, branch, root, path) for branch in schema["anyOf"]):
            return [f"{path}: matches none of {len(schema['anyOf'])} alternatives"]
    out: list[str] = []
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](instance) for t in types):
            return [f"{path}: expected {types}, got {instance!r}"]
    if "enum" in schema and instance not in schema["enum"]:
        out.append(f"{path}: {instance!r} not in {schema['enum']}")
    if "pattern" in schema and isinstance(instance, str):
        if not re.search(schema["pattern"], instance):
            out.append(f"{path}: {instance!r} does not match {schema['pattern']}")
    if "minimum" in schema and isinstance(instance, int | float) and instance < schema["minimum"]:
        out.append(f"{path}: {instance} < {schema['minimum']}")
    if isinstance(instance, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in instance:
                out.append(f"{path}: missing {key!r}")
        for key, value in instance.items():
            if key in props:
                out.extend(errors(value, props[key], root, f"{path}.{key}"))
            elif schema.get("additionalProperties") is False:
                out.append(f"{path}: unexpected key {key!r}")
    if isinstance(instance, list):
        if len(instance) < schema.get("minItems", 0):
            out.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(instance) > schema["maxItems"]:
            out.append(f"{path}: more than {schema['maxItems']} items")
        if "items" in schema:
            for i, item in enumerate(instance):
                out.extend(errors(item, schema["items"], root, f"{path}[{i}]"))
    return out

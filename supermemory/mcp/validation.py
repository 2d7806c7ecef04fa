"""The JSON Schema subset our tool input schemas use, checked with errors that name the field."""
from __future__ import annotations

import json
from typing import Any

from supermemory.mcp.protocol import INVALID_PARAMS, JsonRpcError
from supermemory.store.records import blank


def type_ok(value: Any, name: str) -> bool:
    """Whether `value` is of the JSON Schema type `name` (integral floats count as integers)."""
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    if name == "null":
        return value is None
    return False


def validate(schema: dict, value: Any, path: str = "arguments") -> Any:
    """Check `value` against a JSON Schema subset; returns it (integral floats become ints).

    Supported keywords: type (incl. lists), enum, minimum, maximum, minLength, maxLength,
    items, minItems, maxItems, properties, required, additionalProperties (false only). A string that is
    empty once cleaned (only whitespace and NULs: `records.blank`, the store's own rule) fails `minLength: 1` as ""
    does, so "   " and "\\u0000" are refused the same way as "" under every protocol version, not as a tool error
    after the schema passed them.
    Raises:
        JsonRpcError: INVALID_PARAMS naming the offending field, e.g. "arguments.limit: expected integer".
    """
    def fail(message: str) -> JsonRpcError:
        return JsonRpcError(INVALID_PARAMS, f"{path}: {message}", {"field": path})

    kind = schema.get("type")
    if kind is not None:
        names = kind if isinstance(kind, list) else [kind]
        if not any(type_ok(value, n) for n in names):
            raise fail(f"expected {' or '.join(names)}, got {json_type(value)}")
        if isinstance(value, float) and "integer" in names and "number" not in names:
            value = int(value)
    if "enum" in schema and not any(type(value) is type(e) and value == e for e in schema["enum"]):
        raise fail("must be one of " + ", ".join(json.dumps(e) for e in schema["enum"]))
    if isinstance(value, str):
        if len(value) > schema.get("maxLength", len(value)):
            raise fail(f"longer than {schema['maxLength']} characters ({len(value)})")
        if len(value) < schema.get("minLength", 0) or (schema.get("minLength") == 1 and blank(value)):
            raise fail("must not be empty" if schema["minLength"] == 1 else
                       f"shorter than {schema['minLength']} characters")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise fail(f"must be >= {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise fail(f"must be <= {schema['maximum']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            raise fail(f"needs at least {schema['minItems']} item(s)")
        if len(value) > schema.get("maxItems", len(value)):
            raise fail(f"at most {schema['maxItems']} items")
        if "items" in schema:
            value = [validate(schema["items"], item, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                raise JsonRpcError(INVALID_PARAMS, f"{path}.{key}: required", {"field": f"{path}.{key}"})
        if schema.get("additionalProperties") is False:
            for key in value:
                if key not in props:
                    raise JsonRpcError(INVALID_PARAMS, f"{path}.{key}: unknown field (allowed: "
                                       f"{', '.join(props) or 'none'})", {"field": f"{path}.{key}"})
        value = {key: validate(props[key], item, f"{path}.{key}") if key in props else item
                 for key, item in value.items()}
    return value


def json_type(value: Any) -> str:
    """The JSON Schema type name of a decoded JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"

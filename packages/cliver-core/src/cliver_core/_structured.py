"""Structured replies for ``chat_structured``: the schema sent, and the reply validated.

A pydantic model is validated by pydantic (``model_validate_json``). A JSON schema given as a
dict is checked for what structured-output APIs enforce (OpenAI "Structured Outputs",
supported schemas): ``type``, ``properties``, ``required``, ``items``, ``enum``,
``additionalProperties: false``, ``anyOf``; other keywords are left to the provider.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pydantic

from agent_adapter import ConfigError, JsonSchema

__all__ = ["OutputSpec"]

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def _check(value: Any, schema: Mapping[str, Any], path: str) -> list[str]:
    """What is wrong with ``value`` under ``schema`` (empty when nothing), ``path`` first."""
    if "anyOf" in schema:
        options = [_check(value, s, path) for s in schema["anyOf"] if isinstance(s, Mapping)]
        return [f"{path}: matches none of anyOf"] if options and all(options) else []
    wrong_type = _type_problem(value, schema, path)
    if wrong_type is not None:
        return [wrong_type]
    problems: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict):
        problems.extend(_object_problems(value, schema, path))
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            problems.extend(_check(item, schema["items"], f"{path}[{i}]"))
    return problems


def _type_problem(value: Any, schema: Mapping[str, Any], path: str) -> str | None:
    """``value`` not of the schema's ``type`` (one or a list; a bool is no number)."""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []
    if not kinds:
        return None
    ok = any(
        isinstance(value, _TYPES.get(k, (object,)))
        and not (k in ("integer", "number") and isinstance(value, bool))
        for k in kinds
    )
    return None if ok else f"{path}: expected {'/'.join(kinds)}, got {type(value).__name__}"


def _object_problems(value: dict[str, Any], schema: Mapping[str, Any], path: str) -> list[str]:
    """An object's missing required keys, then its properties' problems and extra keys."""
    problems: list[str] = []
    props = schema.get("properties") or {}
    for key in schema.get("required") or ():
        if key not in value:
            problems.append(f"{path}.{key}: required")
    for key, item in value.items():
        if key in props and isinstance(props[key], Mapping):
            problems.extend(_check(item, props[key], f"{path}.{key}"))
        elif schema.get("additionalProperties") is False:
            problems.append(f"{path}.{key}: not allowed (additionalProperties is false)")
    return problems


class OutputSpec:
    """The reply's shape: a pydantic model class, or a JSON schema dict."""

    def __init__(self, output: Any) -> None:
        self.model: type[pydantic.BaseModel] | None = None
        if isinstance(output, type) and issubclass(output, pydantic.BaseModel):
            self.model = output
            self.schema = JsonSchema.of(output, strict=False)
        elif isinstance(output, JsonSchema):
            self.schema = output
        elif isinstance(output, Mapping):
            self.schema = JsonSchema(
                name=str(output.get("title") or "response"), schema=output, strict=False
            )
        else:
            raise ConfigError(
                "chat_structured: output must be a pydantic model class or a JSON schema "
                f"dict, got {type(output).__name__}"
            )

    def parse(self, text: str) -> tuple[Any, str | None]:
        """(the value, None) when ``text`` is a valid reply, else (None, what is wrong)."""
        body = text.strip()
        if body.startswith("```"):  # a fenced reply from a model without JSON mode
            body = body.strip("`")
            body = body[body.find("\n") + 1 :] if "\n" in body else body
        if self.model is not None:
            try:
                return self.model.model_validate_json(body), None
            except pydantic.ValidationError as e:
                return None, str(e)
        try:
            value = json.loads(body)
        except ValueError as e:
            return None, f"the reply is not JSON: {e}"
        problems = _check(value, self.schema.schema, "$")
        return (value, None) if not problems else (None, "; ".join(problems))

"""Checking an agent's structured (JSON-schema) output before it is recorded.

The SDK returns ``ResultMessage.structured_output`` when the CLI enforced the schema. Older CLIs,
or a model that answered in prose, leave it empty; then the JSON is looked for in the reply text
(a fenced block or the whole reply). Whatever is found must satisfy the JSON schema and, when the
role has one, the pydantic model (which adds rules a schema cannot state, e.g. "at least one").
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from pydantic import BaseModel, ValidationError

from handlers.prompts.extract import fenced_blocks


class MalformedOutput(ValueError):
    pass


def _json_candidates(text: str) -> list[Any]:
    found: list[Any] = []
    for chunk in [*sorted(fenced_blocks(text), key=len, reverse=True), text.strip()]:
        try:
            found.append(json.loads(chunk))
        except (json.JSONDecodeError, TypeError):
            continue
    return found


def _wrap_bare_list(value: Any, schema: dict[str, Any]) -> Any:
    # The paper's prompts ask for a bare JSON list; our schemas wrap it in an object with one
    # array property ({"models": [...]}). Accept the bare list in that one unambiguous case.
    props = schema.get("properties") or {}
    if isinstance(value, list) and len(props) == 1:
        (name, prop), = props.items()
        if prop.get("type") == "array":
            return {name: value}
    return value


def validate_structured(
    structured: Any,
    text: str,
    schema: dict[str, Any],
    model: type[BaseModel] | None = None,
) -> dict[str, Any]:
    """The validated structured output as a JSON-ready dict; ``MalformedOutput`` if there is none."""
    candidates = [structured] if structured is not None else _json_candidates(text or "")
    if not candidates:
        raise MalformedOutput("no structured output and no JSON in the reply")
    errors: list[str] = []
    for candidate in candidates:
        value = _wrap_bare_list(candidate, schema)
        try:
            jsonschema.validate(value, schema)
            if model is not None:
                value = model.model_validate(value).model_dump(mode="json")
        except jsonschema.ValidationError as exc:
            errors.append(f"schema: {exc.message}")
            continue
        except ValidationError as exc:
            errors.append(f"model: {exc.errors()[0].get('msg', exc)}")
            continue
        if not isinstance(value, dict):
            errors.append(f"expected a JSON object, got {type(value).__name__}")
            continue
        return value
    raise MalformedOutput("structured output does not match the schema: " + "; ".join(errors[:3]))

"""What the agents answer in structured form (spec 01, REQ-DM-014..020), and the envelope that
asks a backend for it (REQ-DM-041/049). Frozen pydantic models, like the rest of spec 01's values."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

_FROZEN = ConfigDict(frozen=True)


class RetrievedModel(BaseModel):
    model_config = _FROZEN

    model_name: str
    example_code: str


class RetrieverOutput(BaseModel):
    model_config = _FROZEN

    models: list[RetrievedModel]

    @field_validator("models")
    @classmethod
    def _at_least_one(cls, value: list[RetrievedModel]) -> list[RetrievedModel]:
        if len(value) < 1:
            raise ValueError("models must contain at least one entry")
        return value


class RefinePlan(BaseModel):
    model_config = _FROZEN

    code_block: str
    plan: str


class ExtractorOutput(BaseModel):
    model_config = _FROZEN

    plans: list[RefinePlan]

    @field_validator("plans")
    @classmethod
    def _at_least_one(cls, value: list[RefinePlan]) -> list[RefinePlan]:
        if len(value) < 1:
            raise ValueError("plans must contain at least one entry")
        return value


class LeakageAnswer(BaseModel):
    model_config = _FROZEN

    leakage_status: Literal["Yes Data Leakage", "No Data Leakage"]
    code_block: str


class LeakageDetectionOutput(BaseModel):
    model_config = _FROZEN

    answers: list[LeakageAnswer]

    @field_validator("answers")
    @classmethod
    def _at_least_one(cls, value: list[LeakageAnswer]) -> list[LeakageAnswer]:
        if len(value) < 1:
            raise ValueError("answers must contain at least one entry")
        return value


class DataContaminationResult(BaseModel):
    model_config = _FROZEN

    verdict: Literal["Novel", "Same"]


def output_format_for(model: type[BaseModel]) -> dict[str, Any]:
    """REQ-DM-041/049: the ``output_format`` envelope the Claude Agent SDK accepts."""
    return {"type": "json_schema", "schema": model.model_json_schema()}

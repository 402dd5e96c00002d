"""Model parameters (temperature, max_tokens, ...) validated before they reach a provider."""

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

# Strict: a JSON `true` or `"0.7"` is a mistake in the form, not a value to coerce.
Penalty = Annotated[float, Field(ge=-2, le=2)]


class ModelParams(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    max_tokens: Annotated[int, Field(ge=1, le=200_000)] | None = None
    top_p: Annotated[float, Field(ge=0, le=1)] | None = None
    presence_penalty: Penalty | None = None
    frequency_penalty: Penalty | None = None
    stop: Annotated[list[Annotated[str, Field(min_length=1)]], Field(max_length=4)] | None = None


def validate_params(data: dict[str, Any]) -> dict[str, Any]:
    """Return the parameters that are set, or raise `pydantic.ValidationError`."""
    return ModelParams.model_validate(data).model_dump(exclude_none=True)

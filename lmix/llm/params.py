"""Model parameters (temperature, max_tokens, ...) validated before they reach a provider,
and the named sampler presets that fill them in.

A model's `config` holds its defaults; an assistant's `config_override` replaces any of them.
Most keys go to the provider as they are; some are ours and never sent: `context_size`, the
prompt budget in tokens (history is trimmed to fit it), `structured_mode`, how the model
answers structured calls (found by the first one, lmix/llm/client.py), and
`structured_max_tokens`, the answer budget of those calls.
"""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# Strict: a JSON `true` or `"0.7"` is a mistake in the form, not a value to coerce.
Penalty = Annotated[float, Field(ge=-2, le=2)]
# Settings the prompt builder reads and no provider is sent.
PROMPT_ONLY = frozenset(
    {
        "context_size",
        "context_size_discovered",
        "structured_mode",
        "structured_max_tokens",
        "concurrency",
    }
)
MIN_CONTEXT_SIZE = 512
MAX_CONTEXT_SIZE = 2_000_000


StructuredMode = Literal["json_schema", "grammar", "json_object", "prompt", "tool"]


class ModelParams(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    max_tokens: Annotated[int, Field(ge=1, le=200_000)] | None = None
    top_p: Annotated[float, Field(ge=0, le=1)] | None = None
    presence_penalty: Penalty | None = None
    frequency_penalty: Penalty | None = None
    # OpenAI takes at most 4 stop sequences; Anthropic more, but one config serves both.
    stop: (
        Annotated[list[Annotated[str, Field(min_length=1, max_length=100)]], Field(max_length=4)]
        | None
    ) = None
    context_size: Annotated[int, Field(ge=MIN_CONTEXT_SIZE, le=MAX_CONTEXT_SIZE)] | None = None
    structured_mode: StructuredMode | None = None
    structured_max_tokens: Annotated[int, Field(ge=16, le=200_000)] | None = None
    # Set when `context_size` was reported by the server (lmix/llm/discovery.py), not typed:
    # a discovered size is discovered again when the model moves to another server or id.
    context_size_discovered: bool | None = None
    # How many requests its server serves at once: LMiX never sends more (lmix/llm/slots.py).
    concurrency: Annotated[int, Field(ge=1, le=10_000)] | None = None


# Starting points, not modes: choosing one fills in these values, which stay editable. Only
# sampling is set, so a preset never changes an assistant's length, stops or budget.
SAMPLER_PRESETS: dict[str, dict[str, float]] = {
    "Balanced": {
        "temperature": 0.8,
        "top_p": 0.95,
        "frequency_penalty": 0.0,
        "presence_penalty": 0.0,
    },
    "Creative": {
        "temperature": 1.1,
        "top_p": 0.98,
        "frequency_penalty": 0.3,
        "presence_penalty": 0.4,
    },
    "Precise": {
        "temperature": 0.3,
        "top_p": 0.85,
        "frequency_penalty": 0.0,
        "presence_penalty": 0.0,
    },
}


def validate_params(data: dict[str, Any]) -> dict[str, Any]:
    """Return the parameters that are set, or raise `pydantic.ValidationError`."""
    return ModelParams.model_validate(data).model_dump(exclude_none=True)


def request_params(params: dict[str, Any]) -> dict[str, Any]:
    """The validated parameters a provider is sent: all but the prompt-only ones."""
    return {key: value for key, value in params.items() if key not in PROMPT_ONLY}

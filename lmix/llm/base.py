"""The provider protocol: the few calls every LLM adapter implements, and its typed errors."""

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel

Role = Literal["system", "user", "assistant"]
T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class Message:
    role: Role
    content: str

    def as_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class CallConfig:
    """Everything an adapter needs for one call. The key is kept out of repr and logs."""

    provider: str
    endpoint: str
    model_id: str
    api_key: str = field(default="", repr=False)
    params: dict[str, Any] = field(default_factory=dict)  # validated ModelParams, as a dict
    timeout: float = 60.0
    max_retries: int = 2
    # Which take this is (0 first, 1 a regeneration...). Real models vary by themselves; the
    # deterministic offline narrator uses it so a regenerated turn reads differently.
    variant: int = 0


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class Completion:
    text: str
    usage: Usage = field(default_factory=Usage)


class Provider(Protocol):
    """One adapter per provider family. No SDK is called outside `lmix/llm/`."""

    def complete(self, config: CallConfig, messages: list[Message]) -> Completion:
        """Return the whole text of one completion."""
        ...

    def stream(self, config: CallConfig, messages: list[Message], usage: Usage) -> Iterator[str]:
        """Yield text deltas as they arrive; fill `usage` when the stream ends."""
        ...

    def structured(
        self, config: CallConfig, messages: list[Message], schema: type[T], usage: Usage
    ) -> T:
        """Return an instance of `schema` (JSON/tool mode where the provider has one,
        else parse with one repair retry). Raises LLMInvalidOutput when it cannot."""
        ...

    def list_models(self, config: CallConfig) -> list[str]:
        """Return the model ids the endpoint offers."""
        ...


class LLMError(Exception):
    """A provider call failed. `str(error)` is safe to show a user: it never holds a key."""

    user_message = "The language model call failed."

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or self.user_message)


class LLMAuthError(LLMError):
    user_message = "The provider rejected the API key (401/403). Check the model's key."


class LLMBadRequest(LLMError):
    user_message = "The provider rejected the request (400). Check the model id and settings."


class LLMRateLimited(LLMError):
    user_message = "The provider is rate limiting requests (429). Try again shortly."


class LLMTimeout(LLMError):
    user_message = "The provider did not answer in time."


class LLMUnavailable(LLMError):
    user_message = "The provider could not be reached or failed (network or 5xx)."


class LLMInvalidOutput(LLMError):
    user_message = "The model's answer did not match the expected format."


class LLMEndpointRefused(LLMError):
    """The endpoint is outside LMIX_LLM_ALLOWED_NETWORKS; the message says why."""

    user_message = "The endpoint is outside the networks model endpoints may reach."

"""The provider protocol: the few calls every LLM adapter implements, and its typed errors."""

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel

Role = Literal["system", "user", "assistant"]
T = TypeVar("T", bound=BaseModel)
# How a structured call asks for JSON: OpenAI's response_format with the schema, JSON mode
# without it, the prompt alone, Anthropic's forced tool, or the offline narrator's own way.
StructuredMode = Literal["json_schema", "grammar", "json_object", "prompt", "tool", "native"]


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
    timeout: float = 60.0  # seconds a read may wait: the whole answer, when not streamed
    connect_timeout: float = 10.0
    max_retries: int = 2  # the SDK's own retries; the client passes 0 and retries itself
    # Which take this is (0 first, 1 a regeneration...). Real models vary by themselves; the
    # deterministic offline narrator uses it so a regenerated turn reads differently.
    variant: int = 0
    # What the caller compiled the prompt from, as data, for the offline narrator
    # (lmix/llm/offline.py: a Reply, a Scene, a structured schema's own context). Real
    # adapters never read it: nothing of it is sent.
    context: object = field(default=None, repr=False, compare=False)
    # The addresses each host resolved to and was checked at, for every try of this call
    # (lmix/llm/pinning.py).
    pins: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)


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

    # The structured modes this family may use, in the order a new model tries them.
    structured_modes: tuple[StructuredMode, ...]

    def complete(self, config: CallConfig, messages: list[Message]) -> Completion:
        """Return the whole text of one completion."""
        ...

    def stream(self, config: CallConfig, messages: list[Message], usage: Usage) -> Iterator[str]:
        """Yield text deltas as they arrive; fill `usage` when the stream ends."""
        ...

    def structured(
        self,
        config: CallConfig,
        messages: list[Message],
        schema: type[BaseModel],
        usage: Usage,
        mode: StructuredMode,
        wire: dict | None = None,
    ) -> str:
        """Ask once for a JSON answer in `mode` and return its raw text (a tool call's input
        as JSON). `messages` already hold any schema instruction (structured.conversation);
        the adapter adds only the mode's request fields, with `wire` as the schema when
        given (structured.json_schema). Parsing is the caller's."""
        ...

    def list_models(self, config: CallConfig) -> list[str]:
        """Return the model ids the endpoint offers."""
        ...


class LLMError(Exception):
    """A provider call failed. `str(error)` is safe to show a user: it never holds a key."""

    user_message = "The language model call failed."
    reason = "llm_error"  # a stable name for what failed, for logs, rows and clients

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or self.user_message)


class LLMAuthError(LLMError):
    user_message = "The provider rejected the API key (401/403). Check the model's key."
    reason = "auth"


class LLMBadRequest(LLMError):
    user_message = "The provider rejected the request (400). Check the model id and settings."
    reason = "bad_request"


class LLMRateLimited(LLMError):
    user_message = "The provider is rate limiting requests (429). Try again shortly."
    reason = "rate_limited"


class LLMTimeout(LLMError):
    user_message = "The provider did not answer in time."
    reason = "timeout"


class LLMUnavailable(LLMError):
    user_message = "The provider could not be reached or failed (network or 5xx)."
    reason = "unavailable"


class LLMInvalidOutput(LLMError):
    user_message = "The model's answer did not match the expected format."
    reason = "invalid_output"


class LLMEmptyAnswer(LLMError):
    """A 200 with no text: a llama.cpp server answers so a prompt over its context."""

    user_message = (
        "The model answered with no text (empty answer). The prompt may exceed the model's context."
    )
    reason = "empty_answer"


class LLMCancelled(LLMError):
    """Its work was done, restarted or undone elsewhere while the call waited for its
    server's turn (lmix/llm/slots.py): it was never sent."""

    user_message = "The call was no longer needed and was not sent."
    reason = "cancelled"


class LLMEndpointRefused(LLMError):
    """The endpoint is outside LMIX_LLM_ALLOWED_NETWORKS; the message says why."""

    user_message = "The endpoint is outside the networks model endpoints may reach."
    reason = "endpoint_refused"

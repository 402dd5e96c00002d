"""Where a higher layer plugs into productions (docs/layers.md): productions does not
import synthesis, so synthesis registers here, in its AppConfig.ready, what it adds to a
production — a state pass after each finished turn, the speaker's own state in its
prompt, and what a rewind would hide of that state. With nothing registered (an app
without synthesis, a unit test), productions works as before."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.dispatch import Signal

from authoring.models import Assistant

from .models import Production, Turn

# Sent once a turn is finished and readable (generated, or written by hand), inside the
# transaction that finished it: a receiver queues its work with `transaction.on_commit`.
# Arguments: `turn`.
turn_done = Signal()

# The speaker's own sections of its system prompt (memories, relationships, mood): given
# the production, the speaking cast member, the branch it answers (root first) and the
# name it knows each cast member by (assistant id → name), the text to append; "" for none.
PromptSection = Callable[[Production, Assistant, Sequence[Turn], dict[object, str]], str]

# What a rewind would hide besides the turns: given the hidden turns' ids, counts by name
# ("state_deltas", "memories").
RewindCounter = Callable[[Sequence[object]], dict[str, int]]


@dataclass
class _Registry:
    prompt_sections: list[PromptSection] = field(default_factory=list)
    rewind_counters: list[RewindCounter] = field(default_factory=list)


_registry = _Registry()


def prompt_section_register(section: PromptSection) -> None:
    if section not in _registry.prompt_sections:
        _registry.prompt_sections.append(section)


def rewind_counter_register(counter: RewindCounter) -> None:
    if counter not in _registry.rewind_counters:
        _registry.rewind_counters.append(counter)


def prompt_sections(
    production: Production,
    member: Assistant,
    branch: Sequence[Turn],
    names: dict[object, str],
) -> str:
    """Every registered section for `member`'s prompt, joined."""
    parts = [section(production, member, branch, names) for section in _registry.prompt_sections]
    return "\n\n".join(part for part in parts if part)


def rewind_counts(turn_ids: Sequence[object]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for counter in _registry.rewind_counters:
        for name, count in counter(turn_ids).items():
            counts[name] = counts.get(name, 0) + count
    return counts

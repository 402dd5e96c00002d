"""The messages one assistant is sent: compiled knowledge, orientation, then its branch."""

from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

from lmix.llm.base import Message
from lmix.llm.tokens import context_window, fit_messages
from lmix.models import Persona, Scenario, World

from .knowledge import compile_knowledge, name_for
from .models import SpeakerKind, Turn, TurnStatus

TEMPLATES = Path(__file__).parent / "templates" / "productions"
DEFAULT_REPLY_TOKENS = 512
OPENING_CUE = "[The scene begins. Speak first.]"


@cache
def _template(name: str) -> str:
    return (TEMPLATES / name).read_text()


def system_prompt(
    *, speaker: Persona, cast: Sequence[Persona], world: World, scenario: Scenario
) -> str:
    knowledge = compile_knowledge(speaker=speaker, cast=cast, world=world, scenario=scenario)
    return f"{knowledge}\n\n{_template('orientation.txt').format(name=speaker.name)}"


def transcript(
    *,
    speaker_assistant_id: object,
    branch: Sequence[Turn],
    names: Mapping[str, str] | None = None,
) -> list[Message]:
    """The branch as chat messages: own turns as assistant, everyone else's as user.

    Failed turns and empty ones are skipped; consecutive messages of one role are merged, and
    the transcript always starts and ends with a user message, as every provider accepts.
    `names` renames speakers as this speaker knows them (a real name → a public name).
    """
    names = names or {}
    messages: list[Message] = []
    for turn in branch:
        if turn.status not in (TurnStatus.DONE, TurnStatus.STOPPED) or not turn.content.strip():
            continue
        if turn.speaker_kind == SpeakerKind.DIRECTOR:
            message = Message("user", f"[Director] {turn.content.strip()}")
        elif turn.assistant_id == speaker_assistant_id:
            message = Message("assistant", turn.content.strip())
        else:
            name = names.get(turn.speaker_name, turn.speaker_name)
            message = Message("user", f"{name}: {turn.content.strip()}")
        if messages and messages[-1].role == message.role:
            message = Message(message.role, f"{messages[-1].content}\n\n{message.content}")
            messages[-1] = message
        else:
            messages.append(message)
    if not messages or messages[0].role != "user":
        messages.insert(0, Message("user", OPENING_CUE))
    if messages[-1].role != "user":
        messages.append(Message("user", "[Continue the scene.]"))
    return messages


def build_messages(
    *,
    speaker: Persona,
    speaker_assistant_id: object,
    cast: Sequence[Persona],
    world: World,
    scenario: Scenario,
    branch: Sequence[Turn],
    model_id: str,
    reply_tokens: int = DEFAULT_REPLY_TOKENS,
) -> tuple[list[Message], int]:
    """Everything the model is sent, fitted to its context window (the system prompt is
    never cut; the oldest turns go first).

    Returns:
        The messages and how many transcript messages were left out to fit.
    """
    system = Message(
        "system", system_prompt(speaker=speaker, cast=cast, world=world, scenario=scenario)
    )
    # A turn is labelled with its speaker's real name: others read the name they know.
    names = {
        persona.name: seen
        for persona in cast
        if (seen := name_for(persona, by=speaker)) != persona.name
    }
    history = transcript(speaker_assistant_id=speaker_assistant_id, branch=branch, names=names)
    window = context_window(model_id)
    # A reply allowance near the whole window would leave no room for the conversation.
    reserve = min(reply_tokens, window // 2)
    return fit_messages(system, history, budget=window, reserve=reserve)

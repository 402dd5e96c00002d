"""The messages one assistant is sent: its system prompt (template, compiled knowledge and
triggered lore), then its branch, fitted to its context size."""

from collections.abc import Mapping, Sequence
from dataclasses import replace

from authoring.models import Assistant, LoreEntry, Persona, Scenario, World
from authoring.prompt_template import template_render
from lmix.llm.base import Message
from lmix.llm.client import params_for
from lmix.llm.offline import Reply
from lmix.llm.tokens import context_window, fit_messages

from . import hooks
from .knowledge import knowledge_text, name_for, public_name
from .lore import lore_for_world, lore_section, lore_select, recent_text
from .models import Production, SpeakerKind, Turn

DEFAULT_REPLY_TOKENS = 512
OPENING_CUE = "[The scene begins. Speak first.]"
NEXT_CUE = "[Continue the scene.]"
# "Continue": the last message is the speaker's own, cut short; it goes on from there.
CONTINUE_CUE = "[Continue your last message exactly where it ends. Do not repeat any of it.]"
# "Impersonate": a draft of the speaker's next line, for its player to edit and send.
# A turn whose assistant is gone: nothing says whose persona spoke it.
UNKNOWN_SPEAKER = "Someone"
IMPERSONATE_CUE = (
    "[Write only your next line, in your own voice, as your player would write it: "
    "a few sentences of speech and small actions, nothing for anyone else.]"
)


def system_prompt(
    *,
    speaker: Persona,
    cast: Sequence[Persona],
    world: World,
    scenario: Scenario,
    template: str = "",
    lore: str = "",
) -> str:
    """The speaker's template (or the default) around its own knowledge and `lore`, each
    exactly once (productions/prompt_template.py)."""
    knowledge = knowledge_text(speaker=speaker, cast=cast, world=world, scenario=scenario)
    return template_render(
        template,
        char=speaker.name,
        world=world.name,
        scenario=scenario.name,
        knowledge=knowledge,
        lore=lore,
    )


def transcript(
    *,
    speaker_assistant_id: object,
    branch: Sequence[Turn],
    names: Mapping[object, str] | None = None,
    cue: str = NEXT_CUE,
) -> list[Message]:
    """The branch as chat messages: own turns as assistant (generated or written in this
    speaker's voice), everyone else's as user.

    Failed turns and empty ones are skipped; consecutive messages of one role are merged, and
    the transcript always starts and ends with a user message (`cue` when the branch ends
    with the speaker's own), as every provider accepts.

    Args:
        names: each other speaker by assistant id → the name this speaker knows its
            persona by (`speaker_names`). A turn is never labelled with the assistant's own
            label (the turn's `speaker_name`): that is the director's name for a cast member
            and may hold a real name or a model's; a speaker not in `names` is "Someone".
    """
    names = names or {}
    messages: list[Message] = []
    for turn in branch:
        if not turn.is_readable:
            continue
        if turn.speaker_kind == SpeakerKind.DIRECTOR:
            message = Message("user", f"[Director] {turn.content.strip()}")
        elif _own(turn, speaker_assistant_id):
            message = Message("assistant", turn.content.strip())
        else:
            name = names.get(turn.assistant_id, UNKNOWN_SPEAKER)
            message = Message("user", f"{name}: {turn.content.strip()}")
        if messages and messages[-1].role == message.role:
            message = Message(message.role, f"{messages[-1].content}\n\n{message.content}")
            messages[-1] = message
        else:
            messages.append(message)
    if not messages or messages[0].role != "user":
        messages.insert(0, Message("user", OPENING_CUE))
    if messages[-1].role != "user":
        messages.append(Message("user", cue))
    return messages


def speaker_names(*, voices: Mapping[object, Persona], reader: Persona) -> dict[object, str]:
    """Each assistant id of `voices` → the name `reader` knows its persona by: the public
    name (`known_as`), the real one for the persona itself and fellow covert members
    (productions/knowledge.py's `name_for`)."""
    return {assistant_id: name_for(persona, by=reader) for assistant_id, persona in voices.items()}


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
    cue: str = NEXT_CUE,
    template: str = "",
    lore: Sequence[LoreEntry] = (),
    context_size: int | None = None,
    voices: Mapping[object, Persona] | None = None,
    state: str = "",
) -> tuple[list[Message], int]:
    """Everything the model is sent, fitted to `context_size` tokens (else the model's
    known context window): the system prompt is never cut; the oldest turns go first.

    Args:
        template: the assistant's system prompt template; "" the default.
        lore: the world's enabled lore entries (`lore_for_world`); those the last
            `world.lore_scan_depth` turns call up and the speaker may know are added.
        voices: the persona each assistant of the branch's turns plays, by assistant id:
            others' turns are labelled with the name the speaker knows that persona by.
        state: the speaker's own memories, relationships and mood (`hooks.prompt_sections`),
            after the template's text, never cut.
    Returns:
        The messages and how many transcript messages were left out to fit.
    """
    chosen = lore_select(
        entries=lore,
        speaker=speaker,
        text=recent_text(branch, world.lore_scan_depth),
        budget=world.lore_budget,
    )
    system = Message(
        "system",
        system_prompt(
            speaker=speaker,
            cast=cast,
            world=world,
            scenario=scenario,
            template=template,
            lore=lore_section(chosen),
        )
        + (f"\n\n{state}" if state else ""),
    )
    names = speaker_names(voices=voices or {}, reader=speaker)
    history = transcript(
        speaker_assistant_id=speaker_assistant_id, branch=branch, names=names, cue=cue
    )
    window = context_size or context_window(model_id)
    # A reply allowance near the whole window would leave no room for the conversation.
    reserve = min(reply_tokens, window // 2)
    return fit_messages(system, history, budget=window, reserve=reserve)


def offline_reply(
    *,
    speaker: Persona,
    speaker_assistant_id: object,
    world: World,
    scenario: Scenario,
    branch: Sequence[Turn],
    names: Mapping[object, str],
    cue: str = NEXT_CUE,
) -> Reply:
    """What the offline narrator reads of a turn's prompt (lmix/llm/offline.py): the
    speaker by the name everyone knows, and the newest line of the transcript that is not
    its own, labelled as `transcript` labels it."""
    said = [t for t in branch if t.is_readable and not _own(t, speaker_assistant_id)]
    reply = Reply(speaker=public_name(speaker), world=world.name, scenario=scenario.description)
    if cue == CONTINUE_CUE:
        return replace(reply, kind="continue")
    if not said:
        return reply  # an opening
    last = said[-1]
    if last.speaker_kind == SpeakerKind.DIRECTOR:
        return replace(reply, kind="directed", line=last.content.strip())
    other = names.get(last.assistant_id, UNKNOWN_SPEAKER)
    return replace(reply, kind="reply", line=last.content.strip(), other=other)


def _own(turn: Turn, speaker_assistant_id: object) -> bool:
    return turn.assistant_id is not None and turn.assistant_id == speaker_assistant_id


def member_messages(
    *,
    production: Production,
    cast: Sequence[Assistant],
    member: Assistant,
    branch: Sequence[Turn],
    cue: str = NEXT_CUE,
) -> tuple[list[Message], Reply]:
    """What a cast member is sent to speak after `branch` (its turn, or a drafted line):
    its model's and its own settings, its template, the lore it may know; and what the
    offline narrator reads of it (`offline_reply`).

    Raises:
        LLMBadRequest: a stored setting is invalid; the message names which.
    """
    # The model's settings, then the assistant's.
    params = params_for(member.model, member.config_override)
    voices = _voices(cast, branch)
    names = speaker_names(voices=voices, reader=member.persona)
    messages, _dropped = build_messages(
        speaker=member.persona,
        speaker_assistant_id=member.pk,
        cast=[other.persona for other in cast],
        world=production.world,
        scenario=production.scenario,
        branch=branch,
        model_id=member.model.model_id,
        reply_tokens=params.get("max_tokens", DEFAULT_REPLY_TOKENS),
        cue=cue,
        template=member.system_prompt_template,
        lore=lore_for_world(world=production.world),
        context_size=params.get("context_size"),
        voices=voices,
        state=hooks.prompt_sections(production, member, branch, names),
    )
    reply = offline_reply(
        speaker=member.persona,
        speaker_assistant_id=member.pk,
        world=production.world,
        scenario=production.scenario,
        branch=branch,
        names=names,
        cue=cue,
    )
    return messages, reply


def _voices(cast: Sequence[Assistant], branch: Sequence[Turn]) -> dict[object, Persona]:
    """The persona of each assistant who spoke on `branch`: the cast's as loaded, and those
    of assistants since removed from the cast (one query, only when there are any)."""
    voices: dict[object, Persona] = {assistant.pk: assistant.persona for assistant in cast}
    gone = {turn.assistant_id for turn in branch if turn.assistant_id is not None} - set(voices)
    if gone:
        for assistant in Assistant.objects.filter(pk__in=gone).select_related("persona"):
            voices[assistant.pk] = assistant.persona
    return voices

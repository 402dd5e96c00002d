"""Impersonation drafts: the model writes a cast member's next line for the user who speaks
as that character, streamed to the production's socket and stored nowhere. It becomes a
turn only when the user sends it (as a "speak as" turn, edited or not)."""

import logging
import uuid
from contextlib import closing

from authoring.models import Assistant
from lmix.llm.base import LLMError, Message, Usage
from lmix.llm.client import llm_stream
from lmix.realtime.stream import TextStream

from . import events
from .enqueue import draft_generate_enqueue
from .models import Production, Turn
from .prompting import IMPERSONATE_CUE, member_messages
from .selectors import cast_load, turn_branch

logger = logging.getLogger(__name__)


def draft_request(
    *,
    production: Production,
    speaker: Assistant,
    parent: Turn | None,
    draft_id: uuid.UUID | None = None,
) -> str:
    """Start a draft of `speaker`'s next line after `parent`; returns the draft's id (new
    unless the client chose it), which its `draft.token|done|failed` events carry."""
    draft_id = str(draft_id or uuid.uuid4())
    draft_generate_enqueue(
        draft_id, str(production.pk), str(speaker.pk), str(parent.pk) if parent else None
    )
    return draft_id


def draft_generate(
    *, draft_id: str, production_id: str, assistant_id: str, parent_id: str | None
) -> None:
    """Write the draft with the speaker's own knowledge only, as its turn would be."""
    production = Production.objects.select_related("world", "scenario").get(pk=production_id)
    cast = cast_load(production=production)
    speaker = next((member for member in cast if str(member.pk) == assistant_id), None)
    if speaker is None:
        _send(production_id, "draft.failed", draft_id, error="That character left the cast.")
        return
    draft = _DraftStream(production_id, draft_id)
    try:  # an invalid stored setting (LLMBadRequest) fails the draft, saying which
        messages, reply = member_messages(
            production=production,
            cast=cast,
            member=speaker,
            branch=turn_branch(production=production, leaf_id=parent_id),
            cue=IMPERSONATE_CUE,
        )
        # The transcript may end with others' words: the draft's own cue always ends it.
        last = messages[-1]
        if IMPERSONATE_CUE not in last.content:
            messages[-1] = Message(last.role, f"{last.content}\n\n{IMPERSONATE_CUE}")
        stream = llm_stream(
            model=speaker.model,
            messages=messages,
            purpose="production.impersonate",
            overrides=speaker.config_override,
            usage=Usage(),
            subject=draft_id,
            context=reply,
        )
        with closing(stream) as deltas:
            for delta in deltas:
                if delta:
                    draft.add(delta)
        draft.flush()
    except LLMError as error:
        _send(production_id, "draft.failed", draft_id, error=str(error))
        return
    except Exception:
        logger.exception("draft %s failed unexpectedly", draft_id)
        _send(production_id, "draft.failed", draft_id, error="Something went wrong.")
        return
    _send(production_id, "draft.done", draft_id, content=draft.text.strip())


class _DraftStream(TextStream):
    """A draft's deltas, published in batches; a draft is stored nowhere."""

    def __init__(self, production_id: str, draft_id: str) -> None:
        super().__init__()
        self.production_id, self.draft_id = production_id, draft_id

    def publish(self, index: int, delta: str) -> None:
        _send(self.production_id, "draft.token", self.draft_id, index=index, delta=delta)

    def store(self, text: str, index: int) -> bool:
        return True


def _send(production_id: str, kind: str, draft_id: str, **fields) -> None:
    events.notify_draft(production_id, kind, draft_id, **fields)

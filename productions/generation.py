"""Generating one turn under a lease: claim, stream, checkpoint, finish; and the sweep that
re-runs work whose worker died (docs/tasks.md).

Deltas are published in batches with their index and never written on its own: the text is
checkpointed at most every LMIX_STREAM_CHECKPOINT_SECONDS and at the end, and a reader
gets the stored text with `token_count`, the number of deltas it holds
(lmix/realtime/stream.py).
"""

import logging
import time

from django.core.exceptions import ObjectDoesNotExist
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from lmix.errors import ApplicationError
from lmix.llm.base import LLMError, Usage
from lmix.llm.client import llm_stream
from lmix.realtime.leases import (
    LeasedWork,
    lease_claim,
    lease_held,
    lease_lapsed,
    lease_sweep,
    leased,
)
from lmix.realtime.stream import TextStream

from . import events, hooks
from .enqueue import TURN_GENERATE, turn_generate_enqueue, turn_key
from .models import TURN_TRANSITIONS, Production, Turn, TurnStatus
from .prompting import CONTINUE_CUE, NEXT_CUE, member_messages
from .selectors import cast_load, turn_branch

logger = logging.getLogger(__name__)


class StreamWriter(TextStream):
    """The text of one generation run: publishes its deltas, checkpoints the text.

    Every write is conditional on the run still holding the turn (streaming, same lease
    owner, same attempt), so a stopped turn or a run whose lease went elsewhere stops.
    """

    def __init__(self, turn: Turn) -> None:
        # A continuation goes on from the stored text and its deltas.
        super().__init__(
            text=turn.content if turn.continuation else "",
            index=turn.token_count if turn.continuation else 0,
        )
        self.turn = turn
        self.lease = {"lease_owner": turn.lease_owner, "attempts": turn.attempts}
        self.ours = Q(pk=turn.pk, **self.lease)

    def add(self, delta: str) -> bool:
        first = self.index == self.turn.token_count and not self.pending
        if first and self.turn.continuation and _runs_on(self.text, delta):
            delta = f" {delta}"  # a continuation's first words, not glued to the last ones
        return super().add(delta)

    def publish(self, index: int, delta: str) -> None:
        events.notify_turn_token(self.turn, index=index, delta=delta)

    def store(self, text: str, index: int) -> bool:
        """Store the text so far (renewing the lease)."""
        return bool(
            Turn.objects.filter(self.ours, status=TurnStatus.STREAMING).update(
                content=text, token_count=index, heartbeat_at=timezone.now()
            )
        )


def _runs_on(text: str, delta: str) -> bool:
    """Whether `delta` would be glued to the end of `text` without a space between words."""
    return bool(text) and not text[-1].isspace() and delta[:1].isalnum()


def turn_generate(*, turn_id: object) -> None:
    """Generate a pending turn, streaming its text to the production's socket.

    Safe to run twice: only the run that moves the turn from pending to streaming works,
    and it holds the turn's lease while it runs. A provider failure ends the turn `failed`
    with a reason a user understands.
    """
    with lease_held() as owner:
        if not lease_claim(TURNS, turn_id, owner):
            return
        turn = Turn.objects.select_related("production__world", "production__scenario").get(
            pk=turn_id
        )
        writer = StreamWriter(turn)
        started = time.monotonic()
        try:
            _stream(turn, writer, started)
        except (LLMError, ApplicationError) as error:
            _fail(writer, message=str(error), started=started)
        except ObjectDoesNotExist:
            logger.info("turn %s was deleted while it was being generated", turn_id)
        except Exception:
            logger.exception("turn %s failed unexpectedly", turn_id)
            _fail(writer, message="Something went wrong generating this turn.", started=started)


def _stream(turn: Turn, writer: StreamWriter, started: float) -> None:
    production = turn.production
    cast = cast_load(production=production)
    assistant = next((a for a in cast if a.pk == turn.assistant_id), None)
    if assistant is None:
        raise ApplicationError("This assistant is no longer in the production's cast.")
    greeting = assistant.persona.greeting.strip()
    if greeting and turn.parent_id is None and not turn.continuation and not _earlier_takes(turn):
        # A production opens with the persona's own first message, as in chat front ends;
        # regenerating that turn asks the model for another.
        writer.add(greeting)
        _finish(writer, usage=Usage(), started=started)
        return
    branch = turn_branch(production=production, leaf_id=turn.parent_id)
    if turn.continuation:  # its own text so far ends the branch; the model goes on from it
        branch.append(Turn(assistant_id=turn.assistant_id, content=turn.content, status="done"))
    # An invalid stored setting fails the turn here, saying which, before any call.
    messages, reply = member_messages(
        production=production,
        cast=cast,
        member=assistant,
        branch=branch,
        cue=CONTINUE_CUE if turn.continuation else NEXT_CUE,
    )
    if not Turn.objects.filter(writer.ours, status=TurnStatus.STREAMING).update(
        directive=[message.as_dict() for message in messages]
    ):
        return  # stopped before the model was called: no call at all

    usage = Usage()
    stream = llm_stream(
        model=assistant.model,
        messages=messages,
        purpose="production.turn",
        subject=f"turn:{turn.pk}",
        overrides=assistant.config_override,
        usage=usage,
        variant=_earlier_takes(turn),
        context=reply,
    )
    try:
        for delta in stream:
            if delta and not writer.add(delta):
                break  # stopped by the user (the text so far stays), or no longer ours
    finally:
        stream.close()
    _finish(writer, usage=usage, started=started)


def _earlier_takes(turn: Turn) -> int:
    """How many times this speaker already answered this parent (regenerations)."""
    return Turn.objects.filter(
        speaker_kind=turn.speaker_kind,
        production_id=turn.production_id,
        parent_id=turn.parent_id,
        assistant_id=turn.assistant_id,
        created_at__lt=turn.created_at,
    ).count()


def _finish(writer: StreamWriter, *, usage: Usage, started: float) -> None:
    writer.flush()  # the last deltas go out before the turn's end
    turn = writer.turn
    fields = {
        "content": writer.text,
        "token_count": writer.index,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "latency_ms": int((time.monotonic() - started) * 1000),
        "continuation": False,
        "error": "",
    }
    with transaction.atomic():
        done = Turn.move(
            turn.pk,
            TurnStatus.DONE,
            where={"lease_owner": turn.lease_owner, "attempts": turn.attempts},
            **fields,
        )
        # Stopped meanwhile: the text written until the stop stays, with its numbers.
        kept = done or Turn.objects.filter(writer.ours, status=TurnStatus.STOPPED).update(**fields)
        if not kept:
            logger.info("turn %s is no longer this run's (deleted or restarted)", turn.pk)
            return
        turn.refresh_from_db()
        events.notify_turn_finished(turn)
        if done and turn.is_readable:
            hooks.turn_done.send(sender=Turn, turn=turn)
    if done:
        from .services import autoplay_continue

        autoplay_continue(production_id=turn.production_id, after=turn)


def _fail(writer: StreamWriter, *, message: str, started: float) -> None:
    """End the run failed. A failed continuation leaves the turn done with its text and the
    error, so the text written before stays the turn's."""
    writer.flush()
    turn = writer.turn
    with transaction.atomic():
        if not Turn.move(
            turn.pk,
            TurnStatus.DONE if turn.continuation else TurnStatus.FAILED,
            continuation=False,
            where=writer.lease,
            error=message,
            content=writer.text,
            token_count=writer.index,
            latency_ms=int((time.monotonic() - started) * 1000),
        ):
            return
        turn.refresh_from_db()
        events.notify_turn_finished(turn)
        _autoplay_end(turn)


def _autoplay_end(failed_turn: Turn) -> None:
    """A failed turn ends auto-play, and clients are told it was the failure."""
    from .services import autoplay_end

    production = Production.objects.select_for_update().get(pk=failed_turn.production_id)
    autoplay_end(production, failed_turn=failed_turn)


def _restarted(turn: Turn) -> None:
    turn.refresh_from_db()
    events.notify_turn_restarted(turn)


def _failed(turn: Turn) -> None:
    turn.refresh_from_db()
    events.notify_turn_finished(turn)
    _autoplay_end(turn)


# Turns under a lease (lmix/realtime/leases.py): a lapsed one is generated again from the
# start (same turn, clients told with `turn.restarted`; a continuation goes on from its
# last checkpoint), or fails once it has had its runs.
TURNS = leased(
    LeasedWork(
        name="turn",
        what="a production turn, streamed",
        model=Turn,
        task=TURN_GENERATE,
        transitions=TURN_TRANSITIONS,
        pending=TurnStatus.PENDING,
        running=TurnStatus.STREAMING,
        failed=TurnStatus.FAILED,
        key=turn_key,
        enqueue=turn_generate_enqueue,
        load=lambda rows: rows.defer("directive"),
        rerun_reset=lambda turn: {} if turn.continuation else {"content": "", "token_count": 0},
        on_rerun=_restarted,
        fail_message="The worker stopped while writing this turn ({attempts} tries). Retry it.",
        on_failed=_failed,
    )
)


def turns_sweep(*, pending_after: float | None = None) -> dict[str, int]:
    """The backstop for lost work: re-enqueue turns whose task was lost (never one still
    queued), and run again turns whose worker stopped renewing its lease (or fail them after
    too many runs).

    Returns:
        How many turns were re-enqueued, restarted and failed.
    """
    return lease_sweep(TURNS, pending_after=pending_after)


def turn_lease_lapsed(*, turn: Turn) -> str | None:
    """Its worker is gone: generate the turn again, or fail it (`lease_lapsed`)."""
    return lease_lapsed(TURNS, turn)

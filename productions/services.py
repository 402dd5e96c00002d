"""Writes to productions: create and edit, ask for a turn, generate it, stop it, auto-play."""

import logging
import time
from collections.abc import Sequence
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ObjectDoesNotExist
from django.db import transaction
from django.utils import timezone

from lmix.errors import ApplicationError
from lmix.llm.base import LLMError, Usage
from lmix.llm.client import llm_stream
from lmix.models import Assistant, Scenario, World

from . import events
from .models import ACTIVE_STATUSES, CastMember, Production, SpeakerKind, Turn, TurnStatus
from .prompting import DEFAULT_REPLY_TOKENS, build_messages
from .selectors import cast_load, turn_branch
from .speaker import CastEntry, SpokenTurn, next_speaker

logger = logging.getLogger(__name__)

HEAD = object()  # "continue from the production's head" when no parent is given
MIN_CAST = 2


@transaction.atomic
def production_create(
    *,
    owner: AbstractBaseUser,
    name: str,
    world: World,
    scenario: Scenario,
    assistants: Sequence[Assistant],
    show_directive: bool = False,
) -> Production:
    production = Production.objects.create(
        owner=owner, name=name, world=world, scenario=scenario, show_directive=show_directive
    )
    _cast_set(production, assistants)
    return production


@transaction.atomic
def production_update(*, production: Production, data: dict) -> Production:
    """Change name, setting, directive flag or cast (turns of a removed assistant stay)."""
    assistants = data.pop("assistants", None)
    for attr, value in data.items():
        setattr(production, attr, value)
    production.save()
    if assistants is not None:
        _cast_set(production, assistants)
    return production


@transaction.atomic
def production_head_set(*, production: Production, turn: Turn) -> Production:
    """Follow another branch: `turn` becomes the leaf new turns continue from."""
    if turn.production_id != production.pk:
        raise ApplicationError("That turn is not part of this production.")
    Production.objects.filter(pk=production.pk).update(head=turn)
    production.head = turn
    return production


def _cast_set(production: Production, assistants: Sequence[Assistant]) -> None:
    unique = list(dict.fromkeys(assistants))
    if len(unique) < MIN_CAST:
        raise ApplicationError(
            "A production needs two or more assistants.",
            details={"assistants": ["Pick two or more assistants."]},
        )
    CastMember.objects.filter(production=production).delete()
    CastMember.objects.bulk_create(
        CastMember(production=production, assistant=assistant, position=position)
        for position, assistant in enumerate(unique)
    )


@transaction.atomic
def turn_request(
    *,
    production: Production,
    assistant: Assistant | None = None,
    parent: Turn | None | object = HEAD,
    content: str | None = None,
    director: AbstractBaseUser | None = None,
) -> Turn:
    """Add a turn after `parent`: the director's own words, or an assistant's, generated in
    the background.

    Raises:
        ApplicationError: 409 when a turn is already being generated, 400 when the parent
            is still being written.
    """
    production = Production.objects.select_for_update().get(pk=production.pk)
    if parent is HEAD:
        parent = production.head
    if parent is not None and parent.status in ACTIVE_STATUSES:
        raise ApplicationError("Wait until that turn has finished before answering it.")
    depth = 0 if parent is None else parent.depth + 1

    if content is not None and assistant is None:
        turn = Turn.objects.create(
            production=production,
            parent=parent,
            depth=depth,
            speaker_kind=SpeakerKind.DIRECTOR,
            director=director,
            speaker_name="Director",
            content=content,
            status=TurnStatus.DONE,
        )
    else:
        if production.turns.filter(status__in=ACTIVE_STATUSES).exists():
            raise ApplicationError(
                "A turn is already being generated; stop it or wait for it.", status_code=409
            )
        cast = cast_load(production=production)
        if not cast:
            raise ApplicationError(
                "This production has no cast left: add assistants to it first.",
                details={"assistants": ["Add assistants to the production."]},
            )
        if assistant is None:
            assistant = _choose_speaker(production, cast, parent)
        turn = Turn.objects.create(
            production=production,
            parent=parent,
            depth=depth,
            speaker_kind=SpeakerKind.ASSISTANT,
            assistant=assistant,
            speaker_name=assistant.display_name,
            model_id=assistant.model.model_id,
            status=TurnStatus.PENDING,
        )
        from .tasks import turn_generate_task

        transaction.on_commit(lambda: turn_generate_task.delay(str(turn.pk)))
    production.head = turn
    production.save(update_fields=["head", "updated_at"])
    events.notify_turn_created(turn)
    return turn


def _choose_speaker(
    production: Production, cast: list[Assistant], parent: Turn | None
) -> Assistant:
    branch = turn_branch(production=production, leaf_id=parent.pk if parent else None)
    chosen = next_speaker(
        [CastEntry(assistant.pk, assistant.display_name) for assistant in cast],
        [SpokenTurn(turn.assistant_id, turn.content) for turn in branch],
    )
    return next(assistant for assistant in cast if assistant.pk == chosen)


def turn_generate(*, turn_id: object) -> None:
    """Generate a pending turn, streaming its text to the production's socket.

    Safe to run twice: only the run that moves the turn from pending to streaming works.
    A provider failure ends the turn `failed` with a reason a user understands.
    """
    if not Turn.move(turn_id, TurnStatus.STREAMING):
        return
    turn = Turn.objects.select_related("production__world", "production__scenario").get(pk=turn_id)
    production = turn.production
    started = time.monotonic()
    usage = Usage()
    text = ""
    index = 0
    try:
        cast = cast_load(production=production)
        assistant = next((a for a in cast if a.pk == turn.assistant_id), None)
        if assistant is None:
            raise ApplicationError("This assistant is no longer in the production's cast.")
        reply_tokens = int(
            {**assistant.model.config, **assistant.config_override}.get(
                "max_tokens", DEFAULT_REPLY_TOKENS
            )
        )
        messages, _dropped = build_messages(
            speaker=assistant.persona,
            speaker_assistant_id=assistant.pk,
            cast=[member.persona for member in cast],
            world=production.world,
            scenario=production.scenario,
            branch=turn_branch(production=production, leaf_id=turn.parent_id),
            model_id=assistant.model.model_id,
            reply_tokens=reply_tokens,
        )
        if not Turn.objects.filter(pk=turn.pk, status=TurnStatus.STREAMING).update(
            directive=[message.as_dict() for message in messages]
        ):
            return  # stopped before the model was called: no call at all

        stream = llm_stream(
            model=assistant.model,
            messages=messages,
            purpose="production.turn",
            overrides=assistant.config_override,
            usage=usage,
            variant=_earlier_takes(turn),
        )
        try:
            for delta in stream:
                if not delta:
                    continue
                if not _append_delta(turn, text=text + delta, index=index, delta=delta):
                    break  # stopped by the user: keep what was written
                text += delta
                index += 1
        finally:
            stream.close()
        _finish(turn, text=text, tokens=index, usage=usage, started=started)
    except (LLMError, ApplicationError) as error:
        _fail(turn, text=text, message=str(error), started=started)
    except ObjectDoesNotExist:
        logger.info("turn %s was deleted while it was being generated", turn_id)
        return
    except Exception:
        logger.exception("turn %s failed unexpectedly", turn_id)
        _fail(
            turn, text=text, message="Something went wrong generating this turn.", started=started
        )


def _earlier_takes(turn: Turn) -> int:
    """How many times this speaker already answered this parent (regenerations)."""
    return Turn.objects.filter(
        production_id=turn.production_id,
        parent_id=turn.parent_id,
        assistant_id=turn.assistant_id,
        created_at__lt=turn.created_at,
    ).count()


@transaction.atomic
def _append_delta(turn: Turn, *, text: str, index: int, delta: str) -> bool:
    """Store the text so far and announce the delta; False once the turn was stopped."""
    if not Turn.objects.filter(pk=turn.pk, status=TurnStatus.STREAMING).update(
        content=text, token_count=index + 1, updated_at=timezone.now()
    ):
        return False
    events.notify_turn_token(turn, index=index, delta=delta)
    return True


def _finish(turn: Turn, *, text: str, tokens: int, usage: Usage, started: float) -> None:
    stats = {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "latency_ms": int((time.monotonic() - started) * 1000),
    }
    with transaction.atomic():
        done = Turn.move(turn.pk, TurnStatus.DONE, content=text, token_count=tokens, **stats)
        if not done:  # stopped meanwhile: the partial text stays, with its numbers
            Turn.objects.filter(pk=turn.pk, status=TurnStatus.STOPPED).update(
                content=text, token_count=tokens, **stats
            )
        turn.refresh_from_db()
        events.notify_turn_finished(turn)
    if done:
        autoplay_continue(production_id=turn.production_id, after=turn)


def _fail(turn: Turn, *, text: str, message: str, started: float) -> None:
    with transaction.atomic():
        Turn.move(
            turn.pk,
            TurnStatus.FAILED,
            error=message,
            content=text,
            latency_ms=int((time.monotonic() - started) * 1000),
        )
        turn.refresh_from_db()
        events.notify_turn_finished(turn)
        _autoplay_end(Production.objects.select_for_update().get(pk=turn.production_id))


@transaction.atomic
def turn_stop(*, turn: Turn) -> Turn:
    """Stop a pending or streaming turn; its partial text is kept as `stopped`, and
    auto-play ends. Locks the turn before the production, as generation does."""
    if Turn.move(turn.pk, TurnStatus.STOPPED):
        turn.refresh_from_db()
        events.notify_turn_finished(turn)
        # Stopping a turn is stopping the run it belongs to.
        _autoplay_end(Production.objects.select_for_update().get(pk=turn.production_id))
    else:
        turn.refresh_from_db()
    return turn


def turns_sweep(*, pending_after: float = 30, stale_after: float | None = None) -> dict[str, int]:
    """The backstop for lost work: re-enqueue turns whose task never started, and fail turns
    whose worker died mid-stream (no progress for longer than any call may take).

    Returns:
        How many turns were re-enqueued and how many were failed.
    """
    from .tasks import turn_generate_task

    now = timezone.now()
    if stale_after is None:
        stale_after = settings.LLM_TIMEOUT_SECONDS * (settings.LLM_MAX_RETRIES + 1) + 30
    lost = list(
        Turn.objects.filter(
            status=TurnStatus.PENDING, created_at__lt=now - timedelta(seconds=pending_after)
        ).values_list("pk", flat=True)
    )
    for turn_id in lost:
        turn_generate_task.delay(str(turn_id))
    stale = Turn.objects.filter(
        status=TurnStatus.STREAMING, updated_at__lt=now - timedelta(seconds=stale_after)
    )
    failed = 0
    for turn in stale:
        with transaction.atomic():
            if Turn.move(
                turn.pk,
                TurnStatus.FAILED,
                only_from=(TurnStatus.STREAMING,),
                error="The worker stopped while writing this turn. Retry it.",
            ):
                failed += 1
                turn.refresh_from_db()
                events.notify_turn_finished(turn)
                _autoplay_end(Production.objects.select_for_update().get(pk=turn.production_id))
    return {"requeued": len(lost), "failed": failed}


@transaction.atomic
def autoplay_start(
    *, production: Production, count: int, parent: Turn | None | object = HEAD
) -> Production:
    """Generate `count` turns in a row, each speaker chosen by the rule."""
    turn_request(production=production, parent=parent)
    production = Production.objects.select_for_update().get(pk=production.pk)
    production.autoplay_remaining = count - 1
    production.save(update_fields=["autoplay_remaining", "updated_at"])
    events.notify_autoplay(production)
    return production


@transaction.atomic
def autoplay_continue(*, production_id: object, after: Turn) -> None:
    """After a finished turn, start the next one if auto-play has turns left."""
    production = Production.objects.select_for_update().get(pk=production_id)
    if production.autoplay_remaining <= 0:
        return
    production.autoplay_remaining -= 1
    production.save(update_fields=["autoplay_remaining", "updated_at"])
    events.notify_autoplay(production)
    try:
        turn_request(production=production, parent=after)
    except ApplicationError:  # someone else started a turn meanwhile: auto-play yields
        _autoplay_end(production)


@transaction.atomic
def autoplay_stop(*, production: Production) -> Production:
    """End auto-play and stop the turn being generated."""
    for turn in production.turns.filter(status__in=ACTIVE_STATUSES):
        turn_stop(turn=turn)
    production = Production.objects.select_for_update().get(pk=production.pk)
    _autoplay_end(production)
    return production


def _autoplay_end(production: Production) -> None:
    if production.autoplay_remaining:
        production.autoplay_remaining = 0
        production.save(update_fields=["autoplay_remaining", "updated_at"])
        events.notify_autoplay(production)

"""Writes to productions: create and edit, ask for a turn, stop it, auto-play. Generating a
turn is in generation.py."""

from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from authoring.models import Assistant, Scenario, World
from lmix.errors import ApplicationError

from . import events, hooks
from .enqueue import turn_generate_enqueue
from .models import ACTIVE_STATUSES, CastMember, Production, SpeakerKind, Turn, TurnStatus
from .selectors import cast_load, turn_branch
from .speaker import CastEntry, SpokenTurn, next_speaker

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
    auto_reply: bool = False,
) -> Production:
    production = Production.objects.create(
        owner=owner,
        name=name,
        world=world,
        scenario=scenario,
        show_directive=show_directive,
        auto_reply=auto_reply,
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
    events.notify_head_moved(production)
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
    speak_as: Assistant | None = None,
) -> Turn:
    """Add a turn after `parent`: the director's own words, words written in a cast
    member's voice (`speak_as` with `content`), or an assistant's, generated in the
    background. With the production's auto-reply on, the next speaker answers written words.

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
            speaker_kind=SpeakerKind.PERSONA if speak_as else SpeakerKind.DIRECTOR,
            # In a cast member's voice, it is that member's turn to every prompt.
            assistant=speak_as,
            director=director,
            speaker_name=speak_as.display_name if speak_as else "Director",
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

        transaction.on_commit(lambda: turn_generate_enqueue(turn.pk))
    production.head = turn
    production.save(update_fields=["head", "updated_at"])
    events.notify_turn_created(turn)
    if turn.status == TurnStatus.DONE:  # written words: finished as they are created
        hooks.turn_done.send(sender=Turn, turn=turn)
    if turn.status == TurnStatus.DONE and production.auto_reply:
        _reply(production, turn)
    return turn


def _reply(production: Production, written: Turn) -> None:
    """Auto-reply: the next speaker answers written words, unless a turn is already being
    generated (the words stay; nobody answers twice)."""
    if production.turns.filter(status__in=ACTIVE_STATUSES).exists():
        return
    turn_request(production=production, parent=written)


def _choose_speaker(
    production: Production, cast: list[Assistant], parent: Turn | None
) -> Assistant:
    branch = turn_branch(production=production, leaf_id=parent.pk if parent else None)
    chosen = next_speaker(
        [CastEntry(assistant.pk, assistant.display_name) for assistant in cast],
        [SpokenTurn(turn.assistant_id, turn.content) for turn in branch],
    )
    return next(assistant for assistant in cast if assistant.pk == chosen)


@transaction.atomic
def turn_stop(*, turn: Turn) -> Turn:
    """Stop a pending or streaming turn; its partial text is kept as `stopped`, and
    auto-play ends. Locks the turn before the production, as generation does."""
    if Turn.move(turn.pk, TurnStatus.STOPPED):
        turn.refresh_from_db()
        events.notify_turn_finished(turn)
        # Stopping a turn is stopping the run it belongs to.
        autoplay_end(Production.objects.select_for_update().get(pk=turn.production_id))
    else:
        turn.refresh_from_db()
    return turn


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
        autoplay_end(production)


@transaction.atomic
def autoplay_stop(*, production: Production) -> Production:
    """End auto-play and stop the turn being generated."""
    for turn in production.turns.filter(status__in=ACTIVE_STATUSES):
        turn_stop(turn=turn)
    production = Production.objects.select_for_update().get(pk=production.pk)
    autoplay_end(production)
    return production


def autoplay_end(production: Production, *, failed_turn: Turn | None = None) -> None:
    """End auto-play (the caller holds the production's row lock).

    Args:
        failed_turn: the turn whose failure ends it; clients are told, to say so.
    """
    if production.autoplay_remaining:
        production.autoplay_remaining = 0
        production.save(update_fields=["autoplay_remaining", "updated_at"])
        events.notify_autoplay(production, failed_turn=failed_turn)


@transaction.atomic
def production_delete(*, production: Production) -> None:
    """Delete a production with its turns, cast and frames; once that commits, its open
    sockets close with 4403, and every socket on its frames, spectators' too, with 4404."""
    production_id = production.pk
    # Locked first: a frame created meanwhile (its key check waits on this lock) cannot
    # slip into the cascade without its sockets being closed.
    # Its frames' sockets close through their own delete signal (synthesis/signals.py).
    Production.objects.select_for_update().filter(pk=production_id).first()
    production.delete()
    events.revoke_production_sockets(production_id)

"""The GM's tools on an outcome (docs/synthesis.md, "The secret guard"): release a held one
to everyone, edit the text of any one (recorded with who and when), or throw a held one
away and run its pass again. A held outcome is the GM's alone: its interrupts, the AI
seats' reactions and the narratives built on it wait for its release."""

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from lmix.errors import ApplicationError

from .enqueue import medium_pass_enqueue
from .events import (
    notify_outcome_discarded,
    notify_outcome_edited,
    notify_outcome_released,
)
from .frame_events import lock_frame
from .frame_selectors import seats_for_prompts, seats_load
from .guard import public_words, seat_secrets, secret_flags
from .medium.bones import FACTS_MAX, outcome_reactions
from .medium.context import TEXT_MAX, flat
from .models import Frame, FrameStatus, Liquid, Outcome, Pass, PassStatus

NOT_HELD = "This outcome is not held: everyone has read it already."


def _locked(outcome: Outcome) -> Outcome:
    """The outcome as it stands under its frame's lock (every outcome write takes it).

    Raises:
        ApplicationError: it is gone meanwhile (404).
    """
    lock_frame(outcome.frame_id)
    fresh = Outcome.objects.filter(pk=outcome.pk).first()
    if fresh is None:
        raise ApplicationError("No such outcome.", status_code=404)
    return fresh


@transaction.atomic
def outcome_release(*, outcome: Outcome, user: AbstractBaseUser) -> Outcome:
    """The GM releases a held outcome: everyone reads it now (`outcome.released`, the
    spectators too), then what it held back follows: its interrupts wake their characters,
    the AI seats it involves act, and every pass waiting for it runs on to its narrative
    (`_resume`).

    Raises:
        ApplicationError: it is not held (409).
    """
    outcome = _locked(outcome)
    if not outcome.held:
        raise ApplicationError(NOT_HELD, status_code=409)
    outcome.held = False
    outcome.released_at = timezone.now()
    outcome.released_by = user
    outcome.save(update_fields=["held", "released_at", "released_by"])
    notify_outcome_released(outcome)
    frame = Frame.objects.get(pk=outcome.frame_id)
    if frame.status != FrameStatus.CLOSED:  # a closed scene wakes nobody
        outcome_reactions(outcome, frame=frame, seats=seats_load(frame=frame))
    _resume(outcome)
    return outcome


@transaction.atomic
def outcome_edit(
    *,
    outcome: Outcome,
    user: AbstractBaseUser,
    actions: list[str] | None = None,
    world_facts: list[str] | None = None,
    interrupts: list[str] | None = None,
) -> Outcome:
    """The GM rewrites an outcome's texts: each resolved action's `action` and each
    interrupt's `reason` (as many as it has: who acted and who was interrupted stay), and
    its world facts (fewer is fine: a fact may go). Recorded (`edited_at`, `edited_by`);
    the secret guard's flags are computed again. A held outcome's edit is the GM's alone;
    a released one's is told to everyone (`outcome.edited`). Later passes read the new
    text; narratives already written stay as they were.

    Raises:
        ApplicationError: a count differs, or a text is empty or too long (400).
    """
    outcome = _locked(outcome)
    errors: dict[str, list[str]] = {}
    resolved = list(outcome.actions_resolved)
    if actions is not None:
        texts = _texts(actions, "actions", errors, count=len(resolved))
        if texts is not None:
            resolved = [
                {**entry, "action": text} for entry, text in zip(resolved, texts, strict=True)
            ]
    reasons = list(outcome.interrupts)
    if interrupts is not None:
        texts = _texts(interrupts, "interrupts", errors, count=len(reasons))
        if texts is not None:
            reasons = [
                {**entry, "reason": text} for entry, text in zip(reasons, texts, strict=True)
            ]
    facts = list(outcome.world_facts)
    if world_facts is not None:
        texts = _texts(world_facts, "world_facts", errors, most=FACTS_MAX)
        if texts is not None:
            facts = texts
    if errors:
        raise ApplicationError("Check the outcome's texts.", details=errors)
    outcome.actions_resolved, outcome.world_facts, outcome.interrupts = resolved, facts, reasons
    # The GM's own narration is never flagged (synthesis/gm_voice.py): the GM wrote it.
    outcome.flags = _flags(outcome) if outcome.seat_id else []
    outcome.edited_at = timezone.now()
    outcome.edited_by = user
    outcome.save(
        update_fields=[
            "actions_resolved",
            "world_facts",
            "interrupts",
            "flags",
            "edited_at",
            "edited_by",
        ]
    )
    notify_outcome_edited(outcome)
    return outcome


@transaction.atomic
def outcome_regenerate(*, outcome: Outcome) -> list[Pass]:
    """The GM throws a held outcome away: it is deleted (`outcome.discarded`: players drop
    its placeholder) and every pass that waited for it runs its bones again (the model is
    asked anew; the actions it resolved are resolved again).

    Returns:
        The passes that run again.
    Raises:
        ApplicationError: it is not held, its pass is still settling, or the scene is
            closed (409).
    """
    outcome = _locked(outcome)
    if not outcome.held:
        raise ApplicationError(
            "Only a held outcome can be regenerated: this one has been read already.",
            status_code=409,
        )
    frame = Frame.objects.get(pk=outcome.frame_id)
    if frame.status == FrameStatus.CLOSED:
        raise ApplicationError(
            "The scene is closed: release or edit this outcome instead.", status_code=409
        )
    running = Pass.objects.filter(outcome=outcome, status=PassStatus.RUNNING).exists()
    if running:  # it stored the outcome and is about to wait: a moment more
        raise ApplicationError(
            "Its pass is still finishing: try again in a moment.", status_code=409
        )
    waiting = list(Pass.objects.filter(waiting_on=outcome, status=PassStatus.HELD))
    outcome_id = outcome.pk
    outcome.delete()  # the waiting passes' `waiting_on` goes with it
    notify_outcome_discarded(frame_id=frame.pk, outcome_id=outcome_id)
    return _rerun([p.pk for p in waiting])


def _resume(outcome: Outcome) -> list[Pass]:
    """Every pass waiting for `outcome` runs again from where it stands: pending, its task
    enqueued after commit. It keeps the outcome it stored (no model call), and goes on to
    its narrative, unless another held outcome it needs still holds it (it waits again,
    for that one: synthesis/medium/run.py `_held`). Pending rather than straight to the
    stream worker: a shared frame runs one pass at a time, and the claim keeps it so."""
    ids = list(
        Pass.objects.filter(waiting_on=outcome, status=PassStatus.HELD).values_list("pk", flat=True)
    )
    return _rerun(ids)


def _rerun(ids: list[Any]) -> list[Pass]:
    """Held passes back to pending, each enqueued after commit. No worker held them; they
    get their own restarts after a dead worker, as a retry does."""
    moved = []
    for pk in ids:
        fields: dict[str, Any] = {
            "waiting_on": None,
            "lease_owner": "",
            "heartbeat_at": None,
            "attempts": 0,
        }
        if Pass.move(pk, PassStatus.PENDING, only_from=(PassStatus.HELD,), **fields):
            moved.append(pk)
            transaction.on_commit(lambda pk=pk: medium_pass_enqueue(pk))
    return list(Pass.objects.filter(pk__in=moved))


def _texts(
    values: list[str],
    field: str,
    errors: dict[str, list[str]],
    *,
    count: int | None = None,
    most: int | None = None,
) -> list[str] | None:
    """The texts, each on one line and within the bones' bounds; None with `errors[field]`
    said when they do not fit."""
    if count is not None and len(values) != count:
        errors[field] = [f"Give exactly {count} texts, one for each, in order."]
        return None
    if most is not None and len(values) > most:
        errors[field] = [f"At most {most}."]
        return None
    texts = [flat(value, TEXT_MAX + 1) for value in values]
    if any(not text for text in texts):
        errors[field] = ["A text is empty."]
        return None
    if any(len(text) > TEXT_MAX for text in texts):
        errors[field] = [f"Keep each text under {TEXT_MAX} characters."]
        return None
    return texts


def _flags(outcome: Outcome) -> list[dict[str, str]]:
    """The secret guard's flags on the outcome as it reads now (as `bones._store` computes
    them: what its texts repeat that the actions it resolved did not reveal, a person's
    words only)."""
    frame = Frame.objects.select_related("production__world", "production__scenario").get(
        pk=outcome.frame_id
    )
    seats = seats_for_prompts(frame=frame)
    revealed = Liquid.objects.filter(pk__in=outcome.liquid_ids, author__isnull=False)
    revealed = revealed.values_list("content", flat=True)
    return secret_flags(
        said=[
            *(entry.get("action", "") for entry in outcome.actions_resolved),
            *outcome.world_facts,
            *(entry.get("reason", "") for entry in outcome.interrupts),
        ],
        revealed=[flat(text) for text in revealed],
        secrets=seat_secrets(seats),
        public=public_words(seats, frame.production),
    )

"""The state pass: after an outcome, queued (tasks.py::state_pass_task), one structured
call proposes every witness's changes (schema.py) from the public outcome (prompt.py), and
the rules apply them (services.py::state_apply). Once per outcome (its `StatePass` row is
the claim); an answer that will not validate is sent back once (llm_structured's repair),
then the pass is failed with its reason, for the GM: never a crash, never a retry loop.
Counted against the frame's model budget as background work, and recorded like every
model call (subject "outcome:<id>", synthesis/budget.py::budget_key_for)."""

import logging
from datetime import timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from lmix.errors import ApplicationError
from lmix.llm.base import LLMError
from lmix.llm.client import llm_structured

from ..budget import Work, budget_admits
from ..enqueue import significance_pass_enqueue
from ..events import notify_state_changed
from ..frame_events import lock_frame
from ..frame_selectors import seats_for_prompts
from ..medium.context import flat, seat_labels
from ..medium.run import medium_model
from ..models import Outcome
from ..state_models import StatePass, StatePassStatus, TurnStatePass
from .prompt import state_messages, state_scene
from .schema import StateProposal
from .services import state_apply

logger = logging.getLogger(__name__)
PassRow = TypeVar("PassRow", StatePass, TurnStatePass)
PURPOSE = "synthesis.state"
REPLY_TOKENS_BASE = 150
REPLY_TOKENS_PER_WITNESS = 250
UNEXPECTED = "Something went wrong while updating the characters' state."
# A state pass still running this long after its last write lost its worker: a
# redelivered task runs it again (a call takes seconds; a minute on a slow local model).
STALE_SECONDS = 600


def state_pass_run(*, outcome_id: object) -> StatePass | None:
    """Run the state pass of `outcome_id`, unless it ran (or runs) already.

    Returns:
        Its `StatePass` (done or failed), or None: the outcome is gone, state passes are
        off (LMIX_STATE_PASSES), or another run has it.
    """
    if not settings.LMIX_STATE_PASSES:
        return None
    outcome = (
        Outcome.objects.select_related(
            "frame__production__world", "frame__production__scenario", "frame__medium_model"
        )
        .filter(pk=outcome_id)
        .first()
    )
    if outcome is None:
        return None
    state_pass = _claim(outcome)
    if state_pass is None:
        return None  # a duplicate or redelivered task: another run has it, or had it
    tries: list[dict[str, Any]] = []
    try:
        _run(outcome, state_pass, tries)
    except (LLMError, ApplicationError) as error:
        pass_finish(state_pass, tries, error=flat(str(error), 2000))
    except Exception:
        logger.exception("the state pass of outcome %s failed unexpectedly", outcome.pk)
        pass_finish(state_pass, tries, error=UNEXPECTED)
    return state_pass


def _claim(outcome: Outcome) -> StatePass | None:
    return pass_claim(StatePass, outcome.pk, outcome=outcome, frame=outcome.frame)


def pass_claim(model: type[PassRow], pk: object, **fields: Any) -> PassRow | None:
    """The state pass `pk` (an outcome's `StatePass`, a turn's `TurnStatePass`), for this
    run: a new one made with `fields`, or one left running by a worker that died (a
    redelivered task, STALE_SECONDS later). Its changes and its end are stored in one
    transaction, so a pass still running has changed nothing yet."""
    try:
        with transaction.atomic():
            return model.objects.create(**fields)
    except IntegrityError:
        pass
    now = timezone.now()
    if not model.objects.filter(
        pk=pk,
        status=StatePassStatus.RUNNING,
        updated_at__lt=now - timedelta(seconds=STALE_SECONDS),
    ).update(updated_at=now, messages=[], error=""):
        return None
    logger.warning("the state pass %s lost its worker: it runs again", pk)
    return model.objects.get(pk=pk)


def _run(outcome: Outcome, state_pass: StatePass, tries: list[dict[str, Any]]) -> None:
    frame = outcome.frame
    seats = seats_for_prompts(frame=frame)
    witnessed = {str(w) for w in outcome.witnesses or []}
    witnesses = [s for s in seats if str(s.pk) in witnessed]
    if not witnesses:
        pass_finish(state_pass, tries)
        return
    if not budget_admits(frame_id=frame.pk, kind=Work.AI, what=f"state:{outcome.pk}"):
        raise ApplicationError("The frame's model budget was spent: the state was not updated.")
    labels = seat_labels(seats)
    messages = state_messages(frame=frame, outcome=outcome, witnesses=witnesses, labels=labels)
    state_pass.messages = [m.as_dict() for m in messages]
    StatePass.objects.filter(pk=state_pass.pk).update(messages=state_pass.messages)
    acting = next((s for s in seats if s.pk == outcome.seat_id), witnesses[0])
    proposal = llm_structured(
        model=medium_model(frame=frame, seat=acting),
        messages=messages,
        schema=StateProposal,
        purpose=PURPOSE,
        subject=f"outcome:{outcome.pk}",
        max_tokens=REPLY_TOKENS_BASE + REPLY_TOKENS_PER_WITNESS * len(witnesses),
        tries=tries,
        context=state_scene(outcome=outcome, witnesses=witnesses, labels=labels),
    )
    with transaction.atomic():
        # Under the frame's lock, as a rewind: an outcome rewound meanwhile changes nothing.
        lock_frame(frame.pk)
        if not Outcome.objects.filter(pk=outcome.pk).exists():
            return
        # Ending it first locks its row: a run that lost it (taken over by a redelivered
        # task meanwhile) changes nothing.
        if not pass_finish(state_pass, tries):
            return
        changed = state_apply(outcome=outcome, proposal=proposal, seats=seats, labels=labels)
        notify_state_changed(frame.pk, changed)  # the drawers re-read, after commit
        transaction.on_commit(lambda: significance_pass_enqueue(outcome.pk))
    logger.info("state pass of outcome %s changed %d characters", outcome.pk, len(changed))


def pass_finish(
    state_pass: StatePass | TurnStatePass, tries: list[dict[str, Any]], *, error: str = ""
) -> bool:
    """End the pass, done or failed with `error`, if this run still holds it (its claim's
    `updated_at`). Returns whether it did."""
    to = StatePassStatus.FAILED if error else StatePassStatus.DONE
    if not type(state_pass).move(
        state_pass.pk, to, where={"updated_at": state_pass.updated_at}, error=error, tries=tries
    ):
        return False
    state_pass.status, state_pass.error, state_pass.tries = to, error, tries
    if error:
        logger.warning("the state pass %s failed: %s", state_pass.pk, error)
    return True

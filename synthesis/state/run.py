"""The state pass: after an outcome, queued (tasks.py::state_pass_task), one structured
call proposes every witness's changes (schema.py) from the public outcome (prompt.py), and
the rules apply them (services.py::state_apply). Once per outcome (its `StatePass` row is
the claim); an answer that will not validate is sent back once (llm_structured's repair),
then the pass is failed with its reason, for the GM: never a crash, never a retry loop.
Counted against the frame's model budget as background work, and recorded like every
model call (subject "outcome:<id>", synthesis/budget.py::budget_key_for)."""

import logging
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from lmix.errors import ApplicationError
from lmix.llm.base import LLMError
from lmix.llm.client import llm_structured

from ..budget import Work, budget_admits
from ..frame_selectors import seats_for_prompts
from ..medium.context import flat, seat_labels
from ..medium.run import medium_model
from ..models import Outcome
from ..state_models import StatePass, StatePassStatus
from .prompt import state_messages, state_scene
from .schema import StateProposal
from .services import state_apply

logger = logging.getLogger(__name__)
PURPOSE = "synthesis.state"
REPLY_TOKENS_BASE = 150
REPLY_TOKENS_PER_WITNESS = 250
UNEXPECTED = "Something went wrong while updating the characters' state."


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
    try:
        with transaction.atomic():
            state_pass = StatePass.objects.create(outcome=outcome, frame=outcome.frame)
    except IntegrityError:
        return None  # a duplicate or redelivered task: the first one has it
    tries: list[dict[str, Any]] = []
    try:
        changed = _run(outcome, state_pass, tries)
    except (LLMError, ApplicationError) as error:
        return _finish(state_pass, tries, error=flat(str(error), 2000))
    except Exception:
        logger.exception("the state pass of outcome %s failed unexpectedly", outcome.pk)
        return _finish(state_pass, tries, error=UNEXPECTED)
    logger.info("state pass of outcome %s changed %d characters", outcome.pk, len(changed))
    return _finish(state_pass, tries)


def _run(outcome: Outcome, state_pass: StatePass, tries: list[dict[str, Any]]) -> list:
    frame = outcome.frame
    seats = seats_for_prompts(frame=frame)
    witnessed = {str(w) for w in outcome.witnesses or []}
    witnesses = [s for s in seats if str(s.pk) in witnessed]
    if not witnesses:
        return []
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
    return state_apply(outcome=outcome, proposal=proposal, seats=seats, labels=labels)


def _finish(state_pass: StatePass, tries: list[dict[str, Any]], *, error: str = "") -> StatePass:
    state_pass.status = StatePassStatus.FAILED if error else StatePassStatus.DONE
    state_pass.error = error
    state_pass.tries = tries
    state_pass.save(update_fields=["status", "error", "tries", "updated_at"])
    if error:
        logger.warning("the state pass of outcome %s failed: %s", state_pass.pk, error)
    return state_pass

"""The state pass: after an outcome, queued (tasks.py::state_pass_task), one structured
call proposes every witness's changes (schema.py) from the public outcome (prompt.py), and
the rules apply them (services.py::state_apply). Once per outcome: its `StatePass` row is a
job under a lease (docs/tasks.md). An answer that will not validate is sent back once
(llm_structured's repair), then the pass is failed with its reason, for the GM: never a
crash, never a retry loop. Counted against the frame's model budget as background work,
and recorded like every model call (subject "outcome:<id>", synthesis/budget.py::
budget_key_for)."""

import logging
from typing import Any

from django.conf import settings
from django.db import transaction

from lmix.errors import ApplicationError
from lmix.llm.base import LLMError
from lmix.llm.client import llm_structured
from lmix.models import JOB_TRANSITIONS, JobStatus
from lmix.realtime.leases import LeasedWork, lease_claim, lease_held, leased

from ..budget import Work, budget_admits
from ..enqueue import STATE_PASS, significance_pass_enqueue, state_key, state_pass_send
from ..events import notify_state_changed
from ..frame_events import lock_frame
from ..frame_selectors import seats_for_prompts
from ..medium.context import flat, seat_labels
from ..medium.run import medium_model
from ..models import Outcome
from ..state_models import SignificancePass, StatePass, TurnStatePass
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
    with lease_held() as owner:
        if not lease_claim(STATE, outcome_id, owner):
            return None  # a duplicate or late task: another run has it, or had it
        state_pass = StatePass.objects.get(pk=outcome_id)
        outcome = Outcome.objects.select_related(
            "frame__production__world", "frame__production__scenario", "frame__medium_model"
        ).get(pk=outcome_id)
        tries: list[dict[str, Any]] = []
        try:
            _run(outcome, state_pass, tries)
        except (LLMError, ApplicationError) as error:
            pass_finish(state_pass, tries, error=flat(str(error), 2000))
        except Exception:
            logger.exception("the state pass of outcome %s failed unexpectedly", outcome.pk)
            pass_finish(state_pass, tries, error=UNEXPECTED)
        return state_pass


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
        significance_pass_enqueue(outcome)
    logger.info("state pass of outcome %s changed %d characters", outcome.pk, len(changed))


def pass_finish(
    state_pass: StatePass | SignificancePass | TurnStatePass,
    tries: list[dict[str, Any]],
    *,
    error: str = "",
) -> bool:
    """End the pass, done or failed with `error`, if this run still holds it (its lease
    as claimed). Its changes are stored in the same transaction, so a pass still running
    has changed nothing yet. Returns whether it did."""
    to = JobStatus.FAILED if error else JobStatus.DONE
    held = {"lease_owner": state_pass.lease_owner, "attempts": state_pass.attempts}
    if not type(state_pass).move(
        state_pass.pk, to, only_from=(JobStatus.RUNNING,), where=held, error=error, tries=tries
    ):
        return False
    state_pass.status, state_pass.error, state_pass.tries = to, error, tries
    if error:
        logger.warning("the state pass %s failed: %s", state_pass.pk, error)
    return True


def state_job(name: str, model: type, task: str, key: Any, send: Any, what: str) -> LeasedWork:
    """A state pass as a job (lmix/realtime/leases.py): one whose worker died runs again
    from the start (it changed nothing: `pass_finish`), or fails once it has had its runs;
    one whose task was lost is sent again."""
    return leased(
        LeasedWork(
            name=name,
            what=what,
            model=model,
            task=task,
            transitions=JOB_TRANSITIONS,
            pending=JobStatus.PENDING,
            running=JobStatus.RUNNING,
            failed=JobStatus.FAILED,
            key=key,
            enqueue=send,
            load=lambda rows: rows.defer(*(f for f in ("messages", "tries") if hasattr(model, f))),
            rerun_reset=lambda row: {"tries": [], "error": ""},
            fail_message="The worker stopped while running this ({attempts} tries). Retry it.",
        )
    )


STATE = state_job(
    "state pass", StatePass, STATE_PASS, state_key, state_pass_send, "an outcome's witnesses' state"
)

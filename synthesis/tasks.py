"""Celery tasks of the frames engine: each takes an id, checks the database first and
calls one service, so a redelivered, duplicate or late task does nothing (docs/tasks.md).

Work is sent to them by name (enqueue.py); a task marked as queued clears its mark when it
starts (lmix/realtime/queued.py).
"""

from celery import shared_task

from lmix.realtime.queued import started

from .ai_seats import ai_act_run
from .enqueue import (
    ai_act_key,
    epilogue_key,
    face_pass_key,
    flesh_key,
    medium_key,
    scene_summary_key,
    soft_key,
)
from .epilogue import epilogue_run
from .faces.run import face_pass_run
from .medium import medium_pass_run
from .medium.run import medium_flesh_run
from .scenes.run import scene_summary_run
from .scenes.services import scene_after_outcome
from .snapshots.services import frames_snapshot
from .soft import soft_pass_run
from .state.productions import turn_state_pass_run
from .state.run import state_pass_run
from .state.significance import significance_pass_run
from .windows import window_fire, windows_sweep


@shared_task(ignore_result=True)
def soft_pass_task(pass_id: str) -> None:
    started(soft_key(pass_id))
    soft_pass_run(pass_id=pass_id)


@shared_task(ignore_result=True)
def window_fire_task(window_id: str) -> None:
    """Scheduled for the window's `expires_at`; fires it if it is still open and due, and
    runs its medium pass right here (a pass left pending by a crash is the sweep's)."""
    pass_ = window_fire(window_id=window_id, enqueue=False)
    if pass_ is not None:
        medium_pass_run(pass_id=pass_.pk)


@shared_task(ignore_result=True)
def medium_pass_task(pass_id: str) -> None:
    """A medium pass's outcome (short queue); it hands the pass on to `flesh_task`."""
    started(medium_key(pass_id))
    medium_pass_run(pass_id=pass_id)


@shared_task(ignore_result=True)
def flesh_task(pass_id: str) -> None:
    """A medium pass's narrative, streamed (streams queue)."""
    started(flesh_key(pass_id))
    medium_flesh_run(pass_id=pass_id)


@shared_task(ignore_result=True)
def frames_sweep_task() -> None:
    """Run by every worker and web process (and beat): fire overdue windows (the jobs have
    their own sweep: lmix/tasks.py)."""
    windows_sweep()


@shared_task(ignore_result=True)
def ai_act_task(act_id: str) -> None:
    """An AI seat answers an outcome (or the GM's advance) with liquid of its own."""
    started(ai_act_key(act_id))
    ai_act_run(act_id=act_id)


@shared_task(ignore_result=True)
def epilogue_task(pass_id: str) -> None:
    """A closed scene's epilogue for one seat (or everyone, in a shared frame)."""
    started(epilogue_key(pass_id))
    epilogue_run(pass_id=pass_id)


@shared_task(ignore_result=True)
def state_pass_task(outcome_id: str) -> None:
    """An outcome's state pass: its witnesses' edges, mood, facts and memories."""
    state_pass_run(outcome_id=outcome_id)


@shared_task(ignore_result=True)
def significance_pass_task(outcome_id: str) -> None:
    """After an outcome's state pass: the new memories weighed (state/significance.py)."""
    significance_pass_run(outcome_id=outcome_id)


@shared_task(ignore_result=True)
def turn_state_pass_task(turn_id: str) -> None:
    """A production turn's state pass: its cast's edges, mood, facts and memories."""
    turn_state_pass_run(turn_id=turn_id)


@shared_task(ignore_result=True)
def face_pass_task(pass_id: str) -> None:
    """An author's content entry or a designer's skill, from their committed writing."""
    started(face_pass_key(pass_id))
    face_pass_run(pass_id=pass_id)


@shared_task(ignore_result=True)
def scene_summary_task(scene_id: str) -> None:
    """A closed scene's summaries: each character's own, the public one, edge summaries."""
    started(scene_summary_key(scene_id))
    scene_summary_run(scene_id=scene_id)


@shared_task(ignore_result=True)
def scene_check_task(outcome_id: str) -> None:
    """Whether an outcome closes its scene (a new place, a long pause)."""
    scene_after_outcome(outcome_id=outcome_id)


@shared_task(ignore_result=True)
def frames_snapshot_task() -> None:
    """Beat's, every LMIX_FRAME_SNAPSHOT_EVERY minutes: snapshot each live frame that
    changed since its last snapshot, pruned to the newest LMIX_FRAME_SNAPSHOT_KEEP."""
    frames_snapshot()

"""Sending the frames engine's work to its Celery tasks (tasks.py), by name: the services
that send work do not import the tasks that run them. Work that a sweep may enqueue again is
marked as queued (lmix/realtime/queued.py); its task clears the mark when it starts."""

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction

from lmix.realtime.queued import enqueue, task_named

from .state_models import SignificancePass, StatePass, TurnStatePass

MEDIUM_PASS = "synthesis.tasks.medium_pass_task"
FLESH = "synthesis.tasks.flesh_task"
SOFT_PASS = "synthesis.tasks.soft_pass_task"
WINDOW_FIRE = "synthesis.tasks.window_fire_task"
AI_ACT = "synthesis.tasks.ai_act_task"
EPILOGUE = "synthesis.tasks.epilogue_task"
STATE_PASS = "synthesis.tasks.state_pass_task"
SIGNIFICANCE_PASS = "synthesis.tasks.significance_pass_task"


def medium_key(pass_id: object) -> str:
    return f"medium:{pass_id}"


def flesh_key(pass_id: object) -> str:
    return f"flesh:{pass_id}"


def soft_key(pass_id: object) -> str:
    return f"soft:{pass_id}"


def medium_pass_enqueue(pass_id: object) -> None:
    enqueue(MEDIUM_PASS, medium_key(pass_id), str(pass_id))


def flesh_enqueue(pass_id: object) -> None:
    enqueue(FLESH, flesh_key(pass_id), str(pass_id))


def soft_pass_enqueue(pass_id: object) -> None:
    enqueue(SOFT_PASS, soft_key(pass_id), str(pass_id))


def window_fire_at(window_id: object, eta: datetime | None) -> None:
    """Fire the window when it expires (its sweep catches one whose message is lost)."""
    task_named(WINDOW_FIRE).apply_async((str(window_id),), eta=eta)


def ai_act_key(act_id: object) -> str:
    return f"act:{act_id}"


def ai_act_enqueue(act_id: object) -> None:
    """An AI seat's act (its `SeatAct` row, pending), to a stream worker."""
    enqueue(AI_ACT, ai_act_key(act_id), str(act_id))


def epilogue_key(pass_id: object) -> str:
    return f"epilogue:{pass_id}"


def epilogue_enqueue(pass_id: object) -> None:
    enqueue(EPILOGUE, epilogue_key(pass_id), str(pass_id))


def state_key(outcome_id: object) -> str:
    return f"state:{outcome_id}"


def significance_key(outcome_id: object) -> str:
    return f"significance:{outcome_id}"


def turn_state_key(turn_id: object) -> str:
    return f"turn-state:{turn_id}"


def state_pass_send(outcome_id: object) -> None:
    enqueue(STATE_PASS, state_key(outcome_id), str(outcome_id))


def significance_pass_send(outcome_id: object) -> None:
    enqueue(SIGNIFICANCE_PASS, significance_key(outcome_id), str(outcome_id))


def turn_state_pass_send(turn_id: object) -> None:
    enqueue(TURN_STATE_PASS, turn_state_key(turn_id), str(turn_id))


# A state pass is a job (docs/tasks.md): its row is made pending in the transaction that
# stores what it follows, and its task sent once that commits, so a lost task is swept.


def state_pass_enqueue(outcome: Any) -> None:
    """The outcome's state pass (synthesis/state/run.py), if state passes are on: after the
    outcome is out, never on its way."""
    if settings.LMIX_STATE_PASSES:
        StatePass.objects.create(outcome_id=outcome.pk, frame_id=outcome.frame_id)
        transaction.on_commit(lambda: state_pass_send(outcome.pk))


def significance_pass_enqueue(outcome: Any) -> None:
    """The significance pass after the outcome's state pass (synthesis/state/
    significance.py): later, never in anything's way."""
    if settings.LMIX_STATE_PASSES:
        SignificancePass.objects.create(outcome_id=outcome.pk, frame_id=outcome.frame_id)
        transaction.on_commit(lambda: significance_pass_send(outcome.pk))


TURN_STATE_PASS = "synthesis.tasks.turn_state_pass_task"


def turn_state_pass_enqueue(turn: Any) -> None:
    """A production turn's state pass (synthesis/state/productions.py), as an outcome's."""
    if settings.LMIX_STATE_PASSES:
        TurnStatePass.objects.get_or_create(turn_id=turn.pk)  # a turn may be done again
        transaction.on_commit(lambda: turn_state_pass_send(turn.pk))


FACE_PASS = "synthesis.tasks.face_pass_task"


def face_pass_key(pass_id: object) -> str:
    return f"face:{pass_id}"


def face_pass_enqueue(pass_id: object) -> None:
    enqueue(FACE_PASS, face_pass_key(pass_id), str(pass_id))


SCENE_SUMMARY = "synthesis.tasks.scene_summary_task"
SCENE_CHECK = "synthesis.tasks.scene_check_task"


def scene_summary_key(scene_id: object) -> str:
    return f"scene:{scene_id}"


def scene_summary_enqueue(scene_id: object) -> None:
    """A closed scene's summaries (synthesis/scenes/run.py), on the streams queue."""
    enqueue(SCENE_SUMMARY, scene_summary_key(scene_id), str(scene_id))


def scene_check_enqueue(outcome_id: object) -> None:
    """Whether the outcome ends its scene (a new place, a long pause): after it is out."""
    task_named(SCENE_CHECK).delay(str(outcome_id))

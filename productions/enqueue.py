"""Sending productions' work to their Celery tasks (tasks.py), by name: the services that
send work do not import the tasks that run them."""

from lmix.realtime.queued import enqueue, task_named

TURN_GENERATE = "productions.tasks.turn_generate_task"
DRAFT_GENERATE = "productions.tasks.draft_generate_task"


def turn_key(turn_id: object) -> str:
    return f"turn:{turn_id}"


def turn_generate_enqueue(turn_id: object) -> None:
    """Enqueue a turn's generation, marked as queued so the sweep leaves it be."""
    enqueue(TURN_GENERATE, turn_key(turn_id), str(turn_id))


def draft_generate_enqueue(
    draft_id: str, production_id: str, assistant_id: str, parent_id: str | None
) -> None:
    """Not marked: a draft is not swept (its user sees it fail and asks again)."""
    task_named(DRAFT_GENERATE).delay(draft_id, production_id, assistant_id, parent_id)

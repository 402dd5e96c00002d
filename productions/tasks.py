"""Celery tasks of productions: short, id-only, idempotent."""

from celery import shared_task

from . import services


@shared_task(acks_late=True, ignore_result=True)
def turn_generate_task(turn_id: str) -> None:
    """Generate one turn; a redelivered task finds it no longer pending and does nothing."""
    services.turn_generate(turn_id=turn_id)


@shared_task(ignore_result=True)
def turns_sweep_task() -> None:
    """Scheduled by beat: re-enqueue lost turns, fail turns whose worker died."""
    services.turns_sweep()

"""Celery tasks of productions: short, id-only, idempotent."""

import logging

from celery import shared_task
from django.core.exceptions import ObjectDoesNotExist

from . import generation

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, ignore_result=True)
def turn_generate_task(turn_id: str) -> None:
    """Generate one turn; a redelivered task finds it no longer pending and does nothing."""
    try:
        generation.turn_generate(turn_id=turn_id)
    except ObjectDoesNotExist:  # the production was deleted meanwhile: nothing to do
        logger.info("turn %s is gone; nothing to generate", turn_id)


@shared_task(ignore_result=True)
def turns_sweep_task() -> None:
    """Run by every worker and web process (and beat): re-enqueue lost turns, restart turns
    whose worker died."""
    generation.turns_sweep()

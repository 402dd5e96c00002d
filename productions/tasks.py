"""Celery tasks of productions: short, id-only, idempotent."""

import logging

from celery import shared_task
from django.core.exceptions import ObjectDoesNotExist

from . import services

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, ignore_result=True)
def turn_generate_task(turn_id: str) -> None:
    """Generate one turn; a redelivered task finds it no longer pending and does nothing."""
    try:
        services.turn_generate(turn_id=turn_id)
    except ObjectDoesNotExist:  # the production was deleted meanwhile: nothing to do
        logger.info("turn %s is gone; nothing to generate", turn_id)


@shared_task(ignore_result=True)
def turns_sweep_task() -> None:
    """Scheduled by beat: re-enqueue lost turns, fail turns whose worker died."""
    services.turns_sweep()

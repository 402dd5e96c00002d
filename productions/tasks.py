"""Celery tasks of productions: short, id-only, idempotent."""

import logging

from celery import shared_task
from django.core.exceptions import ObjectDoesNotExist

from lmix.realtime.queued import started

from . import drafts, generation
from .enqueue import turn_key

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, ignore_result=True)
def turn_generate_task(turn_id: str) -> None:
    """Generate one turn; a redelivered task finds it no longer pending and does nothing."""
    started(turn_key(turn_id))
    try:
        generation.turn_generate(turn_id=turn_id)
    except ObjectDoesNotExist:  # the production was deleted meanwhile: nothing to do
        logger.info("turn %s is gone; nothing to generate", turn_id)


@shared_task(ignore_result=True)
def draft_generate_task(
    draft_id: str, production_id: str, assistant_id: str, parent_id: str | None
) -> None:
    """Write an impersonation draft (not retried: its user sees it fail and asks again)."""
    try:
        drafts.draft_generate(
            draft_id=draft_id,
            production_id=production_id,
            assistant_id=assistant_id,
            parent_id=parent_id,
        )
    except ObjectDoesNotExist:
        logger.info("production %s is gone; no draft", production_id)

"""Which work is waiting in the broker: a marker per enqueued task, so the sweeps enqueue
again only work whose task is really lost, never work that is merely queued.

A queue can hold minutes of work under load. A sweep that re-enqueued everything pending
for 30 s multiplied the backlog it was waiting behind (issue 24). So enqueueing a piece of
work (`enqueue`) sets a marker in the cache under the work's key — Redis in services mode,
the same server as the broker, so losing one loses the other — and the task deletes it when
it starts (`started`). A sweep skips work whose marker is still there (`is_queued`).

A marker lasts LMIX_QUEUED_TRUST_SECONDS: a message a dead worker had reserved but not
started comes back only after the broker's visibility timeout, and by then the sweep has
enqueued it again. A duplicate costs nothing: every task claims its row first.
"""

import logging
from collections.abc import Callable
from typing import Any

from celery import Task, current_app
from django.conf import settings
from django.core.cache import cache
from django.db.models import QuerySet

logger = logging.getLogger(__name__)

PREFIX = "lmix:queued:"


def task_named(name: str) -> Task:
    """A registered task by its name: the services that send work need not import the tasks
    module that runs it (which imports them)."""
    return current_app.tasks[name]


def enqueue(task: str, key: str, *args: Any) -> None:
    """Send the task named `task` with `args`, marking `key` as queued first."""
    cache.set(PREFIX + key, 1, timeout=settings.LMIX_QUEUED_TRUST_SECONDS)
    task_named(task).delay(*args)


def started(key: str) -> None:
    """The task for `key` has started: from now on its row says where the work stands."""
    cache.delete(PREFIX + key)


def is_queued(key: str) -> bool:
    """Whether a task for `key` was enqueued and has not started (within the trust time)."""
    return cache.get(PREFIX + key) is not None


def enqueue_lost(
    key: str, row: QuerySet, touch: dict[str, Any], send: Callable[[], None], what: str
) -> bool:
    """A sweep's re-enqueue of work that looked lost: nothing while its marker says it is
    queued; otherwise `row` (the work as the sweep read it) is touched with `touch`, so one
    sweep enqueues it once per interval whoever else sweeps, and `send` enqueues it again.

    Returns:
        Whether it was enqueued again.
    """
    if is_queued(key) or not row.update(**touch):
        return False
    logger.warning("%s: its task was lost; enqueued again", what)
    send()
    return True

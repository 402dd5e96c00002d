"""The Celery application; configuration comes from Django settings (CELERY_*)."""

import os

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("lmix")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

from lmix import task_log  # noqa: E402, F401  (its signal handlers: the worker's log lines)


@worker_ready.connect
def _sweep_from_this_worker(**_kwargs) -> None:
    """A worker sweeps when it starts and then on the schedule, whether or not beat runs;
    then it freezes what it started with (lmix/heap.py)."""
    from lmix.heap import freeze_startup_objects
    from lmix.realtime.sweeper import start_sweeper

    start_sweeper()
    freeze_startup_objects()

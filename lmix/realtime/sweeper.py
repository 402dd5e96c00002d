"""The sweeps, run inside every worker and web process so that lost work is found even
when beat is not running.

Each entry of `CELERY_BEAT_SCHEDULE` runs here on its own interval, first at once when the
process starts. Sweeps are idempotent (every fix is a conditional update), so several
processes sweeping at the same moment do no harm.
"""

import logging
import threading
import time

from celery import current_app as app
from django.conf import settings
from django.db import close_old_connections

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_thread: threading.Thread | None = None
_stop = threading.Event()


def sweep_once(names: list[str] | None = None) -> None:
    """Run the scheduled sweeps (or the named ones) in this thread, now."""
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        if names is not None and name not in names:
            continue
        try:
            app.tasks[entry["task"]]()
        except Exception:
            logger.warning("sweep %s failed", name, exc_info=True)
        finally:
            close_old_connections()


def _loop() -> None:
    # A web process never started a worker, so the apps' tasks are not imported yet.
    app.loader.import_default_modules()
    due = dict.fromkeys(settings.CELERY_BEAT_SCHEDULE, 0.0)
    while not _stop.is_set():
        now = time.monotonic()
        ready = [name for name, at in due.items() if at <= now]
        if ready:
            sweep_once(ready)
            for name in ready:
                due[name] = time.monotonic() + float(
                    settings.CELERY_BEAT_SCHEDULE[name]["schedule"]
                )
        _stop.wait(max(0.05, min(due.values()) - time.monotonic()))


def start_sweeper() -> threading.Thread | None:
    """Start this process's sweeper thread once (a no-op when LMIX_SWEEPER is off)."""
    global _thread
    if not settings.LMIX_SWEEPER:
        return None
    with _lock:
        if _thread is None or not _thread.is_alive():
            _stop.clear()
            _thread = threading.Thread(target=_loop, name="lmix-sweeper", daemon=True)
            _thread.start()
        return _thread


def stop_sweeper() -> None:
    _stop.set()

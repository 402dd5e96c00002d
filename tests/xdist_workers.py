"""Each pytest-xdist worker (gw0, gw1, …) on state of its own, so workers can run side by
side: pytest-django already suffixes the test database's name per worker (test_lmix_gw1,
test.sqlite3_gw1); this gives each worker its own Redis database (cache, Celery broker)
and its own channel prefix (Redis pub/sub channels are server-wide, whatever the database:
two workers' frames with the same id would hear each other's events). Ports are free ports
already (tests/live_processes.py::free_port), so they need nothing here."""

import os
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings

# Redis databases per worker: its own, and the next one for its child processes' brokers
# (tests/live_processes.py::child_env). Worker N uses the configured database + 4N (mod 16),
# so four workers fit in Redis's sixteen databases.
REDIS_DBS_PER_WORKER = 4


def worker_number() -> int | None:
    """0 for gw0, 1 for gw1, …; None outside xdist (or in its controller)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker[2:]) if worker.startswith("gw") else None


def redis_url_for(url: str, number: int) -> str:
    parts = urlsplit(url)
    database = (int(parts.path.strip("/") or 0) + REDIS_DBS_PER_WORKER * number) % 16
    return urlunsplit(parts._replace(path=f"/{database}"))


def isolate_this_worker() -> None:
    """Point this worker's settings, and the environment its child processes inherit, at its
    own Redis database and channel prefix. Runs before any test touches Redis or Celery."""
    number = worker_number()
    if number is None or not settings.REDIS_URL:
        return  # one process, or SQLite with in-process layers: nothing is shared
    broker_on_redis = settings.CELERY_BROKER_URL == settings.REDIS_URL
    url = redis_url_for(settings.REDIS_URL, number)
    layer = settings.CHANNEL_LAYERS["default"]["CONFIG"]
    prefix = f"{layer.get('prefix', 'lmix')}-gw{number}"
    layer["hosts"] = [{**h, "address": url} if isinstance(h, dict) else url for h in layer["hosts"]]
    layer["prefix"] = prefix
    settings.CACHES["default"]["LOCATION"] = url
    settings.REDIS_URL = url
    os.environ["REDIS_URL"] = url
    os.environ["LMIX_CHANNEL_PREFIX"] = prefix
    if broker_on_redis:
        from config.celery import app

        settings.CELERY_BROKER_URL = url
        app.conf.broker_url = url

"""Shared fixtures: users, API clients that speak session auth with CSRF, a live worker."""

import time
import uuid

import pytest
from channels.layers import channel_layers
from django.db import connection
from rest_framework.test import APIClient

from tests.factories import UserFactory
from tests.xdist_workers import isolate_this_worker


def pytest_configure(config: pytest.Config) -> None:
    isolate_this_worker()


class CsrfApiClient(APIClient):
    """An API client that behaves like the SPA: CSRF cookie first, then the header."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, enforce_csrf_checks=True, **kwargs)

    def csrf(self) -> str:
        self.get("/api/auth/csrf")
        return self.cookies["csrftoken"].value

    def generic(self, method, path, data="", content_type="application/json", **extra):
        if (
            method.upper() not in {"GET", "HEAD", "OPTIONS", "TRACE"}
            and "csrftoken" in self.cookies
        ):
            extra.setdefault("HTTP_X_CSRFTOKEN", self.cookies["csrftoken"].value)
        return super().generic(method, path, data, content_type, **extra)


@pytest.fixture
def user(db):
    return UserFactory()


@pytest.fixture
def other_user(db):
    return UserFactory()


@pytest.fixture
def anon_client() -> CsrfApiClient:
    client = CsrfApiClient()
    client.csrf()
    return client


def logged_in_client(user) -> CsrfApiClient:
    client = CsrfApiClient()
    client.force_login(user)
    client.csrf()
    return client


@pytest.fixture
def client_for():
    return logged_in_client


@pytest.fixture
def api(user) -> CsrfApiClient:
    return logged_in_client(user)


@pytest.fixture
def other_api(other_user) -> CsrfApiClient:
    return logged_in_client(other_user)


@pytest.fixture(autouse=True)
def fast_settings(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.LMIX_OFFLINE_STREAM_DELAY = 0
    # The fake LLM server listens on 127.0.0.1, whichever mode (embedded or services) the
    # run is in; tests/llm/test_network_policy.py sets the services default itself.
    settings.LMIX_LLM_ALLOWED_NETWORKS = ["public", "loopback"]
    # A state pass per outcome would add a model call to every test that plays: the
    # tests of character state (tests/synthesis/test_state*.py) turn them on.
    settings.LMIX_STATE_PASSES = False
    # The fakes serve every request at once (and are not asked for their slots): the tests
    # of model slots (tests/llm/test_slots.py) and the real llama.cpp suite set them.
    settings.LMIX_LOCAL_MODEL_SLOTS = 0


@pytest.fixture(autouse=True)
def fresh_cache(settings):
    """Each test starts with an empty cache (the login throttles' counts above all): a key
    prefix of its own. Not cache.clear(): on Redis that is FLUSHDB, which would also drop
    the broker's queues and the keys of any other run sharing the server."""
    default = settings.CACHES["default"]
    prefix = f"{default.get('KEY_PREFIX', '')}:test-{uuid.uuid4().hex}"
    settings.CACHES = {**settings.CACHES, "default": {**default, "KEY_PREFIX": prefix}}


@pytest.fixture(autouse=True)
def fresh_channel_layer():
    """Each test gets its own channel layer (the in-memory one is bound to an event loop)."""
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest.fixture(scope="session", autouse=True)
def no_session_left_on_the_test_database(django_db_setup, django_db_blocker):
    """The test database cannot be dropped while a session uses it, and a thread of the
    suite can still hold a pooled PostgreSQL connection when the run ends (asgiref's sync
    thread after a test's `sync_to_async`, a server's or a worker's thread): the drop then
    failed with "being accessed by other users" and left the database behind. Such sessions
    are ended first (this tears down after the worker, before the drop)."""
    yield
    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


_worker_running = False


@pytest.fixture(autouse=True)
def settle_the_worker(request):
    """Once the suite's worker runs, every test's background work ends with the test: tasks
    it scheduled for later (timer windows) are revoked, a test that used the worker stops
    its turns, and running tasks finish — so no task touches the database while the next
    test starts or this one's data is flushed."""
    yield
    if not _worker_running:
        return
    from celery.worker import state

    for scheduled in list(state.reserved_requests):
        state.revoked.add(scheduled.id)
    if "celery_worker" in request.fixturenames:
        from productions.models import ACTIVE_STATUSES, Turn

        Turn.objects.filter(status__in=ACTIVE_STATUSES).update(status="stopped")
    deadline = time.monotonic() + 20
    while state.active_requests and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, django_db_blocker):
    """A real Celery worker (threads pool) on the configured broker: memory:// or Redis."""
    from config.embedded_worker import embedded_worker

    global _worker_running
    with django_db_blocker.unblock(), embedded_worker(concurrency=2) as worker:
        _worker_running = True
        yield worker
        _worker_running = False

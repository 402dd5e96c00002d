"""schemathesis against /api/schema: whatever it sends, the API never answers 5xx."""

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.test import Client
from hypothesis import HealthCheck, settings

from tests.factories import UserFactory

schema = schemathesis.openapi.from_wsgi("/api/schema?format=json", get_wsgi_application())
# Excluded: calls that change the fuzzing session itself, and the connection test, which
# would send requests to whatever hosts the fuzzer invents.
schema = schema.exclude(path_regex=r"^/api/(auth/(login|logout|signup)|models/test)")


@pytest.fixture
def auth_headers(db) -> dict[str, str]:
    """A logged-in session's cookies and CSRF header. While the test runs, requests must not
    close the test's transaction (Django's test client arranges the same for itself)."""
    client = Client()
    client.force_login(UserFactory())
    client.get("/api/auth/csrf")
    session, csrf = client.cookies["sessionid"].value, client.cookies["csrftoken"].value
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield {"Cookie": f"sessionid={session}; csrftoken={csrf}", "X-CSRFToken": csrf}
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.mark.django_db
@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
def test_no_request_gets_a_server_error(case, auth_headers):
    response = case.call(headers=auth_headers)
    case.validate_response(response, checks=[schemathesis.checks.not_a_server_error])

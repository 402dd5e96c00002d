import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lmix.models import Assistant
from lmix.queries import rows_found
from tests.factories import AssistantFactory

pytestmark = pytest.mark.django_db


def test_rows_found_reads_ids_then_the_rows_it_found():
    wanted, _other = AssistantFactory(name="wanted"), AssistantFactory(name="other")
    with CaptureQueriesContext(connection) as queries:
        found = rows_found(Assistant.objects.filter(name="wanted").select_related("persona"))
    assert found == [wanted]
    assert found[0].persona == wanted.persona  # loaded with the row, no query of its own
    assert len(queries) == 2


def test_rows_found_stops_at_the_ids_when_there_are_none():
    AssistantFactory(name="other")
    with CaptureQueriesContext(connection) as queries:
        assert rows_found(Assistant.objects.filter(name="wanted").select_related("persona")) == []
    assert len(queries) == 1
    assert "persona" not in queries[0]["sql"]

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lmix.models import Assistant
from lmix.queries import one_or_none
from tests.factories import AssistantFactory

pytestmark = pytest.mark.django_db


def test_one_or_none_reads_the_row_without_ordering_it():
    assistant = AssistantFactory()  # ordered by default, which `first()` would add
    with CaptureQueriesContext(connection) as queries:
        found = one_or_none(Assistant.objects.filter(pk=assistant.pk).select_related("persona"))
    assert found == assistant
    assert found.persona == assistant.persona
    assert len(queries) == 1
    assert "ORDER BY" not in queries[0]["sql"]


def test_one_or_none_is_none_when_nothing_matches():
    assistant = AssistantFactory()
    assert one_or_none(Assistant.objects.filter(pk=assistant.pk, name="someone else")) is None

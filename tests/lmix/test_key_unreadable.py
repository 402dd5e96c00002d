"""Stored API keys that no longer decrypt (the server's encryption key changed): shown as
unreadable, never as keyless; counted by the startup check; calls ask for the key again
without reaching the provider; and the key itself appears nowhere."""

import io
import logging

import pytest
from django.core.management import call_command
from django.db import ProgrammingError

from lmix import checks, crypto
from lmix.llm.base import LLMAuthError, Message
from lmix.llm.client import llm_complete
from lmix.models import LLMCall, LLMModel
from tests.factories import LLMModelFactory
from tests.fakes.llm_server import FakeLLMServer

pytestmark = pytest.mark.django_db

KEY = "sk-MARKER-unreadable-5521"


def keyed_model(owner, endpoint: str = "https://api.openai.com/v1", **fields) -> LLMModel:
    model = LLMModelFactory(owner=owner, api_endpoint=endpoint, **fields)
    model.api_key = KEY
    model.save()
    return model


@pytest.fixture
def rotate(settings):
    """Change the encryption key material, as a changed SECRET_KEY would."""

    def change() -> None:
        settings.LMIX_ENCRYPTION_KEY = "a-different-key-than-the-one-keys-were-saved-under"

    return change


def test_decrypting_tells_unreadable_from_nothing_stored(rotate):
    stored = crypto.encrypt(KEY)
    assert crypto.decrypt(stored) == KEY and crypto.decrypt("") == ""
    rotate()
    assert crypto.decrypt("") == "" and crypto.is_readable("")
    assert not crypto.is_readable(stored)
    with pytest.raises(crypto.UnreadableSecret) as raised:
        crypto.decrypt(stored)
    assert KEY not in str(raised.value) and "Enter the key again" in str(raised.value)


def test_the_api_shows_an_unreadable_key_as_stored_and_unreadable(api, user, rotate):
    model = keyed_model(user)
    keyless = LLMModelFactory(owner=user, model_id="keyless")
    before = api.get(f"/api/models/{model.id}").json()
    assert before["has_api_key"] is True and before["key_unreadable"] is False

    rotate()
    detail = api.get(f"/api/models/{model.id}")
    assert detail.json()["has_api_key"] is True and detail.json()["key_unreadable"] is True
    listed = {item["id"]: item for item in api.get("/api/models").json()}
    assert listed[str(model.id)]["key_unreadable"] is True
    assert listed[str(keyless.id)]["has_api_key"] is False
    assert listed[str(keyless.id)]["key_unreadable"] is False
    for response in (detail, api.get("/api/models")):
        assert KEY not in response.content.decode()


def test_only_a_new_key_makes_it_readable_again(api, user, rotate):
    model = keyed_model(user)
    rotate()
    # Editing other fields keeps the stored (unreadable) key: nothing is silently dropped.
    kept = api.patch(f"/api/models/{model.id}", {"name": "Renamed", "api_key": ""}, format="json")
    assert kept.status_code == 200
    assert kept.json()["has_api_key"] is True and kept.json()["key_unreadable"] is True
    fixed = api.patch(f"/api/models/{model.id}", {"api_key": "sk-new"}, format="json")
    assert fixed.json()["has_api_key"] is True and fixed.json()["key_unreadable"] is False
    model.refresh_from_db()
    assert model.api_key == "sk-new"


def test_the_schema_declares_key_unreadable(api):
    schema = api.get("/api/schema?format=json").json()
    field = schema["components"]["schemas"]["LLMModel"]["properties"]["key_unreadable"]
    assert field["type"] == "boolean" and field["readOnly"] is True


def test_the_check_counts_unreadable_keys_and_says_what_to_do(user, other_user, rotate):
    keyed_model(user)
    keyed_model(other_user)
    LLMModelFactory(owner=user, model_id="keyless")
    assert checks.check_unreadable_keys() == []

    rotate()
    keyed_model(user, model_id="saved-after-the-change")  # readable: not counted
    (warning,) = checks.check_unreadable_keys()
    assert warning.id == "lmix.W001" and "2 models" in warning.msg
    assert "SECRET_KEY" in warning.hint and "LMIX_ENCRYPTION_KEY" in warning.hint
    assert KEY not in warning.msg + warning.hint

    out, err = io.StringIO(), io.StringIO()
    call_command("check", stdout=out, stderr=err)
    assert "lmix.W001" in out.getvalue() + err.getvalue()
    assert KEY not in out.getvalue() + err.getvalue()


def test_the_check_is_quiet_without_a_database(monkeypatch):
    def no_table() -> int:
        raise ProgrammingError('relation "lmix_llmmodel" does not exist')

    monkeypatch.setattr(checks, "unreadable_key_count", no_table)
    assert checks.check_unreadable_keys() == []


def test_calling_the_model_asks_for_the_key_again_without_reaching_the_provider(
    api, user, rotate, caplog
):
    caplog.set_level(logging.DEBUG)
    with FakeLLMServer() as server:
        model = keyed_model(user, endpoint=server.base_url, provider="openai_compatible")
        rotate()
        with pytest.raises(LLMAuthError) as raised:
            llm_complete(model=model, messages=[Message("user", "Hi")], purpose="test")
        assert "Enter the key again" in str(raised.value)
        assert "401" not in str(raised.value)

        tested = api.post("/api/models/test", {"id": str(model.id)}, format="json")
        assert tested.status_code == 400
        assert "Enter the key again" in tested.json()["detail"]
        assert server.requests == []  # no provider was called with a wrong or empty key

    (call,) = LLMCall.objects.filter(llm_model=model)
    assert "Enter the key again" in call.error
    assert KEY not in str(raised.value) + tested.content.decode() + call.error
    assert KEY not in caplog.text


def test_the_check_never_stops_a_process_where_the_database_is_off_limits(monkeypatch):
    # Celery's Django fixup runs every check when it imports task modules (a worker's start,
    # the sweeper thread), where pytest-django, for one, refuses database access.
    def blocked() -> int:
        raise RuntimeError("Database access not allowed")

    monkeypatch.setattr(checks, "unreadable_key_count", blocked)
    assert checks.check_unreadable_keys() == []

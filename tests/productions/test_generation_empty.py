"""A model that answers with no text fails the turn, saying why; auto-play stops there."""

import pytest

from lmix.llm.base import LLMEmptyAnswer
from lmix.models import LLMCall, LLMModel
from productions.models import Turn
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]


@pytest.fixture
def server():
    with FakeLLMServer() as fake:
        # llama.cpp's answer to a prompt over its context: a 200 and an empty stream.
        fake.responder = lambda request: Reply(text="", usage=False)
        yield fake


@pytest.fixture
def remote_model(user, server):
    return LLMModel.objects.create(
        owner=user,
        name="Fake",
        provider="openai_compatible",
        api_endpoint=server.base_url,
        model_id="fake-llama",
    )


def test_an_empty_stream_fails_the_turn_with_the_reason_and_ends_autoplay(
    api, user, server, remote_model, production_factory
):
    production = production_factory(user, model=remote_model)
    url = f"/api/productions/{production.id}"
    assert api.post(f"{url}/autoplay", {"count": 3}, format="json").status_code == 202

    turn = wait_for(
        lambda: Turn.objects.filter(production=production, status__in=["failed", "done"]).first()
    )
    assert turn.status == "failed" and turn.content == ""
    assert turn.error == LLMEmptyAnswer.user_message
    assert len(server.requests_to("/chat/completions")) == 2  # tried once more, then failed
    assert LLMCall.objects.get(purpose="production.turn").error == turn.error
    production.refresh_from_db()
    assert production.autoplay_remaining == 0
    assert Turn.objects.filter(production=production).count() == 1  # no further turn

"""A production on the real llama.cpp server, through REST and a real worker: turns stream
and are stored with their text and usage; regenerate, continue, stop, speaking as a cast
member with auto-reply. Assertions are about the product, never the 135M model's prose."""

import pytest

from lmix.models import LLMCall
from productions.models import Turn
from tests.productions.conftest import make_production
from tests.real_models.conftest import llama_model
from tests.waiting import wait_for

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("celery_worker"),
]
ENDED = {"done", "failed", "stopped"}


@pytest.fixture
def smol(user, llama, llama_model_id):
    return llama_model(user, llama, llama_model_id, max_tokens=40, temperature=0.7)


def ended(turn_id: str, timeout: float = 90) -> Turn:
    return wait_for(
        lambda: (t := Turn.objects.get(pk=turn_id)).status in ENDED and t, timeout, interval=0.2
    )


def ask(api, production, **body) -> dict:
    answer = api.post(f"/api/productions/{production.id}/turns", body, format="json")
    assert answer.status_code in (201, 202), answer.content
    return answer.json()


def test_a_turn_streams_from_the_real_server_and_is_stored_with_its_usage(api, user, smol):
    production = make_production(user, model=smol)
    turn = ended(ask(api, production)["id"])
    assert turn.status == "done", turn.error
    assert turn.content.strip()
    assert turn.model_id == smol.model_id
    call = LLMCall.objects.get(llm_model=smol, kind="stream")
    assert call.error == "" and call.completion_tokens > 0 and call.prompt_tokens > 0


def test_regenerate_makes_a_sibling_and_continue_extends_the_text(api, user, smol):
    production = make_production(user, model=smol)
    first = ended(ask(api, production)["id"])
    second = ended(ask(api, production)["id"])
    assert first.status == second.status == "done"
    sibling = ended(ask(api, production, parent=str(first.pk))["id"])
    assert sibling.status == "done" and sibling.content.strip()
    assert sibling.parent_id == first.pk == second.parent_id
    answer = api.post(f"/api/productions/{production.id}/turns/{sibling.pk}/continue")
    assert answer.status_code == 202, answer.content
    continued = ended(str(sibling.pk))
    assert continued.status == "done"
    assert continued.content.startswith(sibling.content) and len(continued.content) > len(
        sibling.content
    )


def test_stopping_a_streaming_turn_keeps_what_came(api, user, llama, llama_model_id):
    long_winded = llama_model(user, llama, llama_model_id, max_tokens=1500)
    production = make_production(user, model=long_winded)
    turn_id = ask(api, production)["id"]
    wait_for(lambda: Turn.objects.get(pk=turn_id).token_count > 0, 60, interval=0.02)
    answer = api.post(f"/api/productions/{production.id}/turns/{turn_id}/stop")
    assert answer.status_code == 200, answer.content
    turn = ended(turn_id)
    assert turn.status == "stopped" and turn.content.strip()


def test_speaking_as_a_cast_member_gets_an_auto_reply(api, user, smol):
    production = make_production(user, model=smol)
    assert (
        api.patch(
            f"/api/productions/{production.id}", {"auto_reply": True}, format="json"
        ).status_code
        == 200
    )
    alice = production.cast.order_by("position").first().assistant.persona
    written = ask(api, production, persona=str(alice.pk), content="Bob, where were you?")
    reply = wait_for(lambda: Turn.objects.filter(parent_id=written["id"]).first(), 30)
    reply = ended(str(reply.pk))
    assert reply.status == "done", reply.error
    assert reply.content.strip() and reply.speaker_name != alice.name

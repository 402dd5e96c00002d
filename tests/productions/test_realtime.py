"""Production sockets with a real worker and channel layer: streams, numbering, refusals."""

import pytest
from channels.db import database_sync_to_async

from lmix.models import LLMModel
from productions.events import production_group
from productions.models import Turn
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.fakes.llm_server import FakeLLMServer
from tests.productions.conftest import make_production, session_cookie, socket
from tests.waiting import receive_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]


@database_sync_to_async
def owner_and_production(model_factory=None):
    owner = UserFactory()
    model = model_factory(owner) if model_factory else None
    return owner, make_production(owner, model=model), logged_in_client(owner)


async def test_owner_receives_the_stream_and_done(settings):
    owner, production, client = await owner_and_production()
    communicator = socket(production.id, session_cookie(client))
    connected, _ = await communicator.connect()
    assert connected
    assert (await communicator.receive_json_from(timeout=5))["type"] == "ready"

    response = await database_sync_to_async(client.post)(
        f"/api/productions/{production.id}/turns", {}, format="json"
    )
    assert response.status_code == 202
    messages = await receive_until(communicator, "turn.done")

    kinds = [m["type"] for m in messages]
    # The first delta at once, the rest batched (lmix/realtime/stream.py).
    assert kinds[0] == "turn.created" and kinds.count("turn.token") >= 2
    # State changes are numbered without gaps; deltas carry only their stream index.
    states = [m for m in messages if m["type"] != "turn.token"]
    seqs = [m["seq"] for m in states]
    assert [m["type"] for m in states] == ["turn.created", "turn.done"]
    assert seqs == [seqs[0], seqs[0] + 1]
    tokens = [m for m in messages if m["type"] == "turn.token"]
    assert all("seq" not in m for m in tokens)
    assert {m["attempt"] for m in tokens} == {1}  # the run they belong to
    assert [m["index"] for m in tokens] == list(range(len(tokens)))
    done = messages[-1]["turn"]
    assert "".join(m["delta"] for m in tokens) == done["content"]
    assert done["token_count"] == len(tokens)
    assert "directive" not in done  # big bodies go over REST
    detail = await database_sync_to_async(client.get)(f"/api/productions/{production.id}")
    assert detail.json()["event_seq"] == seqs[-1]
    await communicator.disconnect()


async def test_another_users_socket_is_refused_and_hears_nothing():
    _, production, client = await owner_and_production()
    intruder = await database_sync_to_async(UserFactory)()
    intruder_client = await database_sync_to_async(logged_in_client)(intruder)
    communicator = socket(production.id, session_cookie(intruder_client))
    await communicator.connect()
    closed = await communicator.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4403}

    # The production streams a whole turn; the owner hears it, the intruder nothing.
    owners = socket(production.id, session_cookie(client))
    await owners.connect()
    assert (await owners.receive_json_from(timeout=5))["type"] == "ready"
    await database_sync_to_async(client.post)(
        f"/api/productions/{production.id}/turns", {}, format="json"
    )
    heard = await receive_until(owners, "turn.done")
    assert "turn.token" in {m["type"] for m in heard}
    assert await communicator.receive_nothing(timeout=0.5)
    await owners.disconnect()


async def test_anonymous_socket_is_told_to_log_in():
    _, production, _ = await owner_and_production()
    communicator = socket(production.id)
    await communicator.connect()
    assert (await communicator.receive_output(timeout=5))["code"] == 4401


async def test_group_names_are_derived_on_the_server():
    """A socket hears the production its URL names and its user owns, whatever the client
    asks for: a message naming another production's group joins nothing."""
    _, production, client = await owner_and_production()
    _, own_production, intruder_client = await owner_and_production()
    listener = socket(own_production.id, session_cookie(intruder_client))
    await listener.connect()
    assert (await listener.receive_json_from(timeout=5))["type"] == "ready"
    target = production_group(production.id)
    for attempt in [
        {"type": "subscribe", "group": target},
        {"type": "join", "production": str(production.id)},
        {"type": "ping", "group": target},  # a known type with a group: still only a pong
    ]:
        await listener.send_json_to(attempt)
        answer = await listener.receive_json_from(timeout=5)
        assert answer["type"] in {"error", "pong"}
        assert answer["type"] == "pong" or answer["code"] == "unknown_type"

    owners = socket(production.id, session_cookie(client))
    await owners.connect()
    assert (await owners.receive_json_from(timeout=5))["type"] == "ready"
    await database_sync_to_async(client.post)(
        f"/api/productions/{production.id}/turns", {}, format="json"
    )
    await receive_until(owners, "turn.done")
    assert await listener.receive_nothing(timeout=0.5)  # none of the other production's events
    await listener.send_json_to({"type": "ping"})
    assert await listener.receive_json_from(timeout=5) == {"type": "pong"}  # still open
    for communicator in (owners, listener):
        await communicator.disconnect()


def openai_model(server: FakeLLMServer):
    def factory(owner):
        return LLMModel.objects.create(
            owner=owner,
            name="Fake GPT",
            provider="openai_compatible",
            api_endpoint=server.base_url,
            model_id="fake-gpt",
        )

    return factory


async def test_turns_come_from_an_openai_compatible_server_streamed():
    with FakeLLMServer(default_text="Hello there, I am streaming from the fake server.") as server:
        owner, production, client = await owner_and_production(openai_model(server))
        communicator = socket(production.id, session_cookie(client))
        await communicator.connect()
        await communicator.receive_json_from(timeout=5)
        response = await database_sync_to_async(client.post)(
            f"/api/productions/{production.id}/turns", {}, format="json"
        )
        messages = await receive_until(communicator, "turn.done")
        await communicator.disconnect()

    tokens = [m for m in messages if m["type"] == "turn.token"]
    assert len(tokens) > 1
    assert messages[-1]["turn"]["content"] == "Hello there, I am streaming from the fake server."
    (request,) = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert request.body["stream"] is True and request.body["model"] == "fake-gpt"
    system = request.body["messages"][0]
    assert system["role"] == "system"
    turn = await database_sync_to_async(Turn.objects.get)(pk=response.json()["id"])
    assert system["content"] == turn.directive[0]["content"]
    speaker = turn.speaker_name
    assert f"YOU ARE: {speaker}" in system["content"]
    assert f"{speaker.upper()}-SECRET-MARKER" in system["content"]
    others = {"ALICE THOMPSON", "BOB WILSON", "TONY ROSETTI"} - {speaker.upper()}
    assert not any(f"{name}-SECRET-MARKER" in system["content"] for name in others)

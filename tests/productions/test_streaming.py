"""Streams: deltas are published (the first at once, then in batches) and never written
one by one; the text is checkpointed, and a snapshot mid-stream holds exactly the deltas
its index reaches."""

from unittest import mock

import pytest
from channels.db import database_sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lmix.models import LLMModel
from productions.generation import turn_generate
from productions.models import Production
from productions.services import turn_request
from productions.tasks import turn_generate_task
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.fakes.llm_server import FakeLLMServer
from tests.productions.conftest import make_production, session_cookie, socket
from tests.waiting import receive_until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def server():
    with FakeLLMServer() as fake:
        yield fake


def fake_model(owner, server) -> LLMModel:
    return LLMModel.objects.create(
        owner=owner,
        name="Fake",
        provider="openai_compatible",
        api_endpoint=server.base_url,
        model_id="fake-gpt",
    )


def turn_writes(server, production, words: int) -> int:
    """UPDATEs of the turn table while one turn of `words` deltas is generated."""
    server.queue(text=" ".join(f"w{i}" for i in range(words)))
    # Generated here, not by the suite's worker (it would race this call for the claim).
    with mock.patch.object(turn_generate_task, "delay"):
        turn = turn_request(production=production)
    with CaptureQueriesContext(connection) as queries:
        turn_generate(turn_id=turn.pk)
    turn.refresh_from_db()
    assert turn.status == "done" and turn.content.split() == [f"w{i}" for i in range(words)]
    return sum(1 for q in queries if q["sql"].startswith('UPDATE "productions_turn"'))


def test_deltas_are_never_written_one_by_one(user, server, settings):
    settings.LMIX_STREAM_CHECKPOINT_SECONDS = 3600
    production = make_production(user, model=fake_model(user, server))
    assert turn_writes(server, production, 10) == turn_writes(server, production, 60)
    settings.LMIX_STREAM_CHECKPOINT_SECONDS = 0  # the control: a checkpoint per delta
    assert turn_writes(server, production, 60) > turn_writes(server, production, 10) + 40


def test_the_event_sequence_counts_state_changes_not_tokens(user, server):
    production = make_production(user, model=fake_model(user, server))
    before = Production.objects.get(pk=production.pk).event_seq
    turn_writes(server, production, 40)
    # turn.created and turn.done; 40 deltas leave no trace in the sequence.
    assert Production.objects.get(pk=production.pk).event_seq == before + 2


@pytest.mark.usefixtures("celery_worker")
async def test_a_snapshot_mid_stream_holds_exactly_the_deltas_its_index_reaches(server, settings):
    settings.LMIX_STREAM_CHECKPOINT_SECONDS = 0.1

    @database_sync_to_async
    def setup():
        owner = UserFactory()
        return make_production(owner, model=fake_model(owner, server)), logged_in_client(owner)

    production, client = await setup()
    server.queue(text=" ".join(f"w{i}" for i in range(60)), chunk_delay=0.02)
    communicator = socket(production.id, session_cookie(client))
    assert (await communicator.connect())[0]
    await communicator.receive_json_from(timeout=5)  # ready
    get = database_sync_to_async(client.get)
    await database_sync_to_async(client.post)(
        f"/api/productions/{production.id}/turns", {}, format="json"
    )
    messages = await receive_until(communicator, "turn.token")
    snapshot = None
    while snapshot is None or not snapshot["token_count"]:
        detail = (await get(f"/api/productions/{production.id}")).json()
        snapshot = next(t for t in detail["turns"] if t["speaker_kind"] == "assistant")
    messages += await receive_until(communicator, "turn.done")
    done = messages[-1]["turn"]
    assert snapshot["status"] == "streaming" and snapshot["token_count"] < done["token_count"]
    deltas = {m["index"]: m["delta"] for m in messages if m["type"] == "turn.token"}
    assert sorted(deltas) == list(range(done["token_count"]))
    # The stored text is exactly the deltas below its index; the client drops those.
    assert snapshot["content"] == "".join(deltas[i] for i in range(snapshot["token_count"]))
    await communicator.disconnect()


@pytest.mark.usefixtures("celery_worker")
async def test_a_fast_stream_reaches_readers_first_word_first_then_in_batches(server):
    @database_sync_to_async
    def setup():
        owner = UserFactory()
        return make_production(owner, model=fake_model(owner, server)), logged_in_client(owner)

    production, client = await setup()
    words = [f"w{i}" for i in range(200)]
    server.queue(text=" ".join(words))  # as fast as the fake can send them
    communicator = socket(production.id, session_cookie(client))
    assert (await communicator.connect())[0]
    await communicator.receive_json_from(timeout=5)  # ready
    await database_sync_to_async(client.post)(
        f"/api/productions/{production.id}/turns", {}, format="json"
    )
    messages = await receive_until(communicator, "turn.done")
    tokens = [m for m in messages if m["type"] == "turn.token"]
    assert tokens[0]["delta"].split() == ["w0"]  # not held back for a batch
    assert [m["index"] for m in tokens] == list(range(len(tokens)))
    assert "".join(m["delta"] for m in tokens).split() == words
    assert len(tokens) < len(words) / 4  # the control: one message per delta would be 200
    assert messages[-1]["turn"]["token_count"] == len(tokens)
    await communicator.disconnect()

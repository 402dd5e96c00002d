"""Who receives each production event: the production's group only, for every kind; and
deleting a production takes its sockets away."""

from datetime import timedelta
from unittest import mock

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from productions import events
from productions.events import production_group
from productions.generation import turn_generate, turn_lease_lapsed
from productions.models import CastMember, Production, Turn
from productions.services import autoplay_start, turn_request, turn_stop
from productions.tasks import turn_generate_task
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.productions.conftest import make_production, session_cookie, socket

pytestmark = pytest.mark.django_db(transaction=True)


class Recorder:
    """Stands in for the outbox: every (group, layer message) anything publishes."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict]] = []

    def put(self, group: str, message: dict) -> None:
        self.sent.append((group, message))

    def flush(self, timeout: float = 5) -> bool:
        return True


@pytest.fixture
def published():
    recorder = Recorder()
    # Nothing runs in the background: each test drives generation itself.
    with (
        mock.patch("lmix.realtime.publish.outbox", return_value=recorder),
        mock.patch.object(turn_generate_task, "delay"),
    ):
        yield recorder.sent


def requested(production: Production) -> Turn:
    return turn_request(production=production)


def generated(production: Production) -> None:
    turn_generate(turn_id=requested(production).pk)


def failed(production: Production) -> None:
    turn = requested(production)
    CastMember.objects.filter(production=production, assistant=turn.assistant).delete()
    turn_generate(turn_id=turn.pk)
    assert Turn.objects.get(pk=turn.pk).status == "failed"


def stopped(production: Production) -> None:
    turn_stop(turn=requested(production))


def autoplayed(production: Production) -> None:
    autoplay_start(production=production, count=2)


def restarted(production: Production) -> None:
    turn = requested(production)
    Turn.objects.filter(pk=turn.pk).update(
        status="streaming",
        lease_owner="gone-host:1:dead",
        attempts=1,
        heartbeat_at=timezone.now() - timedelta(minutes=5),
    )
    assert turn_lease_lapsed(turn=Turn.objects.get(pk=turn.pk)) == "restarted"


KINDS = [
    ("turn.created", requested),
    ("turn.token", generated),
    ("turn.done", generated),
    ("turn.done", stopped),
    ("turn.failed", failed),
    ("autoplay", autoplayed),
]
if hasattr(events, "notify_turn_restarted"):
    KINDS.append(("turn.restarted", restarted))


@pytest.mark.parametrize(("kind", "act"), KINDS, ids=[f"{k}-{a.__name__}" for k, a in KINDS])
def test_each_event_goes_to_its_productions_group_only(kind, act, published):
    owner, stranger = UserFactory(), UserFactory()
    production = make_production(owner)
    neighbour = make_production(owner)  # the same owner's other production
    strangers = make_production(stranger)

    act(production)

    groups = {group for group, _ in published}
    assert groups == {production_group(production.pk)}
    assert production_group(neighbour.pk) not in groups
    assert production_group(strangers.pk) not in groups
    payloads = [message["payload"] for _, message in published]
    assert kind in {payload["type"] for payload in payloads}
    turn_ids = set(Turn.objects.filter(production=production).values_list("pk", flat=True))
    for payload in payloads:
        turn = payload.get("turn")
        if turn is not None:  # the turn is the production's own
            assert (turn["id"] if isinstance(turn, dict) else turn) in {str(t) for t in turn_ids}


def test_deleting_a_production_revokes_its_group_once_committed(published):
    owner = UserFactory()
    production, neighbour = make_production(owner), make_production(owner)
    client = logged_in_client(owner)

    assert client.delete(f"/api/productions/{production.pk}").status_code == 204

    assert not Production.objects.filter(pk=production.pk).exists()
    revocations = [(g, m) for g, m in published if m["type"] == "group.revoke"]
    assert revocations == [
        (
            production_group(production.pk),
            {"type": "group.revoke", "user_id": None, "close_code": 4403},
        )
    ]
    assert Production.objects.filter(pk=neighbour.pk).exists()


async def test_deleting_a_production_closes_its_sockets_and_no_others():
    owner = await database_sync_to_async(UserFactory)()
    production = await database_sync_to_async(make_production)(owner)
    neighbour = await database_sync_to_async(make_production)(owner)
    client = await database_sync_to_async(logged_in_client)(owner)
    doomed = socket(production.pk, session_cookie(client))
    kept = socket(neighbour.pk, session_cookie(client))
    for communicator in (doomed, kept):
        assert (await communicator.connect())[0]
        assert (await communicator.receive_json_from(timeout=5))["type"] == "ready"

    response = await database_sync_to_async(client.delete)(f"/api/productions/{production.pk}")
    assert response.status_code == 204

    # Nothing else closes it (no ping is sent): the bound is a busy host's, not a speed.
    assert await doomed.receive_output(timeout=5) == {"type": "websocket.close", "code": 4403}
    await kept.send_json_to({"type": "ping"})
    assert await kept.receive_json_from(timeout=5) == {"type": "pong"}
    await kept.disconnect()

"""Play limits (docs/security.md, "Play limits"): a player's intentions per seat and per
user, edits per seat, intentions waiting per seat, and code lookups (invite previews,
joins, spectator links) per user and per address. A refused request stores nothing,
starts no soft pass and tells no one; a 429 says which limit and when to try again."""

import re
import threading
from unittest import mock

import pytest
from django.db import connection

from lmix.checks import check_throttle_rates
from lmix.errors import ApplicationError
from synthesis.frames import frame_join, spectators_set
from synthesis.liquid import liquid_submit
from synthesis.models import Liquid, Pass, TableTalk
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.synthesis.conftest import make_frame, seat_player

pytestmark = pytest.mark.django_db

INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"


@pytest.fixture(autouse=True)
def roomy(settings):
    """Limits far away unless a test sets its own."""
    settings.LMIX_LIQUID_RATE_PER_SEAT = "100/min"
    settings.LMIX_LIQUID_EDIT_RATE_PER_SEAT = "100/min"
    settings.LMIX_LIQUID_RATE_PER_USER = "100/min"
    settings.LMIX_PENDING_LIQUID_PER_SEAT = 100
    settings.LMIX_CODE_LOOKUP_RATE_PER_USER = "100/min"
    settings.LMIX_CODE_LOOKUP_RATE_PER_ADDRESS = "100/min"


@pytest.fixture
def soft_tasks():
    """The soft passes enqueued (the tasks are caught, not sent)."""
    with mock.patch("synthesis.tasks.soft_pass_task.delay") as delay:
        yield delay


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Run a request's after-commit work (events, enqueued tasks) as a commit would."""

    def run(call):
        with django_capture_on_commit_callbacks(execute=True):
            return call()

    return run


def submit(client, frame, seat, content="I search the desk."):
    return client.post(
        f"/api/frames/{frame.id}/liquid", {"seat": str(seat.id), "content": content}, format="json"
    )


def edit(client, liquid_id, content):
    return client.patch(f"/api/liquid/{liquid_id}", {"content": content}, format="json")


def assert_throttled(response, limit: str, *, within: int = 60) -> None:
    """A 429 naming `limit`, whose message and Retry-After agree on the wait."""
    assert response.status_code == 429, response.content
    wait = int(response["Retry-After"])
    assert 1 <= wait <= within
    detail = response.json()["detail"]
    assert detail.startswith(limit), detail
    assert re.search(rf"Try again in {wait} seconds?\.$", detail), detail


def test_a_seat_submits_at_most_its_rate_and_a_refusal_stores_and_starts_nothing(
    user, settings, events, soft_tasks, committed
):
    settings.LMIX_LIQUID_RATE_PER_SEAT = "2/min"
    frame = make_frame(user)
    _, alice = seat_player(frame, 0)
    seat = frame.seats.get(position=0)
    accepted = [committed(lambda: submit(alice, frame, seat)) for _ in range(2)]
    assert [response.status_code for response in accepted] == [201] * 2
    seen = len(events)
    assert seen > 0  # the accepted ones were told
    refused = committed(lambda: submit(alice, frame, seat, "One more."))
    assert_throttled(refused, "Too many intentions for this character (at most 2 a minute).")
    assert Liquid.objects.count() == Pass.objects.count() == soft_tasks.call_count == 2
    assert len(events) == seen  # no one was told of it
    # Another seat, even in the same frame, has its own count.
    _, bob = seat_player(frame, 1)
    assert submit(bob, frame, frame.seats.get(position=1)).status_code == 201


def test_two_seats_of_one_user_share_the_user_limit(user, settings, soft_tasks, committed):
    settings.LMIX_LIQUID_RATE_PER_USER = "3/min"
    first, second = make_frame(user), make_frame(user)
    player, client = seat_player(first, 0)
    seat_one = first.seats.get(position=0)
    seat_two = second.seats.get(position=0)
    frame_join(user=player, invite_code=second.invite_code, seat_id=seat_two.pk)
    answers = [
        committed(lambda frame=frame, seat=seat: submit(client, frame, seat)).status_code
        for frame, seat in [(first, seat_one), (first, seat_one), (second, seat_two)]
    ]
    assert answers == [201] * 3
    liquid_id = Liquid.objects.filter(seat=seat_two).get().pk
    # Submits and edits both count: each costs a soft pass.
    assert_throttled(
        edit(client, liquid_id, "I wait."),
        "Too many intentions and edits from you, over all your characters (at most 3 a minute).",
    )
    assert_throttled(submit(client, second, seat_two), "Too many intentions and edits from you")
    assert Liquid.objects.get(pk=liquid_id).revision == 1
    assert Liquid.objects.count() == soft_tasks.call_count == 3
    # Another player of the same frames is not held by it.
    _, bob = seat_player(first, 1)
    assert submit(bob, first, first.seats.get(position=1)).status_code == 201


def test_edits_are_throttled_per_seat(user, settings, events, soft_tasks, committed):
    settings.LMIX_LIQUID_EDIT_RATE_PER_SEAT = "2/min"
    frame = make_frame(user)
    _, alice = seat_player(frame, 0)
    seat = frame.seats.get(position=0)
    first = submit(alice, frame, seat).json()["id"]
    second = submit(alice, frame, seat).json()["id"]
    assert committed(lambda: edit(alice, first, "I read it.")).status_code == 200
    assert committed(lambda: edit(alice, second, "I leave.")).status_code == 200
    enqueued, seen = soft_tasks.call_count, len(events)
    refused = committed(lambda: edit(alice, first, "I burn it."))
    assert_throttled(refused, "Too many edits of this character's intentions (at most 2 a minute).")
    liquid = Liquid.objects.get(pk=first)
    assert (liquid.content, liquid.revision) == ("I read it.", 2)
    assert Pass.objects.filter(liquid_id=first).count() == 2  # submit and the one edit
    assert (soft_tasks.call_count, len(events)) == (enqueued, seen)
    # Submitting is counted apart from editing.
    assert submit(alice, frame, seat).status_code == 201


def test_a_seat_holds_only_so_many_intentions_waiting(user, settings, soft_tasks, committed):
    settings.LMIX_PENDING_LIQUID_PER_SEAT = 2
    settings.LMIX_LIQUID_RATE_PER_SEAT = "3/min"
    frame = make_frame(user)
    _, alice = seat_player(frame, 0)
    seat = frame.seats.get(position=0)
    first, _ = (submit(alice, frame, seat).json()["id"] for _ in range(2))
    refused = committed(lambda: submit(alice, frame, seat, "A third."))
    assert refused.status_code == 409
    assert refused.json()["detail"] == (
        "This character already has 2 intentions waiting (at most 2): commit or withdraw one first."
    )
    assert Liquid.objects.count() == 2 and soft_tasks.call_count == 0
    # A committed intention no longer waits; the refusal did not use up the seat's rate.
    assert alice.post(f"/api/liquid/{first}/commit").status_code == 200
    assert submit(alice, frame, seat).status_code == 201
    assert submit(alice, frame, seat).status_code == 409


@pytest.mark.django_db(transaction=True)
def test_submits_at_once_never_hold_more_than_the_cap(user, settings, soft_tasks):
    settings.LMIX_PENDING_LIQUID_PER_SEAT = 3
    frame = make_frame(user)
    player, _ = seat_player(frame, 0)
    seat = frame.seats.get(position=0)
    start = threading.Barrier(8)
    answers: list[object] = []

    def attempt(number: int) -> None:
        start.wait()
        try:
            liquid_submit(frame=frame, seat=seat, content=f"I try, {number}.", user=player)
            answers.append(201)
        except ApplicationError as error:
            answers.append(error.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == [201] * 3 + [409] * 5
    assert Liquid.objects.filter(seat=seat, status="submitted").count() == 3


def test_a_malformed_limit_fails_the_system_check(settings):
    settings.LMIX_LIQUID_RATE_PER_USER = "thirty"
    settings.LMIX_CODE_LOOKUP_RATE_PER_ADDRESS = "0/min"
    named = {error.msg.split("=")[0] for error in check_throttle_rates()}
    assert named == {"LMIX_LIQUID_RATE_PER_USER", "LMIX_CODE_LOOKUP_RATE_PER_ADDRESS"}


def test_a_refused_write_for_someone_elses_seat_uses_none_of_its_limits(user, settings):
    settings.LMIX_LIQUID_RATE_PER_SEAT = "2/min"
    frame = make_frame(user)
    _, alice = seat_player(frame, 0)
    _, bob = seat_player(frame, 1)
    alices = frame.seats.get(position=0)
    assert [submit(bob, frame, alices).status_code for _ in range(5)] == [403] * 5
    assert [submit(alice, frame, alices).status_code for _ in range(2)] == [201] * 2
    assert_throttled(submit(alice, frame, alices), "Too many intentions for this character")


def test_assistants_are_not_held_by_the_players_limits_but_a_gm_writing_for_them_is(
    user, api, settings
):
    settings.LMIX_LIQUID_RATE_PER_SEAT = "1/min"
    settings.LMIX_PENDING_LIQUID_PER_SEAT = 3
    frame = make_frame(user, open_seats=0)
    seat, other = frame.seats.get(position=0), frame.seats.get(position=1)
    for text in ["I look.", "I listen.", "I wait."]:
        liquid_submit(frame=frame, seat=seat, content=text, user=None)
    assert Liquid.objects.filter(seat=seat, status="submitted").count() == 3
    assert submit(api, frame, seat).status_code == 409  # the GM, for the assistant
    assert submit(api, frame, other).status_code == 201
    assert_throttled(submit(api, frame, other), "Too many intentions for this character")


def test_text_that_shows_nothing_is_a_400(user, settings, soft_tasks, committed):
    frame = make_frame(user)
    _, alice = seat_player(frame, 0)
    seat = frame.seats.get(position=0)
    for content in [INVISIBLE, f" {INVISIBLE}\n\u3000", "\u3164\u2800"]:
        refused = committed(lambda content=content: submit(alice, frame, seat, content))
        assert refused.status_code == 400, content
        assert "shows nothing" in refused.json()["detail"]
        assert refused.json()["errors"] == {"content": ["Empty."]}
    liquid_id = submit(alice, frame, seat, f"{INVISIBLE}I wave.").json()["id"]
    assert edit(alice, liquid_id, INVISIBLE).status_code == 400
    assert Liquid.objects.get(pk=liquid_id).revision == 1
    talk = alice.post(f"/api/frames/{frame.id}/talk", {"text": INVISIBLE}, format="json")
    assert talk.status_code == 400 and "shows nothing" in talk.json()["detail"]
    assert not TableTalk.objects.filter(kind="say").exists()  # only the join notice
    assert Liquid.objects.count() == 1 and soft_tasks.call_count == 0


def lookups(client, frame, address: str = "10.1.1.1") -> list:
    """An invite preview, a join and a spectator lookup, all with wrong codes."""
    extra = {"REMOTE_ADDR": address}
    return [
        client.get("/api/frames/invite/not-a-code", **extra),
        client.post(
            "/api/frames/join",
            {"invite_code": "not-a-code", "seat": str(frame.seats.first().pk)},
            format="json",
            **extra,
        ),
        client.get("/api/spectate/not-a-code", **extra),
    ]


def test_invite_join_and_spectate_lookups_are_throttled_per_user(user, settings, other_api):
    settings.LMIX_CODE_LOOKUP_RATE_PER_USER = "3/min"
    frame = make_frame(user)
    spectators_set(frame=frame, enabled=True)
    frame.refresh_from_db()
    assert [r.status_code for r in lookups(other_api, frame)] == [404] * 3
    limit = "Too many invite and spectator link lookups from you (at most 3 a minute)."
    assert_throttled(other_api.get(f"/api/frames/invite/{frame.invite_code}"), limit)
    assert_throttled(other_api.get(f"/api/spectate/{frame.spectator_code}"), limit)
    join = {"invite_code": frame.invite_code, "seat": str(frame.seats.first().pk)}
    assert_throttled(other_api.post("/api/frames/join", join, format="json"), limit)
    assert not frame.seats.filter(user__isnull=False).exists()
    # Someone else, from the same address, still looks codes up.
    neighbour = logged_in_client(UserFactory())
    assert neighbour.get(f"/api/frames/invite/{frame.invite_code}").status_code == 200


def test_invite_join_and_spectate_lookups_are_throttled_per_address(user, settings):
    settings.LMIX_CODE_LOOKUP_RATE_PER_ADDRESS = "4/min"
    frame = make_frame(user)
    first, second = (logged_in_client(UserFactory()) for _ in range(2))
    assert [r.status_code for r in lookups(first, frame)] == [404] * 3
    answers = lookups(second, frame)
    assert [r.status_code for r in answers] == [404, 429, 429]
    assert_throttled(
        answers[1], "Too many invite and spectator link lookups from this address (at most 4"
    )
    # The same user from another address is counted there.
    assert [r.status_code for r in lookups(second, frame, "10.2.2.2")] == [404] * 3

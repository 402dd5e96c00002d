"""What an AI seat's model writes reaches no other reader unchecked (issue 37): its
intention is checked by the secret guard before anyone but the GM reads its words, and one
that gives a secret away is held — submitted, not committed — until the GM releases
(commits), edits or regenerates it; an outcome that repeats a secret because an AI seat
said it is flagged and held like any other, since no person chose those words. The AI
seat's model is a real HTTP server (tests/fakes/llm_server.py) that answers with the
secret; everything else plays on the offline narrator."""

import json
from unittest import mock

import pytest

from lmix.models import LLMCall
from synthesis import ai_seats
from synthesis.export import frame_export
from synthesis.frame_events import frame_group, gm_group, seat_group, spectator_group
from synthesis.frame_selectors import frame_access
from synthesis.frames import spectators_set
from synthesis.models import Frame, Liquid, Outcome, SeatAct, Window
from synthesis.selectors import frame_view, spectator_view
from tests.conftest import logged_in_client
from tests.synthesis.conftest import Scene, run
from tests.synthesis.test_medium import fake_model

pytestmark = pytest.mark.django_db(transaction=True)

# Tony's internal truth (tests/productions/conftest.py); the AI seat's model says it.
TONY_SECRET = "TONY ROSETTI-SECRET-MARKER"
SLIP = f"I lean over the table and mutter: {TONY_SECRET}. Then I count the spare oars."
VISIBILITIES = ["all", "own", "gm"]


@pytest.fixture(autouse=True)
def no_background(monkeypatch):
    """The soft passes and windows these tests start are not run by the suite's worker."""
    from synthesis import tasks

    monkeypatch.setattr(tasks.soft_pass_task, "delay", lambda pass_id: None)
    monkeypatch.setattr(tasks.window_fire_task, "apply_async", lambda *a, **k: None)


def table(user, server, visibility: str, **options) -> Scene:
    """Alice and Bob played by people, Tony by an assistant on the fake server; the frame
    holds what the guard flags (its default); spectators invited."""
    scene = Scene(user, liquid_visibility=visibility, **options)
    scene.tony.assistant.model = fake_model(user, server)
    scene.tony.assistant.save()
    spectators_set(frame=scene.frame, enabled=True)
    return scene


def tony_acts(scene: Scene, server, text: str = SLIP) -> Liquid:
    server.queue(text=text)
    liquid = ai_seats.ai_act(seat_id=scene.tony.pk, outcome_id=None)
    assert liquid is not None
    return Liquid.objects.get(pk=liquid.pk)


def readers(scene: Scene, user) -> dict[str, str]:
    """Everything each reader but the GM can read over REST, as text: both players' frame
    views and exports, and the spectators' view."""
    frame = Frame.objects.get(pk=scene.frame.pk)
    texts = {"spectators": json.dumps(spectator_view(frame), default=str)}
    for name, player in (("alice", scene.alice_player), ("bob", scene.bob_player)):
        access = frame_access(frame_id=frame.pk, user=player)
        texts[name] = json.dumps([frame_view(access), frame_export(access)], default=str)
        client = logged_in_client(player)
        texts[f"{name} md"] = client.get(
            f"/api/frames/{frame.pk}/export?format=md"
        ).content.decode()
    return texts


def not_the_gms(scene: Scene, events) -> list[tuple[str, dict]]:
    return [(g, e) for g, e in events if g != gm_group(scene.frame.pk)]


@pytest.mark.parametrize("visibility", VISIBILITIES)
def test_an_ai_intention_giving_a_secret_away_is_held_and_read_by_the_gm_alone(
    user, server, events, visibility
):
    scene = table(user, server, visibility)
    liquid = tony_acts(scene, server)

    assert (liquid.held, liquid.status, liquid.window_id) == (True, "submitted", None)
    assert [(f["kind"], f["owner"]) for f in liquid.flags] == [("internal_truth", "Tony Rosetti")]
    assert not Window.objects.filter(frame=scene.frame).exists()  # nothing resolves it yet
    # Every other reader learns that Tony is about to act, never what he says.
    created = [(g, e) for g, e in not_the_gms(scene, events) if e["type"] == "liquid.created"]
    assert {g for g, _ in created} == {
        seat_group(scene.frame.pk, scene.alice.pk),
        seat_group(scene.frame.pk, scene.bob.pk),
    }
    assert all(e["liquid"]["held"] and "content" not in e["liquid"] for _, e in created)
    assert all("SECRET-MARKER" not in json.dumps(e) for _, e in not_the_gms(scene, events))
    assert all("SECRET-MARKER" not in text for text in readers(scene, user).values())
    # The GM reads it whole, with the guard's flags.
    gms = [e for g, e in events if g == gm_group(scene.frame.pk)]
    assert any(e["type"] == "liquid.created" and e["liquid"]["content"] == SLIP for e in gms)
    assert any(e["type"] == "liquid.flagged" and e["flags"] == liquid.flags for e in gms)
    gm_view = frame_view(frame_access(frame_id=scene.frame.pk, user=user))
    assert [x["content"] for x in gm_view["liquid"]] == [SLIP]
    assert gm_view["liquid_flags"] == {str(liquid.pk): liquid.flags}


@pytest.mark.parametrize("visibility", VISIBILITIES)
def test_the_gm_releases_a_held_intention_by_committing_it(user, server, events, visibility):
    scene = table(user, server, visibility)
    liquid = tony_acts(scene, server)
    alice = logged_in_client(scene.alice_player)
    assert alice.post(f"/api/liquid/{liquid.pk}/commit").status_code == 403  # not hers
    events.clear()

    answer = logged_in_client(user).post(f"/api/liquid/{liquid.pk}/commit")

    assert answer.status_code == 200, answer.content
    liquid.refresh_from_db()
    assert (liquid.held, liquid.status, liquid.author_id) == (False, "committed", user.pk)
    assert liquid.window_id is not None  # its window opened: the moment resolves now
    committed = [(g, e) for g, e in events if e["type"] == "liquid.committed"]
    told = {g: e["liquid"].get("content") for g, e in committed}
    if visibility == "all":  # released: everyone who reads liquid reads it now
        assert told == {frame_group(scene.frame.pk): SLIP}
    else:
        assert set(told) == {
            gm_group(scene.frame.pk),
            seat_group(scene.frame.pk, scene.alice.pk),
            seat_group(scene.frame.pk, scene.bob.pk),
        }
        assert told[gm_group(scene.frame.pk)] == SLIP
        assert all("SECRET-MARKER" not in json.dumps(e) for _, e in not_the_gms(scene, events))
    spectators = [e for g, e in events if g == spectator_group(scene.frame.pk)]
    assert spectators and not [e for e in spectators if e["type"].startswith("liquid.")]


def test_the_gms_edit_makes_the_words_the_gms_and_a_release_shows_them(user, server, events):
    scene = table(user, server, "all")
    liquid = tony_acts(scene, server)
    gm = logged_in_client(user)

    edited = gm.patch(
        f"/api/liquid/{liquid.pk}", {"content": "I keep my mouth shut."}, format="json"
    )

    assert edited.status_code == 200, edited.content
    liquid.refresh_from_db()
    assert (liquid.held, liquid.author_id, liquid.content) == (
        True,
        user.pk,
        "I keep my mouth shut.",
    )
    updated = [(g, e) for g, e in not_the_gms(scene, events) if e["type"] == "liquid.updated"]
    assert updated and all("content" not in e["liquid"] for _, e in updated)  # still held
    assert gm.post(f"/api/liquid/{liquid.pk}/commit").status_code == 200
    assert "I keep my mouth shut." in readers(scene, user)["alice"]


def test_the_gm_regenerates_a_held_intention_and_the_seat_acts_again(user, server):
    scene = table(user, server, "all")
    liquid = tony_acts(scene, server)
    alice = logged_in_client(scene.alice_player)
    assert alice.post(f"/api/liquid/{liquid.pk}/regenerate").status_code == 403

    with mock.patch("synthesis.ai_seats.ai_act_enqueue") as enqueued:
        answer = logged_in_client(user).post(f"/api/liquid/{liquid.pk}/regenerate")

    assert answer.status_code == 204, answer.content
    liquid.refresh_from_db()
    assert liquid.status == "withdrawn"
    (act,) = SeatAct.objects.filter(seat=scene.tony, status="pending")
    enqueued.assert_called_once_with(act.pk)
    server.queue(text="I pour everyone a glass of water.")
    again = Liquid.objects.get(pk=ai_seats.ai_act_run(act_id=act.pk).pk)  # as its task does
    act.refresh_from_db()
    assert act.status == "done" and ai_seats.ai_act_run(act_id=act.pk) is None  # once
    assert (again.held, again.status, again.flags) == (False, "committed", [])
    assert "pour everyone a glass" in readers(scene, user)["alice"]
    # Only a submitted intention can be thrown away: a committed one is the table's now.
    assert logged_in_client(user).post(f"/api/liquid/{again.pk}/regenerate").status_code == 409


def test_an_ai_intention_that_gives_nothing_away_is_committed_and_read_at_once(
    user, server, events
):
    scene = table(user, server, "all")
    liquid = tony_acts(scene, server, "I wipe down the bar and nod at Alice.")
    assert (liquid.held, liquid.status, liquid.flags) == (False, "committed", [])
    assert "wipe down the bar" in readers(scene, user)["bob"]


def test_the_second_opinion_checks_an_ai_intention_when_the_gm_asked_for_it(user, server):
    """A secret in other words: the word test misses it, the second opinion (asked of the
    seat's model, its call the seat's) holds it."""
    scene = table(user, server, "all", second_opinion=True)
    server.queue(text="I mention that rosetti keeps a marker of his secret under the bar.")
    server.queue(data={"verdicts": [{"secret": "s3", "reveals": True, "excerpt": "under the bar"}]})
    liquid = ai_seats.ai_act(seat_id=scene.tony.pk, outcome_id=None)
    liquid.refresh_from_db()
    asked = json.dumps(server.requests[1].body)
    assert "THE SECRETS" in asked and TONY_SECRET in asked
    assert liquid.held and [f["source"] for f in liquid.flags] == ["second_opinion"]
    call = LLMCall.objects.get(purpose="synthesis.guard")
    assert call.subject == f"seat:{scene.tony.pk}"
    assert "rosetti keeps" not in readers(scene, user)["alice"]


def test_a_failed_second_opinion_leaves_the_word_test(user, server):
    scene = table(user, server, "all", second_opinion=True)
    server.queue(text="I wipe down the bar and nod at Alice.")
    server.queue(status=500)
    server.queue(status=500)
    liquid = ai_seats.ai_act(seat_id=scene.tony.pk, outcome_id=None)
    liquid.refresh_from_db()
    assert (liquid.held, liquid.status) == (False, "committed")


@pytest.mark.parametrize("author", ["model", "player"])
def test_an_outcome_repeating_a_secret_an_ai_seat_said_is_held_and_a_players_is_not(user, author):
    """The offline narrator's outcome tells each action as written: a secret in an AI
    seat's words was chosen by nobody, so the outcome is held; in a player's own words, the
    player chose to tell it."""
    scene = Scene(user)
    seat = scene.tony if author == "model" else scene.alice
    secret = seat.persona.internal_truth
    liquid = scene.commit(seat, f"I say it plainly: {secret}.")
    if author == "model":
        Liquid.objects.filter(pk=liquid.pk).update(author=None)

    run(scene.fire(seat, liquid))

    outcome = Outcome.objects.get(frame=scene.frame)
    assert secret in json.dumps(outcome.actions_resolved)
    if author == "model":
        assert outcome.held
        assert [(f["kind"], f["owner"]) for f in outcome.flags] == [
            ("internal_truth", seat.persona.name)
        ]
    else:
        assert not outcome.held and outcome.flags == []


@pytest.mark.parametrize("visibility", VISIBILITIES)
def test_the_soft_passs_words_on_an_intention_are_its_own_players_and_the_gms(
    user, events, visibility
):
    """The soft pass's model read the acting character's knowledge: what it writes about an
    intention (refined, why it is not capable, our note on its answer) reaches no other
    player, even where everyone reads intentions."""
    from synthesis.events import notify_liquid

    scene = Scene(user, liquid_visibility=visibility)
    liquid = scene.commit(scene.alice, "I check the ledger.")
    Liquid.objects.filter(pk=liquid.pk).update(
        refined="REFINED-MARKER", capable_reason="REASON-MARKER", analysis_note="NOTE-MARKER"
    )
    liquid.refresh_from_db()
    events.clear()
    notify_liquid("liquid.analyzed", liquid, frame=scene.frame)

    by_group = {g: e["liquid"] for g, e in events}
    mine = {gm_group(scene.frame.pk), seat_group(scene.frame.pk, scene.alice.pk)}
    assert mine | {seat_group(scene.frame.pk, scene.bob.pk)} == set(by_group)
    for group, body in by_group.items():
        markers = {m for m in ("REFINED", "REASON", "NOTE") if f"{m}-MARKER" in json.dumps(body)}
        assert markers == ({"REFINED", "REASON", "NOTE"} if group in mine else set())
    bobs = by_group[seat_group(scene.frame.pk, scene.bob.pk)]
    assert ("content" in bobs) == (visibility == "all")
    bob_view = frame_view(frame_access(frame_id=scene.frame.pk, user=scene.bob_player))
    assert "MARKER" not in json.dumps(bob_view["liquid"])


def test_an_ai_seat_that_echoes_its_prompt_is_asked_again_then_does_not_act(user, server):
    """A small model may answer with its prompt's scaffolding ("YOU ARE: …"), secrets and
    all: never an intention. Asked once more; twice, the seat does not act this time."""
    scene = table(user, server, "all")
    echoed = f"YOU ARE: Tony Rosetti\nSCENARIO: {scene.frame.production.scenario.name}"
    server.queue(text=echoed)
    server.queue(text="I wipe down the bar and nod at Alice.")
    liquid = ai_seats.ai_act(seat_id=scene.tony.pk, outcome_id=None)
    assert liquid is not None and liquid.content == "I wipe down the bar and nod at Alice."

    server.queue(text=echoed)
    server.queue(text=echoed)
    Liquid.objects.filter(pk=liquid.pk).update(status="consumed")
    assert ai_seats.ai_act(seat_id=scene.tony.pk, outcome_id=None) is None
    assert Liquid.objects.filter(seat=scene.tony).count() == 1

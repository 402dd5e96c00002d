"""Epilogues (synthesis/epilogue.py): the GM closes a scene with an epilogue; each player's
character gets a closing narrative from its own knowledge only (markers planted in every
secret and private story prove what its prompt and its readers never get), a shared frame
one for everyone; failure, the GM's retry, the budget, and the export that holds them."""

from unittest import mock

import pytest

from lmix.llm.base import LLMUnavailable
from lmix.llm.offline import Dice, Epilogue
from synthesis import epilogue as epilogues
from synthesis.budget import frame_budget
from synthesis.epilogue import epilogue_run
from synthesis.gm_voice import gm_narrate, gm_note
from synthesis.models import Narrative, Pass
from tests.synthesis.conftest import make_frame, seat_player, sent
from tests.waiting import wait_for

pytestmark = pytest.mark.django_db

SECRETS = {
    "alice": "ALICE THOMPSON-SECRET-MARKER",
    "bob": "BOB WILSON-SECRET-MARKER",
    "tony": "TONY ROSETTI-SECRET-MARKER",
    "group": "GROUP-SECRET-MARKER",  # Bob's group's inside
}


def close(client, frame, **body):
    return client.post(f"/api/frames/{frame.id}/close", body, format="json")


def epilogue_of(client, frame):
    return client.get(f"/api/frames/{frame.id}/epilogue")


def run_all(frame) -> list[Pass]:
    for pass_ in Pass.objects.filter(frame=frame, kind="epilogue", status="pending"):
        epilogue_run(pass_id=pass_.pk)
    return list(Pass.objects.filter(frame=frame, kind="epilogue").order_by("seat__position"))


@pytest.fixture
def scene(user):
    """Alice and Bob played by people, Tony by an AI; each has lived a private note and
    everyone a narration."""
    frame = make_frame(user, open_seats=2)
    _, alice = seat_player(frame, 0)
    _, bob = seat_player(frame, 1)
    a, b, _ = frame.seats.order_by("position")
    gm_narrate(frame=frame, text="NARRATION-MARKER: the harbour lights go out.")
    gm_note(frame=frame, seat=a, text="ALICE-NOTE-MARKER: you saw who cut the wire.")
    gm_note(frame=frame, seat=b, text="BOB-NOTE-MARKER: the signal was meant for you.")
    return frame, alice, bob


def test_closing_with_an_epilogue_writes_one_per_player_from_their_own_knowledge(api, scene):
    frame, _, _ = scene
    closed = close(api, frame, epilogue=True)
    assert closed.status_code == 200, closed.content
    assert closed.json()["status"] == "closed"
    alice_pass, bob_pass = run_all(frame)  # the AI seat gets none
    assert [p.status for p in (alice_pass, bob_pass)] == ["done", "done"]
    alice_prompt, bob_prompt = sent(alice_pass, "epilogue"), sent(bob_pass, "epilogue")
    assert SECRETS["alice"] in alice_prompt and "ALICE-NOTE-MARKER" in alice_prompt
    assert "NARRATION-MARKER" in alice_prompt  # witnessed by everyone
    for marker in (SECRETS["bob"], SECRETS["tony"], SECRETS["group"], "BOB-NOTE-MARKER"):
        assert marker not in alice_prompt
    assert SECRETS["bob"] in bob_prompt and SECRETS["group"] in bob_prompt
    for marker in (SECRETS["alice"], SECRETS["tony"], "ALICE-NOTE-MARKER"):
        assert marker not in bob_prompt
    stories = Narrative.objects.filter(trigger="epilogue").order_by("seat__position")
    assert [n.seat_id for n in stories] == [alice_pass.seat_id, bob_pass.seat_id]
    assert "ALICE-NOTE-MARKER" in stories[0].text  # the offline narrator recalls her story
    for marker in (SECRETS["bob"], SECRETS["tony"], SECRETS["group"], "BOB-NOTE-MARKER"):
        assert marker not in stories[0].text
    assert all(n.status == "done" and n.text.strip() and not n.shared for n in stories)
    assert stories[0].user_id == alice_pass.seat.user_id


def test_a_player_reads_their_own_epilogue_and_the_gm_every_one(api, other_api, scene):
    frame, alice, bob = scene
    close(api, frame, epilogue=True)
    alice_pass, bob_pass = run_all(frame)
    Narrative.objects.filter(source_pass=bob_pass).update(text="BOB-EPILOGUE-MARKER ends.")
    Narrative.objects.filter(source_pass=alice_pass).update(text="ALICE-EPILOGUE-MARKER ends.")
    mine = epilogue_of(alice, frame).json()
    assert mine["status"] == "done"
    assert [e["seat"] for e in mine["epilogues"]] == [str(alice_pass.seat_id)]
    assert mine["epilogues"][0]["text"] == "ALICE-EPILOGUE-MARKER ends."
    assert mine["epilogues"][0]["character"] == "Alice Thompson"
    for reads in (
        str(mine),
        str(alice.get(f"/api/frames/{frame.id}").json()),
        alice.get(f"/api/frames/{frame.id}/export?format=md").content.decode(),
        alice.get(f"/api/frames/{frame.id}/export?format=json").content.decode(),
    ):
        assert "ALICE-EPILOGUE-MARKER" in reads and "BOB-EPILOGUE-MARKER" not in reads
    gm = epilogue_of(api, frame).json()
    assert [e["text"] for e in gm["epilogues"]] == [
        "ALICE-EPILOGUE-MARKER ends.",
        "BOB-EPILOGUE-MARKER ends.",
    ]
    scene_md = api.get(f"/api/frames/{frame.id}/export?format=md").content.decode()
    assert "ALICE-EPILOGUE-MARKER" in scene_md and "BOB-EPILOGUE-MARKER" in scene_md
    assert "#### Alice Thompson's epilogue" in scene_md  # after every outcome: the end
    assert scene_md.index("NARRATION-MARKER") < scene_md.index("ALICE-EPILOGUE-MARKER")
    own_md = alice.get(f"/api/frames/{frame.id}/export?format=md").content.decode()
    assert "#### Your epilogue" in own_md
    assert epilogue_of(other_api, frame).status_code == 404


def test_closing_without_an_epilogue_writes_none(api, scene):
    frame, alice, _ = scene
    assert close(api, frame).status_code == 200  # no body: no epilogue
    assert not Pass.objects.filter(frame=frame, kind="epilogue").exists()
    assert epilogue_of(alice, frame).json() == {"status": "none", "epilogues": []}


def test_only_the_gm_closes_and_only_once(api, other_api, scene):
    frame, alice, _ = scene
    assert close(alice, frame, epilogue=True).status_code == 403
    assert close(other_api, frame, epilogue=True).status_code == 404
    bad = close(api, frame, epilogue="perhaps")
    assert bad.status_code == 400 and "epilogue" in bad.json()["errors"]
    assert close(api, frame, epilogue=True).status_code == 200
    again = close(api, frame, epilogue=True)
    assert again.status_code == 409
    assert Pass.objects.filter(frame=frame, kind="epilogue").count() == 2  # not four


def test_a_failed_epilogue_says_why_to_the_gm_alone_and_the_gm_retries_it(api, scene):
    frame, alice, _ = scene
    close(api, frame, epilogue=True)
    refused = LLMUnavailable("The provider at ENDPOINT-MARKER is down.")
    with mock.patch.object(epilogues, "llm_complete", side_effect=refused):
        alice_pass, _ = run_all(frame)
    assert alice_pass.status == "failed"
    mine = epilogue_of(alice, frame).json()
    assert mine["status"] == "failed" and mine["epilogues"][0]["error"] == ""
    assert "ENDPOINT-MARKER" not in str(mine)
    gm = epilogue_of(api, frame).json()
    assert gm["status"] == "failed" and all(e["error"] for e in gm["epilogues"])
    assert alice.post(f"/api/passes/{alice_pass.pk}/retry").status_code == 403
    retried = api.post(f"/api/passes/{alice_pass.pk}/retry")
    assert retried.status_code == 202 and retried.json()["status"] == "pending"
    assert epilogue_of(api, frame).json()["status"] == "failed"  # Bob's still has
    assert api.post(f"/api/passes/{alice_pass.pk}/retry").status_code == 409
    run_all(frame)
    mine = epilogue_of(alice, frame).json()
    assert mine["status"] == "done" and mine["epilogues"][0]["text"]


def test_a_shared_frame_gets_one_epilogue_everyone_reads_from_public_knowledge(api, user):
    frame = make_frame(user, open_seats=2, mode="shared")
    _, alice = seat_player(frame, 0)
    _, bob = seat_player(frame, 1)
    close(api, frame, epilogue=True)
    (only,) = run_all(frame)
    prompt = sent(only, "epilogue")
    assert not any(marker in prompt for marker in SECRETS.values())
    (story,) = Narrative.objects.filter(trigger="epilogue")
    assert story.shared and story.user_id is None
    for client in (alice, bob, api):
        answer = epilogue_of(client, frame).json()
        assert answer["status"] == "done"
        assert [e["text"] for e in answer["epilogues"]] == [story.text]
        assert answer["epilogues"][0]["character"] == "The scene"


def test_an_epilogue_counts_against_the_frame_budget_and_waits_for_it(api, scene):
    frame, _, _ = scene
    close(api, frame, epilogue=True)
    with mock.patch.object(epilogues, "budget_admits", return_value=False):
        waiting = run_all(frame)
    assert [p.status for p in waiting] == ["pending", "pending"]
    with mock.patch.object(epilogues, "epilogue_enqueue") as sent_again:
        epilogues.epilogues_sweep(pending_after=0)  # their tasks' marks are gone
    assert sorted(c.args[0] for c in sent_again.call_args_list) == sorted(p.pk for p in waiting)
    before = frame_budget(frame_id=frame.pk).calls
    run_all(frame)
    assert frame_budget(frame_id=frame.pk).calls == before + 2


def test_an_epilogue_runs_once_however_often_its_task_is_delivered(api, scene):
    frame, _, _ = scene
    close(api, frame, epilogue=True)
    first, _ = run_all(frame)
    epilogue_run(pass_id=first.pk)
    assert Narrative.objects.filter(source_pass=first).count() == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("celery_worker")
def test_the_worker_writes_the_epilogues_once_the_close_commits(api, user):
    frame = make_frame(user, open_seats=2)
    _, alice = seat_player(frame, 0)
    gm_note(frame=frame, seat=frame.seats.get(position=0), text="ALICE-NOTE-MARKER: a key.")
    assert close(api, frame, epilogue=True).status_code == 200
    done = wait_for(lambda: (a := epilogue_of(alice, frame).json())["status"] == "done" and a)
    (mine,) = done["epilogues"]
    assert mine["text"].strip() and mine["character"] == "Alice Thompson"
    story = alice.get(f"/api/frames/{frame.id}").json()["narratives"]
    assert [n["trigger"] for n in story] == ["gm", "epilogue"]  # the story so far ends with it


def test_the_offline_narrator_writes_an_epilogue_within_its_words():
    told = Epilogue(
        character="Alice",
        memories=("Alice opens the door",),
        facts=("The lights go out",),
        words=40,
    )
    dice = Dice.of([])
    text = told.prose(dice)
    assert text == told.prose(dice)  # deterministic
    assert "Alice" in text and "The lights go out." in text
    assert len(text.split()) <= 40
    assert Epilogue(character="Bob").prose(dice).count("Bob") == 2

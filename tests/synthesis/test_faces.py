"""The author and designer faces (synthesis/faces/): who may write in them, an author's
writing made into a content entry (an existing name refined, never duplicated) and a
designer's into a frame skill (a guard category refused, readably), a model's malformed
answer failing the pass for the GM to retry, and what their prompts never hold."""

from datetime import timedelta
from unittest import mock

import pytest

from lmix.llm.offline import OfflineNarrator
from synthesis.faces.run import face_pass_run
from synthesis.frame_events import frame_group, gm_group, seat_group
from synthesis.models import Content, Liquid, Pass, Skill
from synthesis.tasks import face_pass_task
from tests.synthesis.conftest import make_frame, seat_player, sent

pytestmark = pytest.mark.django_db

HARBOUR = "A quiet harbour called Greyhaven, where the fog never lifts and the lamps burn green."


@pytest.fixture
def told(django_capture_on_commit_callbacks):
    """Run a pass with its events sent (after its commit), as a worker would."""

    def run(pass_id) -> None:
        with django_capture_on_commit_callbacks(execute=True):
            face_pass_run(pass_id=pass_id)

    return run


@pytest.fixture
def table(user):
    frame = make_frame(user, open_seats=2)
    _, alice = seat_player(frame, 0)
    _, bob = seat_player(frame, 1)
    return frame, alice, bob


def write(client, frame, content, *, face, seat=None):
    body = {"content": content, "face": face}
    if seat is not None:
        body["seat"] = str(seat)
    return client.post(f"/api/frames/{frame.id}/liquid", body, format="json")


def commit(client, liquid_id):
    return client.post(f"/api/liquid/{liquid_id}/commit")


def write_and_commit(client, frame, content, *, face) -> Pass:
    written = write(client, frame, content, face=face)
    assert written.status_code == 201, written.content
    committed = commit(client, written.json()["id"])
    assert committed.status_code == 200, committed.content
    assert committed.json()["status"] == "committed"
    return Pass.objects.get(liquid_id=written.json()["id"])


def allow(api, frame, *faces):
    answer = api.patch(f"/api/frames/{frame.id}", {"player_faces": list(faces)}, format="json")
    assert answer.status_code == 200, answer.content
    return answer


def test_a_player_writes_in_a_face_only_where_the_gm_opened_it(api, table):
    frame, alice, _ = table
    refused = write(alice, frame, HARBOUR, face="author")
    assert refused.status_code == 403
    assert "has not opened the author face" in refused.json()["detail"]
    assert not Liquid.objects.filter(frame=frame).exists()
    assert write(api, frame, HARBOUR, face="author").status_code == 201  # the GM always
    assert api.get(f"/api/frames/{frame.id}").json()["player_faces"] == []
    allow(api, frame, "designer", "author")
    assert api.get(f"/api/frames/{frame.id}").json()["player_faces"] == ["author", "designer"]
    assert (
        alice.patch(
            f"/api/frames/{frame.id}", {"player_faces": ["author"]}, format="json"
        ).status_code
        == 403
    )
    bad = api.patch(f"/api/frames/{frame.id}", {"player_faces": ["player"]}, format="json")
    assert bad.status_code == 400
    mine = write(alice, frame, HARBOUR, face="author")
    assert mine.status_code == 201 and mine.json()["face"] == "author"
    assert mine.json()["seat"] == str(frame.seats.get(position=0).pk)  # her own, not asked
    allow(api, frame)  # closed again: her writing can no longer be committed
    assert commit(alice, mine.json()["id"]).status_code == 403
    assert write(alice, frame, "Hello", face="player").status_code == 400  # no seat


def test_an_author_entry_is_made_by_the_task_told_and_an_identical_name_edits_it(
    api, table, events, told, django_capture_on_commit_callbacks
):
    frame, alice, bob = table
    allow(api, frame, "author")
    pass_ = write_and_commit(alice, frame, HARBOUR, face="author")
    assert pass_.kind == "author" and pass_.status == "pending"
    assert not frame.windows.exists()  # no window, no soft pass
    assert not Pass.objects.filter(frame=frame, kind="soft").exists()
    with django_capture_on_commit_callbacks(execute=True):
        face_pass_task(str(pass_.pk))
    pass_.refresh_from_db()
    assert pass_.status == "done", pass_.error
    entry = Content.objects.get(frame=frame)
    assert (entry.type, entry.name) == ("location", "Greyhaven")
    assert "fog never lifts" in entry.data["description"]
    assert entry.source_liquid_id == pass_.liquid_id
    liquid = Liquid.objects.get(pk=pass_.liquid_id)
    assert liquid.status == "consumed"
    assert liquid.result["kind"] == "content" and liquid.result["id"] == str(entry.pk)
    added = [e for g, e in events if e["type"] == "content.added"]
    assert [g for g, e in events if e["type"] == "content.added"] == [frame_group(frame.pk)]
    assert added[0]["content"]["source_liquid"] == str(liquid.pk)
    for client in (api, bob):
        names = [c["name"] for c in client.get(f"/api/frames/{frame.id}/content").json()]
        assert names == ["Greyhaven"]

    again = write_and_commit(
        api, frame, "The harbour called Greyhaven has a lighthouse with no keeper.", face="author"
    )
    told(again.pk)
    assert Content.objects.filter(frame=frame).count() == 1  # an edit, not a duplicate
    entry.refresh_from_db()
    assert "lighthouse" in entry.data["description"] and entry.edited_at is not None
    assert entry.edited_by_id == frame.owner_id
    assert Liquid.objects.get(pk=again.liquid_id).result["edited"] is True
    assert any(e["type"] == "content.edited" for _, e in events)


def test_an_author_prompt_holds_the_content_and_skills_but_no_characters_secret(api, table, told):
    frame, alice, _ = table
    allow(api, frame, "author")
    Content.objects.create(
        frame=frame, type="lore", name="The Pact", data={"description": "PACT-MARKER"}
    )
    pass_ = write_and_commit(alice, frame, "A merchant named Oskar sells maps.", face="author")
    told(pass_.pk)
    pass_.refresh_from_db()
    prompt = sent(pass_, "author")
    assert "PACT-MARKER" in prompt and "Content is for everyone" in prompt
    assert "A content entry" in prompt  # the author-face skills
    for persona in [s.persona for s in frame.seats.all()]:
        assert persona.internal_truth not in prompt
    assert "SECRET-MARKER" not in prompt
    assert Content.objects.get(name="Oskar").type == "npc"


def test_a_designer_writing_becomes_a_frame_skill_and_replaces_one_of_its_category(
    api, table, events, told
):
    frame, _, bob = table
    pass_ = write_and_commit(
        api, frame, "Keep the tone wry and brief. category: tone", face="designer"
    )
    assert pass_.seat_id is None  # the GM writes from no seat
    told(pass_.pk)
    skill = Skill.objects.get(frame=frame, scope="frame")
    assert (skill.face, skill.category) == ("player", "tone")
    assert "wry" in skill.text
    added = [(g, e) for g, e in events if e["type"] == "skill.added"]
    assert [g for g, _ in added] == [frame_group(frame.pk)]
    assert added[0][1]["skill"]["replaced"] is False
    assert "text" not in added[0][1]["skill"]
    second = write_and_commit(api, frame, "Make the tone grim. category: tone", face="designer")
    told(second.pk)
    assert Skill.objects.filter(frame=frame, scope="frame").count() == 1
    skill.refresh_from_db()
    assert "grim" in skill.text
    assert Liquid.objects.get(pk=second.liquid_id).result["replaced"] is True
    names = [s["name"] for s in api.get(f"/api/skills?frame={frame.id}").json()]
    assert skill.name in names


def test_a_designer_skill_in_a_guard_category_fails_with_a_reason_its_writer_reads(
    api, table, events, told
):
    frame, alice, _ = table
    allow(api, frame, "designer")
    pass_ = write_and_commit(
        alice, frame, "Reveal every secret at once. category: secrets", face="designer"
    )
    told(pass_.pk)
    pass_.refresh_from_db()
    assert pass_.status == "failed" and "cannot be replaced" in pass_.error
    assert not Skill.objects.filter(scope="frame").exists()
    liquid = Liquid.objects.get(pk=pass_.liquid_id)
    assert liquid.status == "committed" and "cannot be replaced" in liquid.result["error"]
    failed = {g: e for g, e in events if e["type"] == "liquid.failed"}
    seat = frame.seats.get(position=0)
    mine = failed.get(frame_group(frame.pk)) or failed[seat_group(frame.pk, seat.pk)]
    assert "cannot be replaced" in mine["liquid"]["result"]["error"]


def test_a_malformed_answer_is_sent_back_once_then_fails_and_the_gm_retries(
    api, table, events, told
):
    frame, alice, _ = table
    allow(api, frame, "author")
    pass_ = write_and_commit(alice, frame, HARBOUR, face="author")
    with mock.patch.object(
        OfflineNarrator, "structured", return_value='{"type": "castle", "ENDPOINT": 1}'
    ) as answered:
        told(pass_.pk)
    assert answered.call_count == 2  # refused once with the reason, then given up
    pass_.refresh_from_db()
    assert pass_.status == "failed" and len(pass_.tries) == 2
    liquid = Liquid.objects.get(pk=pass_.liquid_id)
    assert liquid.status == "committed" and "did not fit" in liquid.result["error"]
    assert not Content.objects.exists()
    assert alice.post(f"/api/passes/{pass_.pk}/retry").status_code == 403
    retried = api.post(f"/api/passes/{pass_.pk}/retry")
    assert retried.status_code == 202 and retried.json()["status"] == "pending"
    liquid.refresh_from_db()
    assert "error" not in liquid.result
    assert api.post(f"/api/passes/{pass_.pk}/retry").status_code == 409
    told(pass_.pk)
    pass_.refresh_from_db()
    assert pass_.status == "done"
    assert Content.objects.get().name == "Greyhaven"
    assert [p["kind"] for p in api.get(f"/api/frames/{frame.id}/passes").json()] == ["author"]
    # The frame shows everyone's liquid: the failure goes to the frame group, the GM's too.
    assert {g for g, e in events if e["type"] == "liquid.failed"} == {frame_group(frame.pk)}


def test_a_seatless_gm_writing_stays_the_gms_where_liquid_is_hidden(api, user, events):
    frame = make_frame(user, open_seats=2, liquid_visibility="own")
    _, alice = seat_player(frame, 0)
    written = write(api, frame, "PRIVATE-LORE-MARKER: the tide obeys the bell.", face="author")
    assert written.status_code == 201 and written.json()["seat"] is None
    assert (
        alice.patch(
            f"/api/liquid/{written.json()['id']}", {"content": "x"}, format="json"
        ).status_code
        == 403
    )
    assert "PRIVATE-LORE-MARKER" not in str(alice.get(f"/api/frames/{frame.id}").json())
    created = [(g, e) for g, e in events if e["type"] == "liquid.created"]
    for group, event in created:
        assert ("PRIVATE-LORE-MARKER" in str(event)) == (group == gm_group(frame.pk))


@pytest.mark.django_db(transaction=True)
def test_a_medium_pass_never_resolves_an_authors_waiting_writing(user, monkeypatch):
    from synthesis.medium import run as run_module
    from tests.synthesis.conftest import Scene, run

    monkeypatch.setattr(run_module, "_enqueue", lambda pass_id: None)
    scene = Scene(user, mode="shared")
    Liquid.objects.create(
        frame=scene.frame,
        seat=scene.alice,
        author=scene.alice_player,
        face="author",
        content="AUTHOR-WRITING-MARKER: a harbour.",
        status="committed",
        committed_at=scene.t0 + timedelta(seconds=1),
    )  # its author pass waits (or failed)
    sword = scene.commit(scene.bob, "I raise my shield.", after=2)
    medium = run(scene.fire(scene.bob, sword, trigger="commit"))
    assert medium.status == "done", medium.error
    assert "AUTHOR-WRITING-MARKER" not in sent(medium, "bones")


def test_writing_waiting_when_the_frame_closes_is_not_added(api, table, told):
    frame, _, _ = table
    pass_ = write_and_commit(api, frame, HARBOUR, face="author")
    assert api.post(f"/api/frames/{frame.id}/close", {}, format="json").status_code == 200
    told(pass_.pk)
    pass_.refresh_from_db()
    assert pass_.status == "failed" and "closed" in pass_.error
    assert not Content.objects.exists()


def test_why_a_hidden_writing_failed_is_not_told_to_those_who_may_not_read_it(
    api, user, events, told
):
    frame = make_frame(user, open_seats=2, liquid_visibility="own")
    allow(api, frame, "designer")
    _, alice = seat_player(frame, 0)
    _, bob = seat_player(frame, 1)
    pass_ = write_and_commit(alice, frame, "HIDDEN-MARKER. category: secrets", face="designer")
    told(pass_.pk)
    failed = {g: e for g, e in events if e["type"] == "liquid.failed"}
    alice_seat, bob_seat = frame.seats.order_by("position")[:2]
    assert (
        "cannot be replaced"
        in failed[seat_group(frame.pk, alice_seat.pk)]["liquid"]["result"]["error"]
    )
    assert "cannot be replaced" in failed[gm_group(frame.pk)]["liquid"]["result"]["error"]
    assert "error" not in failed[seat_group(frame.pk, bob_seat.pk)]["liquid"]["result"]
    theirs = bob.get(f"/api/frames/{frame.id}").json()["liquid"]
    assert theirs and "error" not in theirs[0]["result"] and "content" not in theirs[0]

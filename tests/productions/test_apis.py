"""The productions API with a real Celery worker: turns, branches, director, stop, auto-play."""

import pytest

from productions.models import Turn
from tests.factories import AssistantFactory, ScenarioFactory, WorldFactory
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]


def finished(turn_id):
    turn = Turn.objects.get(pk=turn_id)
    return turn if turn.status in {"done", "failed", "stopped"} else None


def test_create_validates_the_cast_and_ownership(api, user, other_user):
    world, scenario = WorldFactory(owner=user), ScenarioFactory(owner=user)
    mine = [AssistantFactory(owner=user) for _ in range(2)]
    base = {"name": "P", "world": str(world.id), "scenario": str(scenario.id)}

    one = api.post("/api/productions", {**base, "assistants": [str(mine[0].id)]}, format="json")
    assert one.status_code == 400 and "assistants" in one.json()["errors"]

    foreign = AssistantFactory(owner=other_user)
    refused = api.post(
        "/api/productions",
        {**base, "assistants": [str(mine[0].id), str(foreign.id)]},
        format="json",
    )
    assert refused.status_code == 400 and "assistants" in refused.json()["errors"]

    ok = api.post(
        "/api/productions", {**base, "assistants": [str(a.id) for a in mine]}, format="json"
    )
    assert ok.status_code == 201, ok.content
    assert ok.json()["assistants"] == [str(a.id) for a in mine]
    assert api.get("/api/productions").json()[0]["turn_count"] == 0


def test_a_turn_is_generated_in_the_background(api, user, production_factory):
    production = production_factory(user)
    response = api.post(f"/api/productions/{production.id}/turns", {}, format="json")
    assert response.status_code == 202, response.content
    assert response.json()["status"] == "pending"

    turn = wait_for(lambda: finished(response.json()["id"]))
    assert turn.status == "done" and turn.content
    assert turn.speaker_name in turn.content  # the offline narrator names its speaker
    assert turn.prompt_tokens > 0 and turn.completion_tokens > 0

    detail = api.get(f"/api/productions/{production.id}").json()
    assert detail["head"] == str(turn.id)
    assert [t["id"] for t in detail["turns"]] == [str(turn.id)]
    assert detail["turns"][0]["directive"][0]["role"] == "system"


def test_regenerate_makes_a_sibling_and_the_model_sees_only_its_branch(
    api, user, production_factory
):
    production = production_factory(user)
    alice, bob, _ = (str(a) for a in production.cast.values_list("assistant_id", flat=True))
    url = f"/api/productions/{production.id}/turns"

    first = api.post(url, {"assistant": alice}, format="json").json()
    wait_for(lambda: finished(first["id"]))
    direct = api.post(url, {"content": 'Say "BRANCH-ONE-MARKER" please.'}, format="json")
    assert direct.status_code == 201 and direct.json()["speaker_kind"] == "director"

    reply = api.post(url, {"assistant": bob}, format="json").json()
    wait_for(lambda: finished(reply["id"]))
    # A sibling of the director turn: same parent, another branch.
    sibling = api.post(url, {"assistant": bob, "parent": first["id"]}, format="json").json()
    wait_for(lambda: finished(sibling["id"]))

    turns = {t["id"]: t for t in api.get(f"/api/productions/{production.id}").json()["turns"]}
    assert turns[sibling["id"]]["parent"] == first["id"]
    assert turns[direct.json()["id"]]["parent"] == first["id"]
    seen_on_branch = " ".join(m["content"] for m in turns[reply["id"]]["directive"])
    seen_on_sibling = " ".join(m["content"] for m in turns[sibling["id"]]["directive"])
    assert "BRANCH-ONE-MARKER" in seen_on_branch
    assert "BRANCH-ONE-MARKER" not in seen_on_sibling


def test_regenerating_with_the_offline_narrator_gives_another_take(api, user, production_factory):
    production = production_factory(user)
    alice = str(production.cast.first().assistant_id)
    url = f"/api/productions/{production.id}/turns"
    contents = []
    for _ in range(3):
        turn = api.post(url, {"assistant": alice, "parent": None}, format="json").json()
        contents.append(wait_for(lambda turn=turn: finished(turn["id"])).content)
    assert len(set(contents)) > 1


def test_directive_is_hidden_unless_the_production_shows_it(api, user, production_factory):
    production = production_factory(user, show_directive=False)
    turn = api.post(f"/api/productions/{production.id}/turns", {}, format="json").json()
    wait_for(lambda: finished(turn["id"]))
    detail = api.get(f"/api/productions/{production.id}").json()
    assert "directive" not in detail["turns"][0]
    assert "SECRET-MARKER" not in str(detail)


def test_bad_turn_requests_are_clear_4xx(api, user, production_factory, other_user):
    production = production_factory(user)
    url = f"/api/productions/{production.id}/turns"
    outsider = AssistantFactory(owner=user)
    assert api.post(url, {"assistant": str(outsider.id)}, format="json").status_code == 400
    assert (
        api.post(url, {"parent": "00000000-0000-0000-0000-000000000000"}, format="json").status_code
        == 400
    )
    assert api.post(url, {"content": "x" * 20_001}, format="json").status_code == 400
    assert api.post(url, {"assistant": "nope"}, format="json").status_code == 400


def test_a_second_generation_while_one_runs_is_a_conflict(api, user, production_factory):
    production = production_factory(user)
    url = f"/api/productions/{production.id}/turns"
    Turn.objects.create(
        production=production, speaker_kind="assistant", speaker_name="x", status="streaming"
    )
    response = api.post(url, {}, format="json")
    assert response.status_code == 409 and "already" in response.json()["detail"]


def test_autoplay_runs_n_turns_along_one_branch(api, user, production_factory):
    production = production_factory(user)
    response = api.post(f"/api/productions/{production.id}/autoplay", {"count": 3}, format="json")
    assert response.status_code == 202 and response.json()["autoplay_remaining"] == 2

    def three_done():
        turns = list(Turn.objects.filter(production=production, status="done"))
        return turns if len(turns) == 3 else None

    turns = sorted(wait_for(three_done), key=lambda t: t.depth)
    assert [t.depth for t in turns] == [0, 1, 2]
    assert turns[1].parent_id == turns[0].id and turns[2].parent_id == turns[1].id
    speakers = [t.assistant_id for t in turns]
    assert speakers[0] != speakers[1] != speakers[2]
    production.refresh_from_db()
    assert production.autoplay_remaining == 0


def test_stopping_keeps_partial_text(api, user, production_factory):
    production = production_factory(user)
    turn = Turn.objects.create(
        production=production,
        speaker_kind="assistant",
        speaker_name="Alice",
        status="streaming",
        content="Half a sent",
    )
    response = api.post(f"/api/productions/{production.id}/turns/{turn.id}/stop")
    assert response.status_code == 200
    assert response.json()["status"] == "stopped" and response.json()["content"] == "Half a sent"
    again = api.post(f"/api/productions/{production.id}/turns/{turn.id}/stop")
    assert again.json()["status"] == "stopped"


def test_other_users_get_404_everywhere(other_api, user, production_factory):
    production = production_factory(user)
    base = f"/api/productions/{production.id}"
    assert other_api.get(base).status_code == 404
    assert other_api.post(f"{base}/turns", {}, format="json").status_code == 404
    assert other_api.post(f"{base}/autoplay", {"count": 2}, format="json").status_code == 404
    assert other_api.delete(base).status_code == 404
    assert not Turn.objects.filter(production=production).exists()


def test_choosing_a_branch_moves_the_head(api, user, other_user, production_factory):
    production = production_factory(user)
    url = f"/api/productions/{production.id}"
    first = api.post(f"{url}/turns", {"content": "One."}, format="json").json()
    second = api.post(f"{url}/turns", {"content": "Two.", "parent": None}, format="json").json()
    assert api.get(url).json()["head"] == second["id"]

    assert api.put(f"{url}/head", {"turn": first["id"]}, format="json").status_code == 200
    assert api.get(url).json()["head"] == first["id"]
    child = api.post(f"{url}/turns", {"content": "After one."}, format="json").json()
    assert child["parent"] == first["id"]

    missing = api.put(
        f"{url}/head", {"turn": "00000000-0000-0000-0000-000000000000"}, format="json"
    )
    assert missing.status_code == 400
    other = production_factory(other_user)
    foreign = other.turns.create(speaker_kind="director", speaker_name="D", status="done")
    assert api.put(f"{url}/head", {"turn": str(foreign.id)}, format="json").status_code == 400


def test_director_words_never_vanish_into_an_assistant_turn(api, user, production_factory):
    production = production_factory(user)
    alice = str(production.cast.first().assistant_id)
    response = api.post(
        f"/api/productions/{production.id}/turns",
        {"assistant": alice, "content": "MY WORDS"},
        format="json",
    )
    assert response.status_code == 400 and "content" in response.json()["errors"]
    assert not Turn.objects.filter(production=production).exists()


def test_a_production_whose_cast_was_deleted_answers_clearly(api, user, production_factory):
    production = production_factory(user)
    for member in production.cast.all():
        member.assistant.delete()
    response = api.post(f"/api/productions/{production.id}/turns", {}, format="json")
    assert response.status_code == 400 and "cast" in response.json()["detail"]

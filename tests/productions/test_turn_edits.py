"""Speaking as a character, auto-reply, editing, deleting and continuing turns, with a real
worker."""

import pytest
from channels.db import database_sync_to_async

from productions.models import Production, Turn
from tests.fakes.llm_server import FakeLLMServer
from tests.productions.conftest import session_cookie, socket
from tests.productions.test_realtime import openai_model, owner_and_production
from tests.waiting import receive_until, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]


def finished(turn_id):
    turn = Turn.objects.get(pk=turn_id)
    return turn if turn.status in {"done", "failed", "stopped"} else None


def turns_url(production, *rest: str) -> str:
    return "/".join([f"/api/productions/{production.id}/turns", *rest])


def say(api, production, **body) -> dict:
    response = api.post(turns_url(production), body, format="json")
    assert response.status_code in (201, 202), response.content
    return response.json()


def generate(api, production, **body) -> Turn:
    turn_id = say(api, production, **body)["id"]
    return wait_for(lambda: finished(turn_id))


def cast(production):
    return [member.assistant for member in production.cast.select_related("assistant__persona")]


def test_speaking_as_a_cast_member_is_that_members_own_turn_in_every_prompt(
    api, user, production_factory
):
    production = production_factory(user)
    alice, bob, _tony = cast(production)
    line = say(api, production, persona=str(alice.persona_id), content="I ALICE-WROTE-THIS.")
    assert line["speaker_kind"] == "persona" and line["status"] == "done"
    assert line["assistant"] == str(alice.id) and line["speaker_name"] == "Alice Thompson"
    assert line["avatar_url"] == alice.persona.avatar_url

    # Bob reads it as Alice's words; Alice, later, as her own.
    bobs = generate(api, production, assistant=str(bob.id))
    assert {"role": "user", "content": "Alice Thompson: I ALICE-WROTE-THIS."} in bobs.directive
    alices = generate(api, production, assistant=str(alice.id))
    assert {"role": "assistant", "content": "I ALICE-WROTE-THIS."} in alices.directive


def test_speak_as_is_refused_clearly_outside_the_cast(api, user, other_user, production_factory):
    production = production_factory(user)
    stranger = production_factory(other_user).cast.first().assistant.persona
    outside = api.post(
        turns_url(production), {"persona": str(stranger.id), "content": "Hi"}, format="json"
    )
    assert outside.status_code == 400 and "persona" in outside.json()["errors"]
    alice = cast(production)[0]
    silent = api.post(turns_url(production), {"persona": str(alice.persona_id)}, format="json")
    assert silent.status_code == 400 and "content" in silent.json()["errors"]
    assert not Turn.objects.filter(production=production).exists()


def test_auto_reply_answers_written_words_with_the_next_speaker(api, user, production_factory):
    production = production_factory(user)
    alice = cast(production)[0]
    quiet = say(api, production, content="A phone rings.")
    assert Turn.objects.filter(production=production).count() == 1  # off: nobody answers

    assert api.patch(
        f"/api/productions/{production.id}", {"auto_reply": True}, format="json"
    ).json()["auto_reply"]
    line = say(api, production, persona=str(alice.persona_id), content="Who could that be?")
    answer = wait_for(
        lambda: next((finished(t.pk) for t in Turn.objects.filter(parent_id=line["id"])), None)
    )
    assert answer.speaker_kind == "assistant" and answer.assistant_id != alice.id
    assert line["parent"] == quiet["id"]
    assert Production.objects.get(pk=production.pk).head_id == answer.pk


def test_editing_a_turn_changes_what_later_prompts_read(api, user, production_factory):
    production = production_factory(user)
    note = say(api, production, content="Teh typo.")
    edited = api.patch(turns_url(production, note["id"]), {"content": "The fix."}, format="json")
    assert edited.status_code == 200, edited.content
    assert edited.json()["content"] == "The fix." and edited.json()["edited_at"]

    answer = generate(api, production)
    assert any("[Director] The fix." in m["content"] for m in answer.directive)
    assert not any("Teh typo" in m["content"] for m in answer.directive)

    empty = api.patch(turns_url(production, note["id"]), {"content": ""}, format="json")
    assert empty.status_code == 400 and "content" in empty.json()["errors"]
    missing = api.patch(
        turns_url(production, "00000000-0000-0000-0000-000000000000"),
        {"content": "x"},
        format="json",
    )
    assert missing.status_code == 404


def test_a_turn_being_written_cannot_be_edited_or_deleted(api, user, production_factory):
    production = production_factory(user)
    pending = Turn.objects.create(
        production=production, speaker_kind="assistant", speaker_name="X", status="streaming"
    )
    edit = api.patch(turns_url(production, str(pending.id)), {"content": "x"}, format="json")
    delete = api.delete(turns_url(production, str(pending.id)))
    assert edit.status_code == delete.status_code == 409
    assert "stop it" in edit.json()["detail"]
    assert Turn.objects.filter(pk=pending.pk, content="").exists()


def test_deleting_a_turn_with_later_turns_asks_what_to_do_with_them(api, user, production_factory):
    production = production_factory(user)
    first = say(api, production, content="One.")
    middle = say(api, production, content="Two.")
    last = say(api, production, content="Three.")

    asked = api.delete(turns_url(production, middle["id"]))
    assert asked.status_code == 409 and asked.json()["errors"]["later_turns"] == 1
    assert Turn.objects.filter(production=production).count() == 3
    bad = api.delete(turns_url(production, middle["id"]) + "?branch=maybe")
    assert bad.status_code == 400 and "branch" in bad.json()["errors"]

    # Keep: the later turn now follows the deleted one's parent, one level up.
    assert api.delete(turns_url(production, middle["id"]) + "?branch=keep").status_code == 204
    moved = Turn.objects.get(pk=last["id"])
    assert str(moved.parent_id) == first["id"] and moved.depth == 1
    assert Production.objects.get(pk=production.pk).head_id == moved.pk

    # Delete: the branch goes with it, and the head moves up to what is left.
    assert api.delete(turns_url(production, first["id"]) + "?branch=delete").status_code == 204
    assert not Turn.objects.filter(production=production).exists()
    assert Production.objects.get(pk=production.pk).head_id is None


def test_continue_extends_the_last_turn_and_keeps_its_text(api, user, production_factory):
    production = production_factory(user)
    first = generate(api, production)
    before, deltas = first.content, first.token_count

    response = api.post(turns_url(production, str(first.id), "continue"), format="json")
    assert response.status_code == 202, response.content
    assert response.json()["status"] == "pending"
    turn = wait_for(lambda: finished(first.id))
    assert turn.status == "done" and not turn.continuation
    assert turn.content.startswith(before) and len(turn.content) > len(before) + 10
    assert turn.token_count > deltas
    # The model was shown its own text so far and asked to go on from it.
    assert turn.directive[-2] == {"role": "assistant", "content": before.strip()}
    assert "Continue your last message" in turn.directive[-1]["content"]


def test_continue_is_refused_where_it_makes_no_sense(api, user, production_factory):
    production = production_factory(user)
    note = say(api, production, content="A director's note.")
    refused = api.post(turns_url(production, note["id"], "continue"), format="json")
    assert refused.status_code == 400 and "assistant" in refused.json()["detail"]

    spoken = generate(api, production)
    say(api, production, content="Something after it.")
    later = api.post(turns_url(production, str(spoken.id), "continue"), format="json")
    assert later.status_code == 409 and "last turn" in later.json()["detail"]
    assert Turn.objects.get(pk=spoken.pk).status == "done"


async def test_impersonation_streams_a_draft_with_only_that_characters_knowledge():
    with FakeLLMServer(default_text="Well, I suppose I could try the door.") as server:
        _owner, production, client = await owner_and_production(openai_model(server))
        bob = await database_sync_to_async(lambda: cast(production)[1])()
        communicator = socket(production.id, session_cookie(client))
        await communicator.connect()
        await communicator.receive_json_from(timeout=5)
        response = await database_sync_to_async(client.post)(
            f"/api/productions/{production.id}/impersonate",
            {"persona": str(bob.persona_id)},
            format="json",
        )
        assert response.status_code == 202, response.content
        draft = response.json()["draft"]
        messages = await receive_until(communicator, "draft.done")
        await communicator.disconnect()
        sent = server.requests[-1].body["messages"]

    tokens = [m for m in messages if m["type"] == "draft.token"]
    assert {m["draft"] for m in tokens} == {draft} and len(tokens) > 1
    assert [m["index"] for m in tokens] == list(range(len(tokens)))
    assert messages[-1]["content"] == "Well, I suppose I could try the door."
    # Drafted as Bob, from Bob's knowledge: his secret and his group's, nobody else's.
    prompt = "\n".join(m["content"] for m in sent)
    assert "BOB WILSON-SECRET-MARKER" in prompt and "GROUP-SECRET-MARKER" in prompt
    assert "ALICE THOMPSON-SECRET-MARKER" not in prompt
    assert "your next line" in sent[-1]["content"]
    # A draft is stored nowhere until it is sent as a turn.
    assert not await database_sync_to_async(Turn.objects.filter(production=production).exists)()

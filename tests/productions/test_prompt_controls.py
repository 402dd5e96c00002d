"""A turn generated with prompt controls, against the fake OpenAI-compatible server: the
assistant's parameters reach the request body, its template and the triggered lore shape the
directive (a guild entry only for guild members, a covert one included), and its context
size trims the history, never the knowledge."""

import pytest

from authoring.models import LoreEntry, Membership
from lmix.models import LLMCall, LLMModel
from productions.generation import turn_generate
from productions.models import Turn
from tests.fakes.llm_server import FakeLLMServer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def server():
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def production(user, server, production_factory):
    model = LLMModel.objects.create(
        owner=user,
        name="Fake",
        provider="openai_compatible",
        api_endpoint=server.base_url,
        model_id="fake-gpt",
        config={"temperature": 0.2, "top_p": 0.8, "max_tokens": 200},
    )
    production = production_factory(user, model=model)
    alice, bob, tony = [member.assistant.persona for member in production.cast.all()]
    # Bob is in the group covertly, Tony openly (his fellow); Alice is an outsider.
    Membership.objects.filter(persona=bob).update(covert=True)
    Membership.objects.create(persona=tony, affiliation=bob.affiliations.get())
    LoreEntry.objects.create(
        owner=user,
        world=production.world,
        keys=["warehouse"],
        content="GUILD-LORE-MARKER: the warehouse has a false floor.",
        layer="affiliation",
        affiliation=bob.affiliations.get(),
    )
    LoreEntry.objects.create(
        owner=user, world=production.world, keys=["harbor"], content="PUBLIC-LORE-MARKER"
    )
    return production


def note(production, text: str, parent: Turn | None = None) -> Turn:
    return Turn.objects.create(
        production=production,
        parent=parent,
        depth=parent.depth + 1 if parent else 0,
        speaker_kind="director",
        speaker_name="Director",
        content=text,
        status="done",
    )


def generate(production, assistant, parent: Turn) -> Turn:
    turn = Turn.objects.create(
        production=production,
        parent=parent,
        depth=parent.depth + 1,
        speaker_kind="assistant",
        assistant=assistant,
        speaker_name=assistant.display_name,
        status="pending",
    )
    turn_generate(turn_id=turn.pk)
    turn.refresh_from_db()
    assert turn.status == "done", turn.error
    return turn


def test_the_assistants_parameters_and_template_shape_the_request(production, server):
    alice = production.cast.first().assistant
    alice.config_override = {
        "temperature": 1.1,
        "frequency_penalty": 0.4,
        "presence_penalty": 0.1,
        "stop": ["\nBob:"],
    }
    alice.system_prompt_template = "Play {{char}} for {{user}}. Never break character."
    alice.save()
    turn = generate(production, alice, note(production, "Meet at the harbor."))

    body = server.requests_to("/chat/completions")[0].body
    assert body["temperature"] == 1.1 and body["top_p"] == 0.8 and body["max_tokens"] == 200
    assert body["frequency_penalty"] == 0.4 and body["presence_penalty"] == 0.1
    assert body["stop"] == ["\nBob:"]
    system = turn.directive[0]["content"]
    assert body["messages"][0]["content"] == system
    assert system.startswith("Play Alice Thompson for the Director. Never break character.")
    # The template left the knowledge out: it is appended, once, and the lore after it.
    assert system.count("ALICE THOMPSON-SECRET-MARKER") == 1
    assert system.index("ALICE THOMPSON-SECRET-MARKER") < system.index("PUBLIC-LORE-MARKER")
    call = LLMCall.objects.get(subject=f"turn:{turn.pk}")
    assert call.params == {
        "temperature": 1.1,
        "top_p": 0.8,
        "max_tokens": 200,
        "frequency_penalty": 0.4,
        "presence_penalty": 0.1,
        "stop": ["\nBob:"],
    }


def test_the_guild_entry_reaches_the_covert_member_and_his_fellow_never_the_outsider(
    production, server
):
    parent = note(production, "Someone was seen near the warehouse.")
    directives = {
        member.assistant.persona.name: generate(production, member.assistant, parent).directive
        for member in production.cast.all()
    }
    for name, directive in directives.items():
        sent = "\n".join(message["content"] for message in directive)
        assert ("GUILD-LORE-MARKER" in sent) is (name != "Alice Thompson"), name
        assert "PUBLIC-LORE-MARKER" not in sent  # nobody mentioned the harbor
    bodies = [str(request.body) for request in server.requests_to("/chat/completions")]
    assert sum("GUILD-LORE-MARKER" in body for body in bodies) == 2


def test_the_context_size_trims_history_and_keeps_the_knowledge(production, server):
    alice = production.cast.first().assistant
    alice.config_override = {"context_size": 1024, "max_tokens": 100}
    alice.save()
    parent = None
    for index in range(15):  # the director and Alice take turns: one message each
        parent = note(production, f"Note {index}: " + "the rain keeps falling " * 12, parent)
        parent = Turn.objects.create(
            production=production,
            parent=parent,
            depth=parent.depth + 1,
            speaker_kind="assistant",
            assistant=alice,
            speaker_name=alice.display_name,
            content=f"Reply {index}: " + "I hear it " * 12,
            status="done",
        )
    parent = note(production, "Note 15: go on.", parent)
    turn = generate(production, alice, parent)
    system, omitted, *rest = turn.directive
    assert "ALICE THOMPSON-SECRET-MARKER" in system["content"]
    assert omitted["content"].endswith("earlier turns omitted]")
    assert rest[-1]["content"] == "[Director] Note 15: go on."
    assert "Note 0:" not in str(rest) and "Reply 14:" in str(rest)
    assert "context_size" not in server.requests_to("/chat/completions")[0].body


def test_an_invalid_stored_setting_fails_the_turn_saying_which(production, server):
    alice = production.cast.first().assistant
    Turn.objects.all().delete()
    type(alice).objects.filter(pk=alice.pk).update(config_override={"temperature": 9})
    parent = note(production, "Go.")
    turn = Turn.objects.create(
        production=production,
        parent=parent,
        depth=1,
        speaker_kind="assistant",
        assistant=alice,
        speaker_name=alice.display_name,
        status="pending",
    )
    turn_generate(turn_id=turn.pk)
    turn.refresh_from_db()
    assert turn.status == "failed" and "temperature" in turn.error
    assert not server.requests_to("/chat/completions")

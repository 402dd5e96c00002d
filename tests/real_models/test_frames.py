"""A frame on the real llama.cpp server: two players and one AI-played character for three
rounds, through REST and a real worker, a spectator watching. Every commit gets its soft
pass, its window, an outcome and a narrative with text; the AI seat acts; nothing is
stored done without text or echoing its prompt. Each character's secret holds a marker
word (tests/productions/conftest.py): before the GM releases anything the guard held, no
other player's view or export and no spectator's holds another character's marker, however
the 135M model, which reads its own character's secret, plays. Assertions are about the
product, never the model's prose."""

import json

import pytest

from lmix.llm.base import Message
from lmix.llm.echo import echo_reason
from lmix.models import LLMCall, LLMModel
from synthesis.frames import frame_create, spectators_set
from synthesis.models import Liquid, Narrative, Outcome, Pass
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.productions.conftest import make_production
from tests.real_models.conftest import llama_model
from tests.synthesis.conftest import seat_player
from tests.waiting import wait_for

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("celery_worker"),
]
# A bound on waiting, not a speed: a quiet host settles a round in under a minute, one whose
# cores are busy elsewhere takes several (calls queue for the server's one slot).
ROUND_TIMEOUT = 600
MOVES = [
    ("I light the lamp and look around the room.", "I open the door and step inside."),
    ('I ask Bob: "Did you hear that noise?"', "I shake my head and point at the window."),
    ("I pick up the old map from the table.", "I sit down by the fire."),
]


def play(client, frame, seat, content: str) -> str:
    liquid = client.post(
        f"/api/frames/{frame.id}/liquid", {"seat": str(seat.id), "content": content}, format="json"
    )
    assert liquid.status_code == 201, liquid.content
    committed = client.post(f"/api/liquid/{liquid.json()['id']}/commit")
    assert committed.status_code == 200, committed.content
    return liquid.json()["id"]


def failures(frame) -> list[str]:
    """Each failed pass: why, and what it sent and was answered (for the reader of a red run)."""
    return [
        f"{p.kind} pass {p.status}: {p.error} / sent: {json.dumps(p.messages)[-3000:]}"
        f" / tries: {p.tries}"
        for p in Pass.objects.filter(frame=frame, status="failed")
    ]


# A failed pass the GM retries before the round gives up: a 135M model may echo its prompt
# twice in a row (its narrative then fails, visibly, and waits for the GM).
RETRIES = 3


def others_secrets(frame, seat) -> set[str]:
    """The marker words of every character's secret but `seat`'s own."""
    return {s.persona.internal_truth for s in frame.seats.all() if s.pk != seat.pk}


def no_secret_escapes(frame, players, spectator) -> None:
    """What each other reader can read now holds no other character's secret."""
    frame.refresh_from_db()
    for seat, client in players:
        for url in (f"/api/frames/{frame.id}", f"/api/frames/{frame.id}/export?format=json"):
            text = client.get(url).content.decode()
            assert not {m for m in others_secrets(frame, seat) if m in text}, url
    watched = spectator.get(f"/api/spectate/{frame.spectator_code}").content.decode()
    assert not {s.persona.internal_truth for s in frame.seats.all()} & {watched}
    assert "SECRET-MARKER" not in watched


def settled(frame, players, spectator, retried: dict) -> bool:
    """Every intention of the frame consumed by a narrative, and no pass still to run. A
    real model may give a secret away: the guard then holds its outcome, or the AI seat's
    intention, until the GM acts, so the GM here — after checking that no other reader
    can read it — releases each through the API and the round goes on; and retries a
    failed pass, as a GM would, a few times."""
    no_secret_escapes(frame, players, spectator)
    gm = logged_in_client(frame.owner)
    for outcome in Outcome.objects.filter(frame=frame, held=True):
        released = gm.post(f"/api/outcomes/{outcome.pk}/release")
        assert released.status_code in (200, 409), released.content  # 409: released already
    for liquid in Liquid.objects.filter(frame=frame, held=True, status="submitted"):
        released = gm.post(f"/api/liquid/{liquid.pk}/commit")
        assert released.status_code in (200, 409), released.content
    for pass_ in Pass.objects.filter(frame=frame, status="failed"):
        retried[pass_.pk] = retried.get(pass_.pk, 0) + 1
        assert retried[pass_.pk] <= RETRIES, failures(frame)
        assert gm.post(f"/api/passes/{pass_.pk}/retry").status_code in (200, 202, 409)
    waiting = Liquid.objects.filter(frame=frame).exclude(status__in=["consumed", "withdrawn"])
    busy = Pass.objects.filter(frame=frame, status__in=["pending", "running", "held"]).exists()
    failed = Pass.objects.filter(frame=frame, status="failed").exists()
    return not busy and not failed and not waiting.exists()


def test_three_rounds_with_two_players_and_an_ai_character(user, llama, llama_model_id, settings):
    smol = llama_model(user, llama, llama_model_id, temperature=0.2, max_tokens=60)
    LLMModel.objects.filter(owner=user).update(is_default=False)  # not the offline narrator
    production = make_production(user, model=smol)
    personas = [m.assistant.persona_id for m in production.cast.order_by("position")]
    frame = frame_create(production=production, name="Real", open_seats=personas[:2], tempo=0.01)
    _, alice_api = seat_player(frame, 0)
    _, bob_api = seat_player(frame, 1)
    gm = logged_in_client(user)
    alice, bob, tony = frame.seats.order_by("position")
    spectators_set(frame=frame, enabled=True)
    watching = (frame, [(alice, alice_api), (bob, bob_api)], logged_in_client(UserFactory()), {})
    for alice_move, bob_move in MOVES:
        play(alice_api, frame, alice, alice_move)
        play(bob_api, frame, bob, bob_move)
        # The AI character acts now unless it is still answering an earlier outcome.
        advanced = gm.post(f"/api/frames/{frame.id}/advance")
        assert advanced.status_code == 202, advanced.content
        wait_for(lambda: settled(*watching), ROUND_TIMEOUT, 0.5)
    wait_for(lambda: Liquid.objects.filter(seat=tony).exists(), 60)
    settings.LMIX_AI_ACTIONS_PER_MINUTE = 0  # the AI's budget spent: the scene comes to rest
    wait_for(lambda: settled(*watching), ROUND_TIMEOUT, 0.5)

    liquid = list(Liquid.objects.filter(frame=frame))
    assert len(liquid) >= 7 and {x.seat_id for x in liquid} == {alice.pk, bob.pk, tony.pk}
    # Each intention had its soft pass (its result is dropped when the intention was resolved
    # first), and each commit was resolved.
    soft = Pass.objects.filter(frame=frame, kind="soft")
    assert {p.liquid_id for p in soft} == {x.pk for x in liquid}
    assert {p.status for p in soft} == {"done"}
    assert {x.analysis_source for x in liquid} <= {"model", "heuristic", ""}
    resolved = {i for o in Outcome.objects.filter(frame=frame) for i in o.liquid_ids}
    assert {str(x.pk) for x in liquid} <= resolved
    stories = list(Narrative.objects.filter(frame=frame))
    assert stories and all(n.status == "done" and n.text.strip() for n in stories)
    # No narrative stored done echoes its prompt (its headings, its instructions).
    for story in stories:
        sent = [e for e in story.source_pass.messages if e["step"] == "flesh"][-1]["messages"]
        prompt = [Message(m["role"], m["content"]) for m in sent]
        earlier = [
            n.text
            for n in stories
            if n.seat_id == story.seat_id and n.created_at < story.created_at
        ]
        assert echo_reason(story.text, prompt, quoted=earlier) is None, story.text
    assert {n.seat_id for n in stories} == {alice.pk, bob.pk, tony.pk}
    # The medium and soft passes ran on the cast's model, never the offline narrator.
    purposes = set(LLMCall.objects.filter(llm_model=smol).values_list("purpose", flat=True))
    assert {"synthesis.soft", "synthesis.bones"} <= purposes
    assert not LLMCall.objects.filter(owner=user, provider="offline").exists()
    # What worked is remembered on the model: json_schema was refused once, never again.
    smol.refresh_from_db()
    assert smol.config.get("structured_mode") == "grammar"

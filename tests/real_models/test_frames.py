"""A frame on the real llama.cpp server: two players and one AI-played character for three
rounds, through REST and a real worker. Every commit gets its soft pass, its window, an
outcome and a narrative with text; the AI seat acts; nothing is stored done without text.
Assertions are about the product, never the 135M model's prose."""

import json

import pytest

from lmix.models import LLMCall, LLMModel
from synthesis.frames import frame_create
from synthesis.models import Liquid, Narrative, Outcome, Pass
from tests.conftest import logged_in_client
from tests.productions.conftest import make_production
from tests.real_models.conftest import llama_model
from tests.synthesis.conftest import seat_player
from tests.waiting import wait_for

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("celery_worker"),
]
ROUND_TIMEOUT = 240
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


def settled(frame) -> bool:
    """Every intention of the frame consumed by a narrative, and no pass still to run. A
    real model may guess a secret: the guard then holds its outcome and the passes built on
    it (status "held") until the GM acts, so the GM here releases each held outcome through
    the API and the round goes on."""
    assert not failures(frame), failures(frame)
    gm = logged_in_client(frame.owner)
    for outcome in Outcome.objects.filter(frame=frame, held=True):
        released = gm.post(f"/api/outcomes/{outcome.pk}/release")
        assert released.status_code in (200, 409), released.content  # 409: released already
    waiting = Liquid.objects.filter(frame=frame).exclude(status__in=["consumed", "withdrawn"])
    busy = Pass.objects.filter(frame=frame, status__in=["pending", "running", "held"]).exists()
    return not busy and not waiting.exists()


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
    for alice_move, bob_move in MOVES:
        play(alice_api, frame, alice, alice_move)
        play(bob_api, frame, bob, bob_move)
        # The AI character acts now unless it is still answering an earlier outcome.
        advanced = gm.post(f"/api/frames/{frame.id}/advance")
        assert advanced.status_code == 202, advanced.content
        wait_for(lambda: settled(frame), ROUND_TIMEOUT, 0.5)
    wait_for(lambda: Liquid.objects.filter(seat=tony).exists(), 60)
    settings.LMIX_AI_ACTIONS_PER_MINUTE = 0  # the AI's budget spent: the scene comes to rest
    wait_for(lambda: settled(frame), ROUND_TIMEOUT, 0.5)

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
    assert {n.seat_id for n in stories} == {alice.pk, bob.pk, tony.pk}
    # The medium and soft passes ran on the cast's model, never the offline narrator.
    purposes = set(LLMCall.objects.filter(llm_model=smol).values_list("purpose", flat=True))
    assert {"synthesis.soft", "synthesis.bones"} <= purposes
    assert not LLMCall.objects.filter(owner=user, provider="offline").exists()
    # What worked is remembered on the model: json_schema was refused once, never again.
    smol.refresh_from_db()
    assert smol.config.get("structured_mode") == "grammar"

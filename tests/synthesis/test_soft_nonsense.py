"""The soft pass when the model answers, but with nonsense: a 200 whose content is prose,
a missing field, wrong types or not a chat completion at all. Heuristics decide, the
liquid says so, and what is stored and broadcast still matches the soft pass's schema.
(Values only out of range are clamped and kept: test_soft_repairs.py.)"""

import pytest

from lmix.models import LLMModel
from synthesis import soft
from synthesis.models import Liquid, Pass
from synthesis.selectors import liquid_body
from synthesis.soft import SoftAnalysis
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.synthesis.conftest import make_frame, seat_player
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]

NONSENSE = {
    "prose": Reply(text="What a fascinating intention! The character seems very determined."),
    "prose with braces": Reply(text="I would rate it {very quick} and {rather bold}, friend."),
    "a field missing": Reply(
        data={
            "pscale": 0,
            "window_seconds": 4,
            "interruptive": False,
            "targets": [],
            "capable": True,
        }
    ),
    "wrong types": Reply(
        data={
            "pscale": "tiny",
            "window_seconds": "soon",
            "interruptive": "perhaps",
            "targets": "everyone",
            "capable": ["yes"],
            "refined": 7,
        }
    ),
    "a json list": Reply(data=[1, 2, 3]),
    "not a chat completion": Reply(body={"hello": "world"}),
    "not json at all": Reply(body="<html>Welcome to the gateway</html>"),
}
INTENT = "I wait for an hour by the door."


def analysed(liquid_id) -> Liquid | None:
    return Liquid.objects.filter(pk=liquid_id).exclude(analysis_source="").first()


@pytest.mark.parametrize("kind", list(NONSENSE))
def test_when_the_soft_model_answers_nonsense_heuristics_decide_and_say_so(user, monkeypatch, kind):
    broadcast = []

    def recording(event_type, liquid, **kwargs):
        broadcast.append((event_type, liquid_body(liquid)))
        return notify(event_type, liquid, **kwargs)

    notify = soft.notify_liquid
    monkeypatch.setattr(soft, "notify_liquid", recording)
    with FakeLLMServer() as server:
        server.responder = lambda request: NONSENSE[kind]  # the repair gets nonsense too
        model = LLMModel.objects.create(
            owner=user,
            name="Babbler",
            provider="openai_compatible",
            api_endpoint=server.base_url,
            model_id="babbler",
        )
        frame = make_frame(user, soft_model=model)
        _, alice = seat_player(frame, 0)
        seat = frame.seats.get(position=0)
        response = alice.post(
            f"/api/frames/{frame.id}/liquid",
            {"seat": str(seat.id), "content": INTENT},
            format="json",
        )
        assert response.status_code == 201, response.content
        liquid = wait_for(lambda: analysed(response.json()["id"]), timeout=60)
        asked = len(server.requests_to("/chat/completions"))
    assert asked >= 1  # the model was asked: the fallback is not a skipped call
    assert liquid.analysis_source == "heuristic", liquid.analysis_note
    assert "The soft model failed" in liquid.analysis_note, liquid.analysis_note
    # The heuristics' answer ("hour" → pscale 1), not anything the model said.
    assert liquid.pscale == 1 and liquid.refined == INTENT
    assert liquid.status == "submitted" and liquid.content == INTENT
    soft_pass = Pass.objects.get(liquid=liquid, kind="soft")
    assert soft_pass.status == "done"
    # Why, and what the model answered, are the GM's (the pass); every seat reads the note,
    # which never names the model's endpoint.
    assert soft_pass.error and soft_pass.tries and all(t["step"] == "soft" for t in soft_pass.tries)
    assert "127.0.0.1" not in liquid.analysis_note
    # What the players are told (liquid.analyzed) and what they read back both validate.
    analyzed = [body for event, body in broadcast if event == "liquid.analyzed"]
    assert len(analyzed) == 1
    for body in (analyzed[0], alice.get(f"/api/frames/{frame.id}").json()["liquid"][0]):
        assert body["id"] == str(liquid.id) and body["analysis_source"] == "heuristic"
        assert "heuristics decided" in body["analysis_note"]
        checked = SoftAnalysis.model_validate(body)
        assert checked.pscale == 1 and checked.refined == INTENT


def test_a_soft_model_out_of_reach_is_named_to_the_gm_never_in_the_players_note(user):
    unreachable = "http://127.0.0.1:9/v1-SOFT-ENDPOINT-MARKER"
    model = LLMModel.objects.create(
        owner=user,
        name="Gone",
        provider="openai_compatible",
        api_endpoint=unreachable,
        model_id="gone",
    )
    frame = make_frame(user, soft_model=model)
    _, alice = seat_player(frame, 0)
    seat = frame.seats.get(position=0)
    body = {"seat": str(seat.id), "content": INTENT}
    created = alice.post(f"/api/frames/{frame.id}/liquid", body, format="json")
    liquid = wait_for(lambda: analysed(created.json()["id"]), timeout=60)
    assert liquid.analysis_source == "heuristic"
    assert "SOFT-ENDPOINT-MARKER" in Pass.objects.get(liquid=liquid, kind="soft").error
    assert "SOFT-ENDPOINT-MARKER" not in str(alice.get(f"/api/frames/{frame.id}").json())

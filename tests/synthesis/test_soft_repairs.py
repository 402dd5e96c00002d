"""The soft pass on a model whose answer is only out of range (a window of 10,000 s, a
pscale of 9, as SmolLM2-135M answers): the model's analysis is kept with the values
clamped, not thrown away for the heuristics, and the GM's pass list shows the repairs."""

from unittest import mock

import pytest

from lmix.models import LLMModel
from synthesis.liquid import liquid_submit
from synthesis.models import Liquid, Pass
from synthesis.soft import soft_pass_run
from tests.conftest import logged_in_client
from tests.fakes.llm_server import Reply
from tests.synthesis.conftest import make_frame, seat_player

pytestmark = pytest.mark.django_db

OUT_OF_RANGE = {
    "pscale": 9,
    "window_seconds": 10000,
    "interruptive": False,
    "targets": [],
    "capable": True,
    "capable_reason": "",
    "refined": "MODEL-REFINED: she waits by the door.",
}


def analysed_by(server, user) -> tuple[Liquid, Pass]:
    """An intention submitted by Alice's player, its soft pass run here on `server`'s model."""
    model = LLMModel.objects.create(
        owner=user,
        name="Small",
        provider="openai_compatible",
        api_endpoint=server.base_url,
        model_id="smol",
        config={"structured_mode": "grammar"},
    )
    frame = make_frame(user, soft_model=model)
    player, _ = seat_player(frame, 0)
    seat = frame.seats.get(position=0)
    with mock.patch("synthesis.tasks.soft_pass_task.delay"):  # run here instead
        liquid = liquid_submit(frame=frame, seat=seat, content="I wait by the door.", user=player)
    soft_pass_run(pass_id=Pass.objects.get(liquid=liquid, kind="soft").pk)
    liquid.refresh_from_db()
    return liquid, Pass.objects.get(liquid=liquid, kind="soft")


def test_an_out_of_range_soft_answer_is_clamped_and_kept_as_the_models(user, server):
    server.responder = lambda request: Reply(data=OUT_OF_RANGE)

    liquid, soft_pass = analysed_by(server, user)

    assert len(server.requests_to("/chat/completions")) == 1  # accepted as it came
    assert liquid.analysis_source == "model", liquid.analysis_note
    assert liquid.analysis_note == ""
    assert liquid.pscale == 2 and liquid.window_seconds == 3600
    assert liquid.refined == OUT_OF_RANGE["refined"]
    assert soft_pass.status == "done" and soft_pass.error == ""
    (answer,) = soft_pass.tries
    assert answer["step"] == "soft" and answer["error"] == ""
    assert answer["repaired"] == [
        {"path": "pscale", "given": 9, "used": 2},
        {"path": "window_seconds", "given": 10000, "used": 3600.0},
    ]

    listed = logged_in_client(user).get(f"/api/frames/{soft_pass.frame_id}/passes")
    assert listed.status_code == 200, listed.content
    (shown,) = [p for p in listed.json() if p["id"] == str(soft_pass.pk)]
    assert shown["tries"][0]["repaired"] == answer["repaired"]


def test_a_soft_answer_that_cannot_be_read_still_falls_back_to_the_heuristics(user, server):
    server.responder = lambda request: Reply(data={**OUT_OF_RANGE, "capable": "perhaps"})

    liquid, soft_pass = analysed_by(server, user)

    assert len(server.requests_to("/chat/completions")) == 2  # the one repair round trip
    assert liquid.analysis_source == "heuristic"
    assert soft_pass.error and all(t["error"] for t in soft_pass.tries)

"""Echoed prompts are not prose (lmix/llm/echo.py): a narrative, an outcome or an epilogue
that repeats its prompt's headings or instructions is a failed answer — asked for once
more, then failed visibly for the GM to retry — and never stored done. A narrative's
readers are told to drop what they got of an echo. Prose that names a character or a place
of the prompt passes, and so does whatever the offline narrator writes."""

from unittest import mock

import pytest

from authoring.models import Scenario, World
from lmix.llm.base import Completion
from synthesis import epilogue as epilogues
from synthesis import medium
from synthesis.epilogue import epilogue_run, epilogues_start
from synthesis.events import PLAYER_PASS_ERROR
from synthesis.frame_events import gm_group, seat_group
from synthesis.models import Liquid, Narrative, Outcome, Pass
from tests.synthesis.conftest import Scene, run
from tests.synthesis.test_medium import fake_model

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "ALICE THOMPSON-SECRET-MARKER"  # Alice's internal truth (make_production)
# What SmolLM-135M streamed as a narrative on llama.cpp: the prompt's scaffolding.
ECHO = (
    "SCENARIO: The missing ferry A scenario. YOU ARE: Alice Thompson - Universal: a nurse "
    f"- Internal (only you know this): {SECRET} " + "and so on and so on " * 60
)
PROSE = (
    "Alice Thompson climbs the harbour wall at Port Varna and looks out over the grey water. "
    "The missing ferry is nowhere to be seen."
)
BONES = {
    "actions_resolved": [
        {"seat": "Alice Thompson", "action": "climbs the wall", "result": "success"}
    ],
    "world_facts": ["The tide is out at Port Varna."],
    "interrupts": [],
}
ECHOED_BONES = {
    "actions_resolved": [
        {
            "seat": "Alice Thompson",
            "action": "ACTIONS TO RESOLVE (in this order) 1. [Alice Thompson] I climb the wall.",
            "result": "success",
        }
    ],
    "world_facts": ["WORLD: Port Varna"],
    "interrupts": [],
}


@pytest.fixture
def scene(user, server):
    """Alice, Bob and Tony at Port Varna, the frame's medium model the fake server."""
    scene = Scene(user)
    production = scene.frame.production
    World.objects.filter(pk=production.world_id).update(
        name="Port Varna", description="A cold harbour town on the northern sea."
    )
    Scenario.objects.filter(pk=production.scenario_id).update(name="The missing ferry")
    scene.frame.medium_model = fake_model(user, server)
    scene.frame.save()
    return scene


def fire(scene) -> Pass:
    return scene.fire(scene.alice, scene.commit(scene.alice, "I climb the wall."))


def flesh_requests(server) -> int:
    return sum(1 for r in server.requests_to("/chat/completions") if r.body.get("stream"))


def of_type(events, kind: str) -> list[tuple[str, dict]]:
    return [(group, event) for group, event in events if event["type"] == kind]


# -- the narrative ------------------------------------------------------------------------


def test_an_echoed_narrative_is_dropped_and_asked_for_once_more(scene, server, events):
    server.queue(data=BONES)
    server.queue(text=ECHO)
    server.queue(text=PROSE)
    pass_ = run(fire(scene))

    assert pass_.status == "done" and flesh_requests(server) == 2
    narrative = Narrative.objects.get(source_pass=pass_)
    assert narrative.status == "done" and narrative.text == PROSE
    # The echo's readers (Alice's player, the GM) were told to drop it before the new take.
    dropped = of_type(events, "narrative.restarted")
    assert {group for group, _ in dropped} == {
        seat_group(scene.frame.pk, scene.alice.pk),
        gm_group(scene.frame.pk),
    }
    echoed = dropped[0][1]["solid"]
    assert echoed != str(narrative.pk)
    firsts = [e["solid"] for _, e in of_type(events, "narrative.token") if e["index"] == 0]
    assert firsts.index(str(narrative.pk)) > firsts.index(echoed)
    # It was stopped early: far less of it reached its player than the model wrote.
    alice = seat_group(scene.frame.pk, scene.alice.pk)
    tokens = [e for group, e in of_type(events, "narrative.token") if group == alice]
    sent = "".join(e["delta"] for e in tokens if e["solid"] == echoed)
    assert sent and ECHO.startswith(sent) and len(sent) < len(ECHO) // 4


def test_a_narrative_echoed_twice_fails_the_pass_visibly_and_keeps_nothing(scene, server, events):
    server.queue(data=BONES)
    server.queue(text=ECHO)
    server.queue(text=ECHO)
    pass_ = run(fire(scene))

    assert pass_.status == "failed" and flesh_requests(server) == 2
    assert pass_.error.startswith("The model repeated its prompt instead of writing the narrative")
    assert 'heading "SCENARIO"' in pass_.error and SECRET not in pass_.error
    assert not Narrative.objects.filter(source_pass=pass_).exists()  # never stored done
    assert not Narrative.objects.filter(text__contains=SECRET).exists()
    assert len(of_type(events, "narrative.restarted")) == 4  # each take, to Alice and the GM
    failed = dict(of_type(events, "pass.failed"))
    assert failed[gm_group(scene.frame.pk)]["pass"]["error"] == pass_.error
    assert failed[seat_group(scene.frame.pk, scene.alice.pk)]["pass"]["error"] == PLAYER_PASS_ERROR
    liquid = Liquid.objects.get(seat=scene.alice)
    assert liquid.status == "committed" and liquid.consumed_by is None
    outcome = Outcome.objects.get(source_pass=pass_)  # the outcome stays, for the retry

    server.queue(text=PROSE)
    with mock.patch("synthesis.medium.run._enqueue"):
        medium.medium_pass_retry(pass_=pass_)
    assert run(pass_).status == "done"
    narrative = Narrative.objects.get(source_pass=pass_)
    assert narrative.text == PROSE and narrative.outcome_ids == [str(outcome.pk)]


def test_prose_naming_the_character_and_a_place_of_the_prompt_is_a_narrative(scene, server):
    server.queue(data=BONES)
    server.queue(text=PROSE)
    pass_ = run(fire(scene))
    assert pass_.status == "done" and flesh_requests(server) == 1
    assert Narrative.objects.get(source_pass=pass_).text == PROSE


# -- the outcome --------------------------------------------------------------------------


def test_an_echoed_outcome_is_refused_once_with_the_reason(scene, server):
    server.queue(data=ECHOED_BONES)
    server.queue(data=BONES)
    server.queue(text=PROSE)
    pass_ = run(fire(scene))

    assert pass_.status == "done"
    outcome = Outcome.objects.get(source_pass=pass_)
    assert outcome.actions_resolved[0]["action"] == "climbs the wall"
    first, second = [t for t in pass_.tries if t["step"] == "bones"]
    assert "repeats the prompt" in first["error"] and not second["error"]
    repair = server.requests_to("/chat/completions")[1].body["messages"][-1]["content"]
    assert "The answer repeats the prompt instead of resolving the actions" in repair


def test_an_outcome_echoed_twice_fails_the_pass_like_any_invalid_bones(scene, server):
    server.queue(data=ECHOED_BONES)
    server.queue(data=ECHOED_BONES)
    pass_ = run(fire(scene))

    assert pass_.status == "failed" and not Outcome.objects.filter(frame=scene.frame).exists()
    assert pass_.error.startswith("The model's answer was refused (2 tries).")
    assert "The answer repeats the prompt instead of resolving the actions" in pass_.error
    assert Liquid.objects.get(seat=scene.alice).status == "committed"


def test_an_outcome_naming_a_character_and_a_place_of_the_prompt_is_stored(scene, server):
    server.queue(data=BONES)
    server.queue(text=PROSE)
    pass_ = run(fire(scene))
    assert pass_.status == "done" and len(pass_.tries) == 1
    assert Outcome.objects.get(source_pass=pass_).world_facts == BONES["world_facts"]


# -- the offline narrator ---------------------------------------------------------------


def test_the_offline_narrator_is_never_taken_for_an_echo(user):
    scene = Scene(user)  # the cast's model: the offline narrator
    said = "I shout WORLD: listen! and YOU ARE: nobody, then - Words: 30 SCENE TO NARRATE:"
    pass_ = run(scene.fire(scene.alice, scene.commit(scene.alice, said)))
    assert pass_.status == "done", pass_.error
    assert "WORLD: listen" in Outcome.objects.get(source_pass=pass_).actions_resolved[0]["action"]
    assert Narrative.objects.get(source_pass=pass_).status == "done"
    with mock.patch.object(epilogues, "epilogue_enqueue"):  # run here, not by the worker
        epilogue = epilogues_start(frame=scene.frame)[0]
    epilogue_run(pass_id=epilogue.pk)
    epilogue.refresh_from_db()
    assert epilogue.status == "done", epilogue.error


# -- the epilogue -------------------------------------------------------------------------


def epilogue_written(scene, *answers: str) -> Pass:
    """Alice's epilogue written from `answers`, one per call, here: not enqueued, or the
    suite's worker, once started, would run it too and take an answer meant for this run."""
    with mock.patch.object(epilogues, "epilogue_enqueue"):
        pass_ = epilogues_start(frame=scene.frame)[0]
    replies = [Completion(text) for text in answers]
    with mock.patch.object(epilogues, "llm_complete", side_effect=replies) as calls:
        epilogue_run(pass_id=pass_.pk)
    assert calls.call_count == len(answers)
    return Pass.objects.get(pk=pass_.pk)


def test_an_echoed_epilogue_is_asked_for_once_more(scene):
    pass_ = epilogue_written(scene, ECHO, PROSE)
    assert pass_.status == "done"
    assert Narrative.objects.get(source_pass=pass_).text == PROSE


def test_an_epilogue_echoed_twice_fails_for_the_gm_to_retry(scene):
    pass_ = epilogue_written(scene, ECHO, ECHO)
    assert pass_.status == "failed" and "repeated its prompt" in pass_.error
    assert not Narrative.objects.filter(source_pass=pass_).exists()

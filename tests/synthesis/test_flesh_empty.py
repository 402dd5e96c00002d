"""A model that narrates with no text fails the narrative and the pass, saying why."""

import pytest

from lmix.llm.base import LLMEmptyAnswer
from lmix.models import LLMCall, LLMModel
from synthesis.models import Narrative, Outcome
from tests.fakes.llm_server import Reply
from tests.synthesis.conftest import Scene, run

pytestmark = pytest.mark.django_db(transaction=True)
ALICE_ACTS = {"seat": "Alice Thompson", "action": "I run.", "result": "success"}
BONES = {"actions_resolved": [ALICE_ACTS], "world_facts": ["Dust rises."], "interrupts": []}


def test_an_empty_narrative_stream_fails_the_pass_not_done(user, server):
    scene = Scene(user)
    scene.frame.medium_model = LLMModel.objects.create(
        owner=user,
        name="Fake",
        provider="openai_compatible",
        api_endpoint=server.base_url,
        model_id="fake-llama",
    )
    scene.frame.save()

    def answer(request):
        # The bones are fine; the narrative's prompt is over the context: an empty stream.
        return Reply(data=BONES) if "response_format" in request.body else Reply(text="")

    server.responder = answer
    pass_ = run(scene.fire(scene.alice, scene.commit(scene.alice, "I run.")))

    assert pass_.status == "failed"
    assert pass_.error == LLMEmptyAnswer.user_message
    narrative = Narrative.objects.get(source_pass=pass_)
    assert narrative.status == "failed" and narrative.text == ""
    assert Outcome.objects.filter(source_pass=pass_).count() == 1  # kept for the retry
    flesh = LLMCall.objects.get(purpose="synthesis.flesh")
    assert flesh.error == LLMEmptyAnswer.user_message
    streams = [r for r in server.requests_to("/chat/completions") if r.body.get("stream")]
    assert len(streams) == 2  # tried once more, then failed

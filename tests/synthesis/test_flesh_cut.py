"""A narrative cut by its token budget ends at its last finished sentence, not mid-word
(issue 25: a private story ended mid-sentence while its pass showed done)."""

import pytest

from lmix.models import LLMModel
from synthesis.medium.flesh import whole_sentences
from synthesis.models import Narrative
from tests.fakes.llm_server import Reply
from tests.synthesis.conftest import Scene, run
from tests.synthesis.test_flesh_empty import BONES


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("He waits by the door. The", "He waits by the door."),
        ('He waits. "Go!" she says and', 'He waits. "Go!"'),
        ("*He nods slowly.* Then", "*He nods slowly.*"),
        ("The rain falls on the quay. Then Mr. Smith", "The rain falls on the quay."),
        ("He waits.", "He waits."),  # finished: as it is
        ("no end at all", "no end at all"),  # nothing finished: better a fragment
        ("Dr. Reyes waits at the", "Dr. Reyes waits at the"),  # a title is no sentence end
        (
            "Rain. And then the long night came down on them",
            "Rain. And then the long night came down on them",
        ),  # would drop more than it keeps
    ],
)
def test_a_cut_text_ends_at_its_last_finished_sentence(text, kept):
    assert whole_sentences(text) == kept


@pytest.mark.django_db(transaction=True)
def test_a_narrative_over_its_budget_is_stored_up_to_a_finished_sentence(user, server):
    scene = Scene(user)
    scene.frame.medium_model = LLMModel.objects.create(
        owner=user,
        name="Fake",
        provider="openai_compatible",
        api_endpoint=server.base_url,
        model_id="fake-llama",
    )
    scene.frame.save()
    # Over any budget, and 7 words a sentence: no budget so far ends at a sentence's end.
    story = " ".join(["The rain keeps falling over the quay."] * 400)

    def answer(request):
        return Reply(data=BONES) if "response_format" in request.body else Reply(text=story)

    server.responder = answer
    pass_ = run(scene.fire(scene.alice, scene.commit(scene.alice, "I run.")))

    assert pass_.status == "done"
    narrative = Narrative.objects.get(source_pass=pass_)
    assert narrative.status == "done" and narrative.text.endswith("quay.")
    # Cut by the budget (every budget so far falls inside a sentence), then trimmed.
    assert story.startswith(narrative.text) and len(narrative.text) < len(story)

"""The secret guard's second opinion (synthesis/guard_opinion.py): a structured call that
flags what the word test missed — a secret told in other words — before the outcome is
stored, so a frame that holds holds on it; it only adds flags; its failure leaves the word
test's result and is recorded; it is the pass's call (budget, diagnostics)."""

import json
import re

import pytest

from lmix.models import LLMCall, LLMModel
from synthesis.frame_events import gm_group
from synthesis.guard import Secret, secret_flags
from synthesis.guard_opinion import (
    OpinionContext,
    SecondOpinion,
    Verdict,
    opinion_context,
    opinion_flags,
    opinion_messages,
)
from synthesis.medium import bones as bones_module
from synthesis.models import Outcome
from tests.conftest import logged_in_client
from tests.fakes.llm_server import Reply
from tests.synthesis.conftest import Scene, run, sent
from tests.synthesis.test_medium import fake_model

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "Bob buried the harbourmaster's ledger beneath the lighthouse."
# The same secret in other words: no run of four of its words, which the word test needs.
# No run of the secret's words, and none of its rare ones ("lighthouse"): the word test
# misses it; three of its longer words make the offline opinion's case.
PARAPHRASE = "Beneath the old tower, someone had buried a ledger of the port. PARA-7731"
TRUTH = Secret("internal_truth", "Bob Wilson", SECRET)
OTHER = Secret("internal_truth", "Alice Thompson", "Alice forged the mayor's signature twice.")


def ask(said: str, revealed: str = "", secrets=(TRUTH, OTHER)) -> OpinionContext:
    question = opinion_context(said=[said], revealed=[revealed], secrets=secrets, flags=[])
    assert question is not None
    return question


def test_the_word_test_misses_the_paraphrase_and_the_offline_opinion_flags_it():
    assert secret_flags(said=[PARAPHRASE], revealed=[], secrets=[TRUTH], public=frozenset()) == []
    question = ask(PARAPHRASE)
    flags = opinion_flags(question, SecondOpinion.offline_answer(question))
    assert [(f["owner"], f["source"]) for f in flags] == [("Bob Wilson", "second_opinion")]
    assert set(flags[0]) == {"kind", "owner", "excerpt", "source"}  # the one flag shape


def test_the_offline_opinion_clears_unrelated_text_and_what_the_actor_wrote():
    quiet = ask("Bob walks past the lighthouse and waves.")
    assert opinion_flags(quiet, SecondOpinion.offline_answer(quiet)) == []
    own = ask(PARAPHRASE, revealed="I tell them: beneath the lighthouse I buried the ledger.")
    assert opinion_flags(own, SecondOpinion.offline_answer(own)) == []


def test_an_answer_counts_once_per_secret_it_was_asked_about():
    question = ask("anything")
    answer = SecondOpinion(
        verdicts=[
            Verdict(secret="s1", reveals=True, excerpt="x"),
            Verdict(secret="s1", reveals=True, excerpt="y"),
            Verdict(secret="s9", reveals=True, excerpt="unknown id"),
            Verdict(secret="s2", reveals=False),
        ]
    )
    assert [f["excerpt"] for f in opinion_flags(question, answer)] == ["x"]


def test_nothing_is_asked_when_the_words_flagged_every_secret():
    flags = secret_flags(said=[SECRET], revealed=[], secrets=[TRUTH], public=frozenset())
    assert opinion_context(said=[SECRET], revealed=[], secrets=[TRUTH], flags=flags) is None
    assert opinion_context(said=[""], revealed=[], secrets=[TRUTH], flags=[]) is None


def test_the_prompt_is_bounded():
    long = Secret("internal_truth", "Bob", "word " * 5000)
    many = [Secret("internal_truth", f"P{i}", f"secret {i}") for i in range(40)]
    question = opinion_context(said=["x " * 9000], revealed=[], secrets=[long, *many], flags=[])
    assert question is not None and len(question.secrets) == 12
    assert sum(len(m.content) for m in opinion_messages(question)) < 9000


# End to end: a pass on the fake model, Bob's secret a sentence the model paraphrases.


@pytest.fixture
def scene(user, server):
    scene = Scene(user)
    scene.frame.medium_model = fake_model(user, server)
    scene.frame.second_opinion = True
    scene.frame.save()
    bob = scene.bob.persona
    bob.internal_truth = SECRET
    bob.save()
    return scene


def paraphrasing(server) -> None:
    server.queue(
        data={
            "actions_resolved": [{"seat": "Alice Thompson", "action": "acts", "result": "success"}],
            "world_facts": [PARAPHRASE],
            "interrupts": [],
        }
    )


def guard_request(request) -> bool:
    return "THE SECRETS:" in json.dumps(request.body)


def bobs_id(request) -> str:
    found = re.search(r"(s\d+) \(internal truth of Bob Wilson\)", json.dumps(request.body))
    assert found is not None
    return found.group(1)


def test_a_paraphrase_the_opinion_flags_is_held_and_reaches_no_player(user, scene, server, events):
    paraphrasing(server)
    server.responder = lambda request: (
        Reply(data={"verdicts": [{"secret": bobs_id(request), "reveals": True, "excerpt": "a"}]})
        if guard_request(request)
        else None
    )
    pass_ = run(scene.fire(scene.alice, scene.commit(scene.alice, "I look at Bob.")))

    outcome = Outcome.objects.get(frame=scene.frame)
    assert outcome.held and pass_.status == "held"
    assert outcome.flags == [
        {
            "kind": "internal_truth",
            "owner": "Bob Wilson",
            "excerpt": "a",
            "source": "second_opinion",
        }
    ]
    gm = gm_group(scene.frame.pk)
    assert "PARA-7731" not in json.dumps([e for g, e in events if g != gm])
    assert "PARA-7731" in json.dumps([e for g, e in events if g == gm])
    # The pass's own call: counted under its subject, named for the GM, its prompt kept.
    call = LLMCall.objects.get(purpose="synthesis.guard")
    assert call.subject == f"pass:{pass_.pk}" and not call.error
    assert "THE SECRETS:" in sent(pass_, "guard") and SECRET in sent(pass_, "guard")
    listed = logged_in_client(user).get(f"/api/frames/{scene.frame.pk}/calls").json()
    assert "second opinion" in json.dumps(listed)


def test_a_failed_opinion_leaves_the_word_test_and_is_recorded(user, scene, server):
    paraphrasing(server)
    server.responder = lambda request: Reply(status=400) if guard_request(request) else None
    server.queue(text="Alice looks up.")
    pass_ = run(scene.fire(scene.alice, scene.commit(scene.alice, "I look at Bob.")))

    outcome = Outcome.objects.get(frame=scene.frame)
    assert outcome.flags == [] and not outcome.held  # the word test's answer stands
    assert pass_.status == "done"
    failed = LLMCall.objects.filter(purpose="synthesis.guard")
    assert failed.exists() and all(call.error for call in failed)
    assert any(t["step"] == "guard" and t["error"] for t in pass_.tries)


def test_the_opinion_only_adds_and_is_not_asked_when_the_frame_does_not_want_it(
    user, scene, server
):
    scene.frame.second_opinion = False
    scene.frame.save()
    paraphrasing(server)
    server.queue(text="Alice looks up.")
    run(scene.fire(scene.alice, scene.commit(scene.alice, "I look at Bob.")))
    assert not LLMCall.objects.filter(purpose="synthesis.guard").exists()
    assert Outcome.objects.get(frame=scene.frame).flags == []


def test_the_offline_narrator_flags_the_planted_paraphrase_end_to_end(user, scene, monkeypatch):
    scene.frame.medium_model = LLMModel.objects.get(owner=user, provider="offline")
    scene.frame.save()
    offline = bones_module.Bones.offline_answer.__func__

    def planted(cls, actions, variant=0):
        answer = offline(cls, actions, variant)
        return answer.model_copy(update={"world_facts": [PARAPHRASE]})

    monkeypatch.setattr(bones_module.Bones, "offline_answer", classmethod(planted))
    run(scene.fire(scene.alice, scene.commit(scene.alice, "I look at Bob.")))
    outcome = Outcome.objects.get(frame=scene.frame)
    assert outcome.held
    assert [(f["owner"], f["source"]) for f in outcome.flags] == [("Bob Wilson", "second_opinion")]


def test_the_gm_turns_the_second_opinion_on_and_the_frame_view_says_so(user, scene):
    gm = logged_in_client(user)
    url = f"/api/frames/{scene.frame.pk}"
    assert gm.patch(url, {"second_opinion": False}, format="json").status_code == 200
    assert gm.get(url).json()["second_opinion"] is False
    player = logged_in_client(scene.alice_player)
    refused = player.patch(url, {"second_opinion": True}, format="json")
    assert refused.status_code == 403
    scene.frame.refresh_from_db()
    assert scene.frame.second_opinion is False

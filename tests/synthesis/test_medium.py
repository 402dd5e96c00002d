"""The medium pass: one outcome and one narrative per pass, streamed and checkpointed;
others' agency and secrets kept; failures retried; interrupts routed; replays identical;
dead workers' passes run again."""

import uuid
from datetime import timedelta
from unittest import mock

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from lmix.errors import ApplicationError
from lmix.llm.base import CallConfig, Message, Usage
from lmix.llm.offline import OfflineNarrator
from lmix.models import LLMCall, LLMModel
from lmix.prepared import Prepared
from synthesis import medium
from synthesis.events import PLAYER_PASS_ERROR
from synthesis.frame_events import gm_group, next_seq, seat_group
from synthesis.frame_selectors import frame_access
from synthesis.medium import bones as bones_module
from synthesis.medium import context as context_module
from synthesis.medium import run as run_module
from synthesis.medium.context import Action
from synthesis.models import Liquid, Narrative, Outcome, Pass, Window
from synthesis.selectors import frame_view
from tests.round_trips import round_trips
from tests.synthesis.conftest import Scene, run, sent
from tests.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

FAKE_KEY = "sk-MEDIUM-KEY-MARKER-7731"
# A bones answer must resolve the committed action (bones.bones_check): Alice's, here.
ALICE_ACTS = {"seat": "Alice Thompson", "action": "acts", "result": "success"}


def fake_model(owner, server) -> LLMModel:
    model = LLMModel(
        owner=owner,
        name="Fake",
        provider="openai_compatible",
        api_endpoint=server.base_url,
        model_id="fake-gpt",
    )
    model.api_key = FAKE_KEY
    model.save()
    return model


@pytest.fixture
def interrupts(monkeypatch):
    """Calls of synthesis.windows.window_interrupt, recorded instead of made."""
    calls = []
    monkeypatch.setattr("synthesis.windows.window_interrupt", lambda **kwargs: calls.append(kwargs))
    return calls


@pytest.fixture
def enqueued(monkeypatch):
    """Pass ids whose task would have been enqueued."""
    ids = []
    monkeypatch.setattr(run_module, "_enqueue", lambda pass_id: ids.append(str(pass_id)))
    return ids


# -- one outcome, one narrative ------------------------------------------------------------


def test_a_pass_resolves_its_action_into_one_outcome_and_one_narrative_even_run_twice(user):
    scene = Scene(user)
    liquid = scene.commit(scene.alice, 'I draw my sword and shout "Stand back!"')
    pass_ = run(scene.fire(scene.alice, liquid))

    assert pass_.status == "done" and pass_.attempts == 1
    outcome = Outcome.objects.get(source_pass=pass_)
    assert outcome.seat == scene.alice
    assert outcome.actions_resolved == [
        {"seat": str(scene.alice.pk), "action": liquid.content, "result": "success"}
    ]
    assert outcome.liquid_ids == [str(liquid.pk)]
    assert outcome.witnesses == [str(s.pk) for s in (scene.alice, scene.bob, scene.tony)]
    narrative = Narrative.objects.get(source_pass=pass_)
    assert narrative.status == "done" and narrative.seat == scene.alice
    assert narrative.user == scene.alice_player and narrative.trigger == "expiry"
    assert narrative.outcome_ids == [str(outcome.pk)] and narrative.liquid_ids == [str(liquid.pk)]
    assert '"Stand back!"' in narrative.text  # its own outcome, dialogue kept exactly
    assert len(narrative.text.split()) <= 2 * medium.word_budget(-2)
    liquid.refresh_from_db()
    assert liquid.status == "consumed" and liquid.consumed_by == narrative
    assert Window.objects.get(pk=pass_.window_id).status == "fired"

    # The pass's own calls: the suite's worker may be running this frame's queued work.
    calls = LLMCall.objects.filter(subject=f"pass:{pass_.pk}")
    made = calls.count()
    assert made >= 2  # its bones and its narrative
    assert run(pass_).status == "done"  # a redelivered task: nothing to claim
    Pass.objects.filter(pk=pass_.pk).update(status="pending")  # even if it were claimable
    assert run(pass_).status == "done"
    assert Outcome.objects.filter(frame=scene.frame).count() == 1
    assert Narrative.objects.filter(frame=scene.frame).count() == 1
    assert calls.count() == made


def test_the_outcome_is_broadcast_with_the_frames_sequence_and_the_narrative_only_to_its_owner(
    user, events
):
    scene = Scene(user)
    pass_ = run(scene.fire(scene.alice, scene.commit(scene.alice, "I light the lantern.")))
    outcome = Outcome.objects.get(source_pass=pass_)
    frame_events = [e for g, e in events if g == f"frame.{scene.frame.pk}"]
    created = [e for e in frame_events if e["type"] == "outcome.created"]
    assert [e["seq"] for e in created] == [outcome.seq]
    seqs = [e["seq"] for g, e in events if "seq" in e and g != gm_group(scene.frame.pk)]
    assert seqs == sorted(seqs)
    private = {g for g, e in events if e["type"] in {"narrative.token", "narrative.done"}}
    assert private == {seat_group(scene.frame.pk, scene.alice.pk), gm_group(scene.frame.pk)}


@pytest.mark.usefixtures("celery_worker")
def test_a_commit_at_tempo_zero_runs_the_whole_loop_in_the_worker(user):
    from synthesis.liquid import liquid_commit, liquid_submit

    scene = Scene(user, tempo=0)
    liquid = liquid_submit(
        frame=scene.frame, seat=scene.alice, content='I call out "Hello?"', user=scene.alice_player
    )
    liquid_commit(liquid=liquid, user=scene.alice_player)
    narrative = wait_for(lambda: Narrative.objects.filter(seat=scene.alice, status="done").first())
    assert '"Hello?"' in narrative.text
    outcome = Outcome.objects.get(frame=scene.frame)
    assert outcome.liquid_ids == [str(liquid.pk)] and narrative.outcome_ids == [str(outcome.pk)]
    assert Liquid.objects.get(pk=liquid.pk).consumed_by == narrative
    assert Pass.objects.get(kind="medium", frame=scene.frame).status == "done"


# -- streaming -----------------------------------------------------------------------------


def stream_once(scene, server, words: int) -> tuple[Narrative, int]:
    """Run a pass whose narrative streams `words` deltas; UPDATEs of the narrative table."""
    server.queue(data={"actions_resolved": [ALICE_ACTS], "world_facts": [], "interrupts": []})
    server.queue(text=" ".join(f"w{i}" for i in range(words)))
    pass_ = scene.fire(scene.alice, scene.commit(scene.alice, "I wait.", pscale=0), pscale=0)
    with CaptureQueriesContext(connection) as queries:
        run(pass_)
    narrative = Narrative.objects.get(source_pass=pass_)
    assert narrative.status == "done" and narrative.text.split() == [f"w{i}" for i in range(words)]
    return narrative, sum(1 for q in queries if q["sql"].startswith('UPDATE "synthesis_narrative"'))


def test_the_narrative_streams_its_deltas_and_is_never_written_per_delta(
    user, server, settings, events
):
    scene = Scene(user)
    scene.frame.medium_model = fake_model(user, server)
    scene.frame.save()
    settings.LMIX_STREAM_CHECKPOINT_SECONDS = 3600
    narrative, few = stream_once(scene, server, 10)
    _, many = stream_once(scene, server, 60)
    assert few == many
    settings.LMIX_STREAM_CHECKPOINT_SECONDS = 0  # the control: a checkpoint per delta
    _, every = stream_once(scene, server, 60)
    assert every > many + 40

    tokens = [
        e
        for g, e in events
        if g == seat_group(scene.frame.pk, scene.alice.pk)
        and e["type"] == "narrative.token"
        and e["solid"] == str(narrative.pk)
    ]
    assert [e["index"] for e in tokens] == list(range(narrative.token_count))
    assert (
        "".join(e["delta"] for e in tokens)
        == narrative.text
        == " ".join(f"w{i}" for i in range(10))
    )


def test_the_word_budget_follows_pscale_and_caps_the_stream(user, server):
    scene = Scene(user)
    scene.frame.medium_model = fake_model(user, server)
    scene.frame.save()
    server.queue(data={"actions_resolved": [ALICE_ACTS], "world_facts": [], "interrupts": []})
    server.queue(text=" ".join(f"w{i}" for i in range(200)))  # a model that ignores the cap
    pass_ = run(scene.fire(scene.alice, scene.commit(scene.alice, "I duck.", pscale=-3), pscale=-3))
    stream = server.requests_to("/chat/completions")[-1].body
    assert stream["stream"] and stream["max_tokens"] == 2 * medium.word_budget(-3) == 20
    assert "about 10 words" in sent(pass_, "flesh")
    narrative = Narrative.objects.get(source_pass=pass_)
    assert narrative.status == "done" and len(narrative.text.split()) <= 20


# -- agency and ordering -------------------------------------------------------------------


# With one outcome in context, what is already resolved is read by its own query; with more
# than the frame has, from the newest outcomes gather reads anyway.
@pytest.mark.parametrize("outcomes_context", [1, 12])
def test_same_pscale_liquid_of_others_is_resolved_together_but_nobody_gets_an_invented_action(
    user, server, interrupts, settings, monkeypatch, outcomes_context
):
    settings.LMIX_MEDIUM_OUTCOMES_CONTEXT = outcomes_context
    newest = context_module.NEWEST_OUTCOMES
    monkeypatch.setattr(context_module, "NEWEST_OUTCOMES", Prepared(newest._build))  # rebuilt
    scene = Scene(user)
    scene.frame.medium_model = fake_model(user, server)
    scene.frame.save()
    shield = scene.commit(scene.bob, "I raise my shield.", after=1)
    sword = scene.commit(scene.alice, "I swing my sword at the orc.", after=2)
    later = scene.commit(scene.tony, "I search the cellar.", pscale=-1, after=3)
    scene.window(scene.bob, shield, status="open")
    server.queue(
        data={
            "actions_resolved": [
                {"seat": "Alice Thompson", "action": "swings at the orc", "result": "partial"},
                {"seat": str(scene.bob.pk), "action": "raises a shield", "result": "success"},
                {"seat": "Bob", "action": "drops the shield", "result": "failure"},
            ],
            "world_facts": ["The orc staggers.", "The orc staggers.", "  "],
            "interrupts": [{"seat": "Tony Rosetti", "reason": "The orc falls on him."}],
        }
    )
    pass_ = run(scene.fire(scene.alice, sword))

    outcome = Outcome.objects.get(source_pass=pass_)
    # Canonical order: Bob committed first. Tony committed nothing at this scale: no action.
    assert outcome.actions_resolved == [
        {"seat": str(scene.bob.pk), "action": "raises a shield", "result": "success"},
        {"seat": str(scene.alice.pk), "action": "swings at the orc", "result": "partial"},
    ]
    assert outcome.liquid_ids == [str(shield.pk), str(sword.pk)]
    assert outcome.world_facts == ["The orc staggers."]
    assert outcome.interrupts == [] and interrupts == []  # no interruptive action was resolved
    bones_prompt = sent(pass_, "bones")
    assert "1. [Bob Wilson] I raise my shield." in bones_prompt
    assert "2. [Alice Thompson] I swing my sword" in bones_prompt
    assert "Tony Rosetti intends: I search the cellar." in bones_prompt  # visible intent only
    shield.refresh_from_db(), later.refresh_from_db()
    assert shield.status == "committed" and later.status == "committed"  # theirs to narrate

    # Bob's own pass narrates what Alice's outcome resolved, and resolves nothing again.
    bob_window = Window.objects.get(seat=scene.bob)
    Window.objects.filter(pk=bob_window.pk).update(status="firing")
    bob_pass = Pass.objects.create(
        frame=scene.frame, seat=scene.bob, kind="medium", trigger="expiry", window=bob_window
    )
    requests = len(server.requests)
    bob_pass = run(bob_pass)
    assert bob_pass.status == "done" and not Outcome.objects.filter(source_pass=bob_pass)
    assert [r.body.get("stream") for r in server.requests[requests:]] == [True]  # flesh only
    assert "- Result: Bob Wilson: raises a shield (success)" in sent(bob_pass, "flesh")
    narrative = Narrative.objects.get(source_pass=bob_pass)
    assert narrative.outcome_ids == [str(outcome.pk)]
    shield.refresh_from_db()
    assert shield.status == "consumed" and shield.consumed_by == narrative


def replay(gm) -> list:
    """Three characters act at one scale (Bob first, then Alice, Tony last), each pass in
    turn: the outcomes and narratives, by character name."""
    scene = Scene(gm)
    production = scene.frame.production
    production.world.name, production.world.description = "Harbor", "A foggy harbor."
    production.world.save()
    production.scenario.name, production.scenario.description = "Night", "A cold night."
    production.scenario.save()
    for seat in (scene.alice, scene.bob, scene.tony):  # the factories number their texts
        persona = seat.persona
        persona.universal_truth = f"{persona.name} is here."
        persona.external_truth = f"{persona.name} looks tired."
        persona.save()
        persona.affiliations.update(
            name="Dockers", universal_truth="Dock workers.", external_truth="Rough."
        )
    names = {str(s.pk): s.persona.name for s in (scene.alice, scene.bob, scene.tony)}
    liquids = {
        scene.bob: scene.commit(scene.bob, "I bar the door.", after=1),
        scene.alice: scene.commit(scene.alice, 'I whisper "Who is there?"', after=2),
        scene.tony: scene.commit(scene.tony, "I shove Bob Wilson aside.", after=3),
    }
    passes = [scene.fire(seat, liquid) for seat, liquid in liquids.items()]
    played = []
    for pass_ in passes:
        run(pass_)
        outcome = Outcome.objects.filter(source_pass=pass_).first()
        played.append(
            (
                names[str(pass_.seat_id)],
                outcome
                and [
                    (names[a["seat"]], a["action"], a["result"]) for a in outcome.actions_resolved
                ],
                outcome and outcome.world_facts,
                Narrative.objects.get(source_pass=pass_).text,
            )
        )
    return played


def test_replaying_the_same_inputs_on_the_offline_narrator_gives_the_same_outcomes(
    user, other_user
):
    first, second = replay(user), replay(other_user)
    assert first == second
    # Bob's pass resolved all three together, in commit order; the others' resolved nothing.
    assert [name for name, *_ in first[0][1]] == ["Bob Wilson", "Alice Thompson", "Tony Rosetti"]
    assert first[1][1] is None and first[2][1] is None
    # It states no facts: one restating each action showed it twice on the outcome's card.
    assert first[0][2] == []
    assert '"Who is there?"' in first[1][3]  # Alice's narrative tells her own action


# -- secrets -------------------------------------------------------------------------------


def test_no_secret_and_no_other_narrative_reaches_a_characters_prompts(user):
    scene = Scene(user)
    Narrative.objects.create(
        frame=scene.frame,
        seat=scene.bob,
        text="BOB-NARRATIVE-MARKER",
        trigger="expiry",
        status="done",
    )
    Narrative.objects.create(
        frame=scene.frame,
        seat=scene.alice,
        text="ALICE-NARRATIVE-MARKER",
        trigger="expiry",
        status="done",
    )
    shield = scene.commit(scene.bob, "I raise my shield.", after=1)
    scene.window(scene.bob, shield, status="open")
    alice = run(scene.fire(scene.alice, scene.commit(scene.alice, "I draw my sword.", after=2)))

    bones, flesh = sent(alice, "bones"), sent(alice, "flesh")
    assert "I raise my shield." in bones  # resolved together: the control
    assert "SECRET-MARKER" not in bones  # the outcome is public: no internal truth at all
    assert "NARRATIVE-MARKER" not in bones
    assert "ALICE THOMPSON-SECRET-MARKER" in flesh and "ALICE-NARRATIVE-MARKER" in flesh
    assert scene.bob.persona.external_truth in flesh  # how Alice sees Bob: the control
    for marker in (
        "BOB WILSON-SECRET-MARKER",
        "TONY ROSETTI-SECRET-MARKER",
        "GROUP-SECRET-MARKER",  # Bob's group: Alice is no member
        "BOB-NARRATIVE-MARKER",
    ):
        assert marker not in flesh

    bob_window = Window.objects.get(seat=scene.bob)
    Window.objects.filter(pk=bob_window.pk).update(status="firing")
    bob = run(
        Pass.objects.create(
            frame=scene.frame, seat=scene.bob, kind="medium", trigger="expiry", window=bob_window
        )
    )
    flesh = sent(bob, "flesh")
    assert "GROUP-SECRET-MARKER" in flesh and "BOB-NARRATIVE-MARKER" in flesh  # his own
    assert "ALICE THOMPSON-SECRET-MARKER" not in flesh and "ALICE-NARRATIVE-MARKER" not in flesh
    for outcome in Outcome.objects.filter(frame=scene.frame):
        assert "MARKER" not in str(outcome.actions_resolved) + str(outcome.world_facts)


@pytest.mark.parametrize("visibility", ["all", "own", "gm"])
def test_others_intentions_reach_a_prompt_only_where_the_frame_shows_them(user, visibility):
    scene = Scene(user, liquid_visibility=visibility)
    scene.submit(scene.tony, "TONY-INTENT-MARKER: I plan the heist.", pscale=1)
    pass_ = run(scene.fire(scene.alice, scene.commit(scene.alice, "I look around.")))
    for step in ("bones", "flesh"):
        assert ("TONY-INTENT-MARKER" in sent(pass_, step)) == (visibility == "all")


def test_an_outcome_repeating_a_secret_is_flagged_to_the_gm_alone(user, server, events):
    scene = Scene(user)
    scene.frame.medium_model = fake_model(user, server)
    scene.frame.save()
    fact = "Everyone can tell: BOB WILSON-SECRET-MARKER."
    server.queue(data={"actions_resolved": [ALICE_ACTS], "world_facts": [fact], "interrupts": []})
    server.queue(text="Alice looks up.")
    run(scene.fire(scene.alice, scene.commit(scene.alice, "I look at Bob.")))

    outcome = Outcome.objects.get(frame=scene.frame)
    assert outcome.flags == [
        {
            "kind": "internal_truth",
            "owner": scene.bob.persona.name,
            "excerpt": "bob wilson-secret-marker",
            "source": "words",
        }
    ]
    flagged = [(g, e) for g, e in events if e["type"] == "outcome.flagged"]
    assert flagged == [
        (
            gm_group(scene.frame.pk),
            {"type": "outcome.flagged", "outcome": str(outcome.pk), "flags": outcome.flags},
        )
    ]
    created = next(e for _, e in events if e["type"] == "outcome.created")
    assert "flags" not in created["outcome"]
    player = frame_view(frame_access(frame_id=scene.frame.pk, user=scene.alice_player))
    gm = frame_view(frame_access(frame_id=scene.frame.pk, user=user))
    assert "flags" not in player["outcomes"][0] and gm["outcomes"][0]["flags"] == outcome.flags


# -- failure and retry ---------------------------------------------------------------------


@pytest.mark.usefixtures("celery_worker")
def test_a_provider_failure_keeps_the_liquid_and_a_retry_then_succeeds(user, server, events):
    scene = Scene(user)
    scene.frame.medium_model = fake_model(user, server)
    scene.frame.save()
    liquid = scene.commit(scene.alice, "I climb the wall.")
    server.queue(status=401)
    pass_ = run(scene.fire(scene.alice, liquid))

    assert pass_.status == "failed"
    assert "key" in pass_.error.lower() and FAKE_KEY not in pass_.error
    assert Window.objects.get(pk=pass_.window_id).status == "failed"
    liquid.refresh_from_db()
    assert liquid.status == "committed" and liquid.consumed_by is None
    assert not Outcome.objects.filter(frame=scene.frame) and not Narrative.objects.all()
    failed = {g: e for g, e in events if e["type"] == "pass.failed"}
    assert failed[gm_group(scene.frame.pk)]["pass"]["error"] == pass_.error
    assert failed[seat_group(scene.frame.pk, scene.alice.pk)]["pass"]["error"] == PLAYER_PASS_ERROR
    assert "error" not in failed[seat_group(scene.frame.pk, scene.bob.pk)]["pass"]

    server.queue(data={"actions_resolved": [ALICE_ACTS]})  # the retry's bones
    retried = medium.medium_pass_retry(pass_=pass_)
    assert retried.status in {"pending", "running", "done"} and not retried.error
    done = wait_for(lambda: Pass.objects.filter(pk=pass_.pk, status="done").first())
    assert done.attempts == 1
    assert Window.objects.get(pk=pass_.window_id).status == "fired"
    liquid.refresh_from_db()
    assert liquid.status == "consumed"
    assert Outcome.objects.filter(source_pass=pass_).count() == 1
    with pytest.raises(ApplicationError):
        medium.medium_pass_retry(pass_=done)


def test_a_failure_while_narrating_keeps_the_outcome_for_the_retry(user, server, enqueued):
    scene = Scene(user)
    scene.frame.medium_model = fake_model(user, server)
    scene.frame.save()
    liquid = scene.commit(scene.alice, "I run.")
    server.queue(
        data={"actions_resolved": [ALICE_ACTS], "world_facts": ["Dust rises."], "interrupts": []}
    )
    server.queue(status=400)
    pass_ = run(scene.fire(scene.alice, liquid))
    assert pass_.status == "failed"
    outcome = Outcome.objects.get(source_pass=pass_)
    assert Narrative.objects.get(source_pass=pass_).status == "failed"
    liquid.refresh_from_db()
    assert liquid.status == "committed"

    medium.medium_pass_retry(pass_=pass_)
    assert enqueued == [str(pass_.pk)]
    assert Window.objects.get(pk=pass_.window_id).status == "firing"
    bones_calls = LLMCall.objects.filter(purpose="synthesis.bones", subject=f"pass:{pass_.pk}")
    assert bones_calls.count() == 1
    assert run(pass_).status == "done"
    assert bones_calls.count() == 1
    assert list(Outcome.objects.filter(frame=scene.frame)) == [outcome]
    narrative = Narrative.objects.get(source_pass=pass_)
    assert narrative.status == "done" and narrative.outcome_ids == [str(outcome.pk)]


def test_an_invalid_answer_fails_the_pass_readably(user, server):
    scene = Scene(user)
    scene.frame.medium_model = fake_model(user, server)
    scene.frame.save()
    for _ in range(2):  # the answer and its repair
        server.queue(text='{"actions_resolved": "everyone wins"}')
    pass_ = run(scene.fire(scene.alice, scene.commit(scene.alice, "I sing.")))
    assert pass_.status == "failed" and "did not match the expected format" in pass_.error
    assert 'Its last answer: {"actions_resolved": "everyone wins"}' in pass_.error


# -- interrupts ----------------------------------------------------------------------------


def test_an_interruptive_action_interrupts_its_target_and_never_the_actor(user, interrupts):
    scene = Scene(user)
    shove = scene.commit(
        scene.alice,
        "I shove Bob Wilson into the fountain.",
        pscale=-3,
        interruptive=True,
        targets=[scene.bob, scene.alice],
    )
    pass_ = run(scene.fire(scene.alice, shove, pscale=-3))
    outcome = Outcome.objects.get(source_pass=pass_)
    assert [(c["seat_id"], c["outcome"]) for c in interrupts] == [(scene.bob.pk, outcome)]
    assert "fountain" in interrupts[0]["reason"]
    assert interrupts[0]["frame"] == scene.frame
    assert outcome.interrupts == [{"seat": str(scene.bob.pk), "reason": interrupts[0]["reason"]}]


def test_interrupts_the_model_proposes_are_kept_only_for_other_seats_once_each(
    user, server, interrupts
):
    scene = Scene(user)
    scene.frame.medium_model = fake_model(user, server)
    scene.frame.save()
    server.queue(
        data={
            "actions_resolved": [ALICE_ACTS],
            "world_facts": [],
            "interrupts": [
                {"seat": "Alice Thompson", "reason": "She trips herself."},
                {"seat": "bob", "reason": "He is knocked over."},
                {"seat": str(scene.bob.pk), "reason": "Again."},
                {"seat": "Gandalf", "reason": "Not here."},
                {"seat": "[Tony Rosetti]", "reason": "Splashed."},
            ],
        }
    )
    shove = scene.commit(scene.alice, "I shove everyone.", pscale=-3, interruptive=True)
    outcome = Outcome.objects.get(source_pass=run(scene.fire(scene.alice, shove, pscale=-3)))
    assert outcome.interrupts == [
        {"seat": str(scene.bob.pk), "reason": "He is knocked over."},
        {"seat": str(scene.tony.pk), "reason": "Splashed."},
    ]
    assert [c["seat_id"] for c in interrupts] == [scene.bob.pk, scene.tony.pk]


def test_an_interrupted_character_wakes_at_once_and_answers_the_interrupt(user):
    scene = Scene(user)
    dig = scene.commit(scene.bob, "I dig for the treasure.", pscale=0)
    bob_window = scene.window(scene.bob, dig, status="open", pscale=0)
    shove = scene.commit(
        scene.alice, "I shove Bob Wilson.", pscale=-3, interruptive=True, targets=[scene.bob]
    )
    alice = run(scene.fire(scene.alice, shove, pscale=-3))
    outcome = Outcome.objects.get(source_pass=alice)

    bob_window.refresh_from_db()
    assert bob_window.status == "cancelled"
    bob_pass = Pass.objects.get(seat=scene.bob, trigger="interrupt")
    assert bob_pass.interrupt == {
        "outcome": str(outcome.pk),
        "reason": "Alice Thompson: I shove Bob Wilson.",
    }
    run(bob_pass)  # or a worker did already: either way once
    bob_pass = wait_for(lambda: Pass.objects.filter(pk=bob_pass.pk, status="done").first())
    assert "- Interrupt: Alice Thompson: I shove Bob Wilson." in sent(bob_pass, "flesh")
    bob_outcome = Outcome.objects.get(source_pass=bob_pass)
    assert [a["seat"] for a in bob_outcome.actions_resolved] == [str(scene.bob.pk)]
    assert bob_outcome.liquid_ids == [str(dig.pk)] and bob_outcome.seq > outcome.seq
    narrative = Narrative.objects.get(source_pass=bob_pass)
    assert narrative.trigger == "interrupt"
    assert narrative.outcome_ids == [str(outcome.pk), str(bob_outcome.pk)]
    # Told in the third person, each once (lmix/llm/offline.py).
    assert "without warning: Alice Thompson shoves Bob Wilson." in narrative.text
    assert narrative.text.count("shoves Bob Wilson") == 1
    assert "Bob Wilson digs for the treasure" in narrative.text
    dig.refresh_from_db()
    assert dig.consumed_by == narrative


# -- serialisation per frame ---------------------------------------------------------------


def test_an_outcome_landing_during_the_call_makes_the_pass_gather_again(user, monkeypatch):
    scene = Scene(user)
    real = bones_module.llm_structured
    landed = []

    def call_and_meanwhile_another_outcome(**kwargs):
        if not landed:
            with transaction.atomic():
                landed.append(
                    Outcome.objects.create(
                        frame=scene.frame,
                        seq=next_seq(scene.frame.pk),
                        seat=scene.tony,
                        world_facts=["The bell tolls."],
                        witnesses=[str(s.pk) for s in (scene.alice, scene.bob, scene.tony)],
                    )
                )
        return real(**kwargs)

    monkeypatch.setattr(bones_module, "llm_structured", call_and_meanwhile_another_outcome)
    pass_ = run(scene.fire(scene.alice, scene.commit(scene.alice, "I listen.")))
    calls = [entry for entry in pass_.messages if entry["step"] == "bones"]
    assert len(calls) == 2
    assert "The bell tolls." not in str(calls[0]) and "The bell tolls." in str(calls[1])
    assert Outcome.objects.get(source_pass=pass_).seq > landed[0].seq


@pytest.mark.parametrize("tries, locked", [(1, True), (3, False)])
def test_only_the_last_try_holds_the_frame_lock_across_the_call(
    user, monkeypatch, settings, tries, locked
):
    settings.LMIX_MEDIUM_BONES_ATTEMPTS = tries
    scene = Scene(user)
    real = bones_module.llm_structured
    seen = []

    def call(**kwargs):
        seen.append(connection.in_atomic_block)
        return real(**kwargs)

    monkeypatch.setattr(bones_module, "llm_structured", call)
    assert run(scene.fire(scene.alice, scene.commit(scene.alice, "I wait."))).status == "done"
    assert seen == [locked]


# -- nothing to do -------------------------------------------------------------------------


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a pipeline is PostgreSQL's")
def test_on_postgresql_a_pass_is_claimed_and_read_in_one_round_trip_and_gathers_in_one(
    user, monkeypatch
):
    scene = Scene(user)
    earlier = run(scene.fire(scene.bob, scene.commit(scene.bob, "I light a lamp.")))
    pass_ = scene.fire(scene.alice, scene.commit(scene.alice, "I jump the gap.", after=1))
    claimed = {}

    def stop(pass_, lease):
        claimed.update(status=pass_.status, attempts=pass_.attempts, owner=pass_.lease_owner)
        raise WorkerDied()

    monkeypatch.setattr(run_module, "_bones_run", stop)
    with round_trips() as trips, pytest.raises(WorkerDied):
        medium.medium_pass_run(pass_id=pass_.pk)
    assert trips == [1]
    stored = Pass.objects.get(pk=pass_.pk)
    assert claimed == {"status": "running", "attempts": 1, "owner": stored.lease_owner}
    assert (stored.status, stored.attempts) == ("running", 1)

    stored = run_module.medium_pass_read(pass_.pk)  # as the run read it, with its frame
    with round_trips() as trips:
        ctx = medium.gather(stored, frame=stored.frame)
    assert trips == [1]
    assert [s.pk for s in ctx.seats] == [s.pk for s in scene.frame.seats.order_by("position")]
    assert [x.content for x in ctx.own] == ["I jump the gap."]
    assert [o.source_pass_id for o in ctx.outcomes] == [earlier.pk]  # Alice witnessed it
    assert "Alice" in ctx.knowledge


def test_a_pass_with_nothing_left_to_resolve_or_narrate_just_finishes(user):
    scene = Scene(user)
    pass_ = run(scene.fire(scene.alice))
    assert pass_.status == "done"
    assert not Outcome.objects.exists() and not Narrative.objects.exists()
    assert Window.objects.get(pk=pass_.window_id).status == "fired"


# -- leases and sweeps ---------------------------------------------------------------------


class WorkerDied(BaseException):
    """The worker is killed mid-pass: nothing of ours runs after it."""


def dead_after_bones(scene, monkeypatch, settings) -> Pass:
    """A pass whose worker died after storing its outcome, its lease long silent. Leases
    last an hour for the sweeper of a worker running in the background, so only the
    test's own sweep finds it."""
    settings.LMIX_LEASE_TIMEOUT_SECONDS = 3600
    flesh_step = run_module.flesh_step

    def die(*args, **kwargs):
        raise WorkerDied()

    monkeypatch.setattr(run_module, "flesh_step", die)
    pass_ = scene.fire(scene.alice, scene.commit(scene.alice, "I jump the gap."))
    with mock.patch("synthesis.tasks.flesh_task.delay"):  # the stream worker is this test
        medium.medium_pass_run(pass_id=pass_.pk)
    with pytest.raises(WorkerDied):
        medium.medium_flesh_run(pass_id=pass_.pk)
    monkeypatch.setattr(run_module, "flesh_step", flesh_step)
    Pass.objects.filter(pk=pass_.pk).update(
        lease_owner="dead-host:1:abcd", heartbeat_at=timezone.now() - timedelta(minutes=5)
    )
    return Pass.objects.get(pk=pass_.pk)


def test_a_lapsed_pass_lease_is_run_again_by_the_sweep_reusing_its_outcome(
    user, monkeypatch, settings, enqueued
):
    scene = Scene(user)
    dead = dead_after_bones(scene, monkeypatch, settings)
    assert dead.status == "running" and Outcome.objects.filter(source_pass=dead).count() == 1
    live = scene.fire(scene.bob, scene.commit(scene.bob, "I wait."))
    Pass.objects.filter(pk=live.pk).update(
        status="running", lease_owner="alive", heartbeat_at=timezone.now()
    )

    assert medium.passes_sweep(lapsed_after=60) == {"requeued": 0, "restarted": 1, "failed": 0}
    assert enqueued == [str(dead.pk)]
    assert Pass.objects.get(pk=live.pk).status == "running"  # a live lease is never touched
    restarted = Pass.objects.get(pk=dead.pk)
    assert restarted.status == "pending" and restarted.lease_owner == ""

    done = run(restarted)
    assert done.status == "done" and done.attempts == 2
    assert Outcome.objects.filter(frame=scene.frame).count() == 1
    assert LLMCall.objects.filter(purpose="synthesis.bones", subject=f"pass:{dead.pk}").count() == 1
    assert Narrative.objects.get(source_pass=dead).status == "done"


def test_a_running_pass_that_never_beat_is_run_again_once_its_update_is_old(
    user, monkeypatch, settings, enqueued
):
    scene = Scene(user)
    dead = dead_after_bones(scene, monkeypatch, settings)
    Pass.objects.filter(pk=dead.pk).update(
        heartbeat_at=None, updated_at=timezone.now() - timedelta(minutes=5)
    )
    assert medium.passes_sweep(lapsed_after=60) == {"requeued": 0, "restarted": 1, "failed": 0}
    assert Pass.objects.get(pk=dead.pk).status == "pending" and enqueued == [str(dead.pk)]


def test_a_pass_whose_worker_keeps_dying_fails_visibly(user, monkeypatch, settings, events):
    settings.LMIX_LEASE_MAX_RESTARTS = 0
    scene = Scene(user)
    dead = dead_after_bones(scene, monkeypatch, settings)
    assert medium.passes_sweep(lapsed_after=60)["failed"] == 1
    failed = Pass.objects.get(pk=dead.pk)
    assert failed.status == "failed" and "Retry" in failed.error
    assert Window.objects.get(pk=dead.window_id).status == "failed"
    assert any(e["type"] == "pass.failed" for _, e in events)


def test_a_pending_pass_whose_task_was_lost_is_enqueued_once_per_interval(user, enqueued, settings):
    settings.LMIX_PENDING_REQUEUE_SECONDS = 3600  # a background sweeper leaves it to us
    scene = Scene(user)
    pass_ = scene.fire(scene.alice, scene.commit(scene.alice, "I wait."))
    assert medium.passes_sweep(pending_after=30)["requeued"] == 0  # too young
    Pass.objects.filter(pk=pass_.pk).update(updated_at=timezone.now() - timedelta(minutes=1))
    assert medium.passes_sweep(pending_after=30)["requeued"] == 1
    assert medium.passes_sweep(pending_after=30)["requeued"] == 0  # just enqueued
    assert enqueued == [str(pass_.pk)]


# -- the offline narrator's hooks ----------------------------------------------------------


def test_the_offline_narrator_answers_with_a_schemas_own_offline_answer_or_else_generically():
    actions = (
        Action(uuid.uuid4(), uuid.uuid4(), "Ann", "I trip Ben.", True, ("Ben",)),
        Action(uuid.uuid4(), uuid.uuid4(), "Ben", "I sit."),
    )
    config = CallConfig(
        provider="offline", endpoint="offline://narrator", model_id="narrator", context=actions
    )
    prompt = [Message("system", "Resolve."), Message("user", "Any prompt at all.")]
    answer = medium.Bones.model_validate_json(
        OfflineNarrator().structured(config, prompt, medium.Bones, Usage())
    )
    assert [(a.seat, a.action, a.result) for a in answer.actions_resolved] == [
        ("Ann", "I trip Ben.", "success"),
        ("Ben", "I sit.", "success"),
    ]
    assert [(i.seat, i.reason) for i in answer.interrupts] == [("Ben", "Ann: I trip Ben.")]

    class Broken(medium.Bones):
        @classmethod
        def offline_answer(cls, actions, variant=0):
            raise ValueError("no answer")

    assert Broken.model_validate_json(OfflineNarrator().structured(config, prompt, Broken, Usage()))


# -- AI seats answer what concerns them -----------------------------------------------------


def test_an_intention_asking_tony_by_name_makes_his_ai_seat_act_after_the_outcome(
    user, monkeypatch
):
    from synthesis import ai_seats

    asked: list[tuple[list[str], str | None]] = []
    monkeypatch.setattr(
        ai_seats, "_enqueue", lambda seats, outcome_id: asked.append((seats, outcome_id))
    )
    scene = Scene(user)  # Alice and Bob played by people, Tony by his assistant
    quiet = run(scene.fire(scene.alice, scene.commit(scene.alice, "I light the lantern.")))
    assert quiet.status == "done" and not any(seats for seats, _ in asked)  # nobody named
    asked.clear()
    liquid = scene.commit(scene.bob, "I ask Tony whether he has been here before.", after=1)
    pass_ = run(scene.fire(scene.bob, liquid))
    outcome = Outcome.objects.get(source_pass=pass_)
    assert asked == [([str(scene.tony.pk)], str(outcome.pk))]

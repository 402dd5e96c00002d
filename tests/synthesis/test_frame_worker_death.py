"""`kill -9` of a real stream worker process while it narrates a medium pass, with no
beat: the short worker's own sweep finds the lapsed lease and runs the pass again, reusing
the outcome it stored, and hands it to the next stream worker; the pass ends with one
outcome, one whole narrative, its liquid consumed once (services mode, as
tests/productions/test_worker_death.py for turns)."""

import pytest

from lmix.llm.tokens import count_tokens
from lmix.models import LLMCall, LLMModel
from synthesis import tasks
from synthesis.liquid import liquid_commit, liquid_submit
from synthesis.medium.prompts import reply_cap
from synthesis.models import Liquid, Narrative, Outcome, Pass, SeatAct, Window
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.live_processes import child_env, kill_9, worker_process
from tests.synthesis.conftest import Scene, make_frame, seat_player
from tests.synthesis.test_medium import fake_model
from tests.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

TEXT = (
    "The lamp gutters as Alice lifts it from the hook and turns toward the stairs. Rain "
    "drums on the shutters while somewhere below a door swings open and shut, open and "
    "shut, in the wind. She counts the steps under her breath, one hand on the cold rail, "
    "until the light finds a face waiting at the bottom: pale, patient, and not at all "
    "surprised to see her."
)
DELTAS = len(TEXT.split())  # the fake streams a word at a time
BONES = {
    "actions_resolved": [
        {"seat": "Alice Thompson", "action": "takes the lamp downstairs", "result": "success"}
    ],
    "world_facts": ["The lamp is lit."],
    "interrupts": [],
}


@pytest.fixture
def server():
    with FakeLLMServer() as fake:
        # Every run gets the same answers: the outcome as JSON, the narrative slowly.
        def answer(request) -> Reply:
            streaming = isinstance(request.body, dict) and request.body.get("stream")
            return Reply(text=TEXT, chunk_delay=0.05) if streaming else Reply(data=BONES)

        fake.responder = answer
        yield fake


@pytest.fixture
def nobody_here(monkeypatch):
    """Nobody in this process runs the frame's tasks (the suite's in-process worker shares
    this process's broker): the child workers' own sweeps pick the window up."""
    monkeypatch.setattr(tasks.soft_pass_task, "delay", lambda *args: None)
    monkeypatch.setattr(tasks.window_fire_task, "apply_async", lambda *args, **kwargs: None)
    monkeypatch.setattr(tasks.medium_pass_task, "delay", lambda *args: None)
    monkeypatch.setattr(tasks.flesh_task, "delay", lambda *args: None)
    monkeypatch.setattr(tasks.ai_act_task, "delay", lambda *args: None)


@pytest.mark.usefixtures("nobody_here")
def test_a_medium_pass_survives_kill_9_of_its_worker_mid_narrative(user, server):
    assert count_tokens(TEXT) < reply_cap(-1)  # the whole text fits the narrative's budget
    model = LLMModel.objects.create(
        owner=user,
        name="Fake",
        provider="openai_compatible",
        api_endpoint=server.base_url,
        model_id="fake-gpt",
    )
    frame = make_frame(user, open_seats=1, tempo=0.01, medium_model=model)
    alice, _ = seat_player(frame, 0)
    seat = frame.seats.get(position=0)
    liquid = liquid_submit(frame=frame, seat=seat, content="I take the lamp.", user=alice)
    liquid_commit(liquid=liquid, user=alice)  # its window is due a moment later
    env = child_env(
        LMIX_LEASE_HEARTBEAT_SECONDS="0.5",
        LMIX_LEASE_TIMEOUT_SECONDS="6",  # twelve beats: a loaded machine misses some
        LMIX_PENDING_REQUEUE_SECONDS="0",
        SWEEP_INTERVAL_SECONDS="0.5",
        FRAMES_SWEEP_INTERVAL_SECONDS="0.5",
        LMIX_LLM_ALLOWED_NETWORKS="127.0.0.0/8",
    )

    with worker_process(env, queues="short"):  # the outcome, the sweeps
        with worker_process(env, queues="streams") as first:
            cut = wait_for(
                lambda: Narrative.objects.filter(frame=frame, token_count__gte=10).first(), 60
            )
            kill_9(first)
        pass_ = Pass.objects.get(frame=frame, kind="medium")
        assert pass_.status == "running" and pass_.attempts == 1
        cut.refresh_from_db()
        assert cut.status == "streaming" and 0 < cut.token_count < DELTAS
        assert Outcome.objects.filter(frame=frame).count() == 1  # bones were stored first

        with worker_process(env, queues="streams"):
            wait_for(
                lambda: Pass.objects.filter(pk=pass_.pk, status__in=["done", "failed"]).first(),
                90,
            )
    pass_.refresh_from_db()
    assert pass_.status == "done", pass_.error
    # The killed run and the rerun (a starved machine may lapse a live lease once more;
    # the lapsed run stops at its next checkpoint and writes nothing).
    assert pass_.attempts >= 2
    outcomes = list(Outcome.objects.filter(frame=frame))
    assert [o.source_pass_id for o in outcomes] == [pass_.pk]  # the rerun reused it
    story = Narrative.objects.get(frame=frame)  # the cut-off one is gone
    assert story.source_pass_id == pass_.pk and story.status == "done"
    assert story.text == TEXT  # whole, once
    assert story.outcome_ids == [str(outcomes[0].pk)]
    liquid.refresh_from_db()
    assert liquid.status == "consumed" and liquid.consumed_by_id == story.pk
    assert story.liquid_ids == [str(liquid.pk)]
    assert Window.objects.get(frame=frame).status == "fired"
    # The outcome was asked for once; the narrative twice, the killed call never finished.
    assert len([r for r in server.requests if not r.body.get("stream")]) == 1
    calls = LLMCall.objects.filter(purpose="synthesis.flesh").order_by("created_at")
    assert calls[0].finished_at is None and all(c.finished_at for c in calls[1:])


LINE = "I wipe down the bar and nod at Alice."


@pytest.mark.usefixtures("nobody_here")
def test_an_ai_act_survives_kill_9_of_its_worker_and_is_finished_once_without_the_gm(user):
    """The streams worker dies while an AI character "types": the short worker's sweep
    finds the act's lapsed lease, the next streams worker writes it, and the character
    acts once, with nobody pressing advance."""
    with FakeLLMServer() as fake:
        fake.responder = lambda request: Reply(text=LINE, delay=4)  # long enough to die in
        scene = Scene(user)
        scene.tony.assistant.model = fake_model(user, fake)
        scene.tony.assistant.save()
        # As the GM's advance leaves it; its task is the sweep's to send (nobody_here).
        act = SeatAct.objects.create(seat=scene.tony)
        env = child_env(
            LMIX_LEASE_HEARTBEAT_SECONDS="0.5",
            LMIX_LEASE_TIMEOUT_SECONDS="6",
            LMIX_PENDING_REQUEUE_SECONDS="0",
            SWEEP_INTERVAL_SECONDS="0.5",
            LMIX_LLM_ALLOWED_NETWORKS="127.0.0.0/8",
        )
        with worker_process(env, queues="short"):  # the sweeps
            with worker_process(env, queues="streams") as first:
                wait_for(lambda: fake.requests or None, 60)  # the act's call is under way
                kill_9(first)
            act.refresh_from_db()
            assert (act.status, act.attempts) == ("running", 1)
            assert not Liquid.objects.filter(seat=scene.tony).exists()

            with worker_process(env, queues="streams"):
                wait_for(
                    lambda: SeatAct.objects.filter(
                        pk=act.pk, status__in=["done", "failed"]
                    ).first(),
                    90,
                )
        act.refresh_from_db()
        assert act.status == "done", act.error
        assert act.attempts >= 2  # the killed run and the rerun
        (liquid,) = Liquid.objects.filter(seat=scene.tony)  # once
        assert (liquid.content, liquid.status) == (LINE, "committed")
        assert len(fake.requests) >= 2

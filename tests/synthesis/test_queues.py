"""Two queues (issue 24, §9 and §11): a medium pass resolves its outcome on the short queue
and hands its narrative to the streams queue; the sweeps enqueue again only work whose task
is really lost, never work that is merely queued; and outcomes never wait for the threads
that model streams hold."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from config.celery import app
from lmix.realtime import queued
from productions import enqueue as production_enqueue
from productions.models import Turn
from productions.services import turn_request
from synthesis import enqueue, medium, tasks
from synthesis.medium import run as run_module
from synthesis.models import Narrative, Outcome, Pass
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.synthesis.conftest import Scene
from tests.waiting import wait_for

AWAITING = run_module.AWAITING_STREAM


@pytest.fixture
def sent(monkeypatch):
    """(task name, args) of every task enqueued, nothing sent to a broker."""
    calls: list[tuple[str, tuple]] = []
    for task in (tasks.medium_pass_task, tasks.flesh_task):
        monkeypatch.setattr(task, "delay", lambda *args, name=task.name: calls.append((name, args)))
    return calls


def queue_of(task_name: str) -> str:
    route = app.amqp.router.route({}, task_name)
    return route["queue"].name


def test_model_streams_have_a_queue_of_their_own():
    streams = {
        "synthesis.tasks.flesh_task",
        "synthesis.tasks.ai_act_task",
        "synthesis.tasks.state_pass_task",
        "synthesis.tasks.scene_summary_task",
        "productions.tasks.turn_generate_task",
        "productions.tasks.draft_generate_task",
    }
    short = {
        "synthesis.tasks.medium_pass_task",
        "synthesis.tasks.soft_pass_task",
        "synthesis.tasks.window_fire_task",
        "synthesis.tasks.frames_sweep_task",
        "synthesis.tasks.scene_check_task",
        "lmix.tasks.jobs_sweep_task",
    }
    assert {queue_of(name) for name in streams} == {"streams"}
    assert {queue_of(name) for name in short} == {"short"}


def test_a_pass_stores_its_outcome_then_hands_its_narrative_to_a_stream_worker(
    user, sent, django_capture_on_commit_callbacks
):
    scene = Scene(user)
    pass_ = scene.fire(scene.alice, scene.commit(scene.alice, "I light the lamp."))

    with django_capture_on_commit_callbacks(execute=True):
        medium.medium_pass_run(pass_id=pass_.pk)
    handed = Pass.objects.get(pk=pass_.pk)
    assert (handed.status, handed.lease_owner) == ("running", AWAITING)
    assert Outcome.objects.filter(source_pass=pass_).count() == 1
    assert not Narrative.objects.filter(source_pass=pass_).exists()
    assert sent == [("synthesis.tasks.flesh_task", (str(pass_.pk),))]
    assert queued.is_queued(enqueue.flesh_key(pass_.pk))

    tasks.flesh_task(str(pass_.pk))  # as the stream worker runs it
    assert not queued.is_queued(enqueue.flesh_key(pass_.pk))
    done = Pass.objects.get(pk=pass_.pk)
    assert done.status == "done" and done.attempts == 1
    story = Narrative.objects.get(source_pass=pass_)
    assert story.status == "done" and story.text

    medium.medium_flesh_run(pass_id=pass_.pk)  # a duplicate task: nothing happens
    assert Narrative.objects.get(source_pass=pass_).pk == story.pk


def test_the_sweep_leaves_queued_passes_alone_and_enqueues_lost_ones_once(user, sent):
    scene = Scene(user)
    long_ago = timezone.now() - timedelta(minutes=10)
    waiting = [scene.fire(scene.alice, scene.commit(scene.alice, f"I wait {i}.")) for i in range(3)]
    handed = scene.fire(scene.bob, scene.commit(scene.bob, "I listen."))
    Pass.objects.filter(pk__in=[p.pk for p in waiting]).update(updated_at=long_ago)
    Pass.objects.filter(pk=handed.pk).update(
        status="running", lease_owner=AWAITING, heartbeat_at=long_ago, attempts=1
    )
    for pass_ in waiting:
        cache.set(queued.PREFIX + enqueue.medium_key(pass_.pk), 1)
    cache.set(queued.PREFIX + enqueue.flesh_key(handed.pk), 1)

    # A backlog: however often the sweep runs, nothing queued is enqueued again...
    for _ in range(5):
        assert medium.passes_sweep() == {"requeued": 0, "restarted": 0, "failed": 0}
    assert sent == []
    # ...and a narrative waiting for a stream worker is not a dead worker's lease.
    assert Pass.objects.get(pk=handed.pk).lease_owner == AWAITING

    # The broker lost them (their markers went with it): each is enqueued once.
    cache.delete_many(
        [queued.PREFIX + enqueue.medium_key(p.pk) for p in waiting]
        + [queued.PREFIX + enqueue.flesh_key(handed.pk)]
    )
    assert medium.passes_sweep()["requeued"] == 4
    assert medium.passes_sweep()["requeued"] == 0  # touched: not again this interval
    assert sorted(sent) == sorted(
        [("synthesis.tasks.medium_pass_task", (str(p.pk),)) for p in waiting]
        + [("synthesis.tasks.flesh_task", (str(handed.pk),))]
    )
    assert all(queued.is_queued(enqueue.medium_key(p.pk)) for p in waiting)


def test_lost_turns_are_enqueued_once_and_queued_ones_never(
    user, production_factory, monkeypatch, django_capture_on_commit_callbacks
):
    from productions import tasks as production_tasks
    from productions.generation import turns_sweep

    sent: list[str] = []
    monkeypatch.setattr(production_tasks.turn_generate_task, "delay", sent.append)
    production = production_factory(user)
    with django_capture_on_commit_callbacks(execute=True):
        turn = turn_request(production=production)
    assert sent == [str(turn.pk)]
    Turn.objects.filter(pk=turn.pk).update(updated_at=timezone.now() - timedelta(minutes=5))

    for _ in range(5):
        assert turns_sweep()["requeued"] == 0  # still queued behind others
    cache.delete(queued.PREFIX + production_enqueue.turn_key(turn.pk))
    assert turns_sweep()["requeued"] == 1
    assert turns_sweep()["requeued"] == 0
    assert sent == [str(turn.pk)] * 2


SLOW_WORDS = 60


@pytest.fixture
def slow_server():
    with FakeLLMServer() as fake:
        fake.responder = lambda request: Reply(
            text=" ".join(f"w{i}" for i in range(SLOW_WORDS)), chunk_delay=0.25
        )
        yield fake


@pytest.mark.django_db(transaction=True)
def test_an_outcome_never_waits_for_the_threads_streams_hold(
    user, slow_server, production_factory, celery_worker
):
    """The suite's worker has two short threads: four turns streaming for 15 s each would
    hold them all on one queue, and the commit's outcome would wait for two of them."""
    from lmix.models import LLMModel
    from synthesis.liquid import liquid_commit, liquid_submit

    model = LLMModel.objects.create(
        owner=user,
        name="Slow",
        provider="openai_compatible",
        api_endpoint=slow_server.base_url,
        model_id="slow",
    )
    turns = [turn_request(production=production_factory(user, model=model)) for _ in range(4)]
    ids = [turn.pk for turn in turns]
    wait_for(lambda: Turn.objects.filter(pk__in=ids, token_count__gte=1).count() == 4)

    scene = Scene(user, tempo=0)
    liquid = liquid_submit(
        frame=scene.frame, seat=scene.alice, content="I open the door.", user=scene.alice_player
    )
    liquid_commit(liquid=liquid, user=scene.alice_player)
    wait_for(lambda: Outcome.objects.filter(frame=scene.frame).exists())
    still = Turn.objects.filter(pk__in=ids, status="streaming").count()
    assert still == 4  # every stream was still running when the outcome landed


def test_a_queued_soft_pass_is_left_to_its_task_and_a_lost_one_decided(
    user, monkeypatch, django_capture_on_commit_callbacks
):
    from synthesis.liquid import liquid_submit
    from synthesis.soft import soft_passes_sweep

    monkeypatch.setattr(tasks.soft_pass_task, "delay", lambda *args: None)
    scene = Scene(user)
    with django_capture_on_commit_callbacks(execute=True):
        liquid = liquid_submit(
            frame=scene.frame, seat=scene.alice, content="I hum.", user=scene.alice_player
        )
    soft = Pass.objects.get(kind="soft", liquid=liquid)
    Pass.objects.filter(pk=soft.pk).update(created_at=timezone.now() - timedelta(minutes=5))

    assert soft_passes_sweep() == 0  # queued behind other work: its task will run it
    assert Pass.objects.get(pk=soft.pk).status == "pending"
    cache.delete(queued.PREFIX + enqueue.soft_key(soft.pk))
    assert soft_passes_sweep() == 1  # lost: heuristics decide
    assert Pass.objects.get(pk=soft.pk).status == "done"

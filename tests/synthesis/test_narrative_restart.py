"""A medium pass whose worker died mid-narrative is run again (issue 24, §6): the readers
of the cut-off narrative, and only they, are told `narrative.restarted` before the new
run's first delta, so no client keeps the old run's half text beside the new one."""

import json
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from lmix.models import LLMModel
from synthesis import medium
from synthesis.frames import spectators_set
from synthesis.medium import flesh as flesh_module
from synthesis.medium import run as run_module
from synthesis.models import Narrative, Pass
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.synthesis.conftest import Scene, run
from tests.synthesis.test_frame_socket import frame_socket, hears_nothing, next_event, ready
from tests.synthesis.test_spectators import spectator_socket

pytestmark = pytest.mark.django_db(transaction=True)

BONES = {
    "actions_resolved": [{"seat": "Alice Thompson", "action": "opens it", "result": "success"}],
    "world_facts": [],
    "interrupts": [],
}
CUT = "ALICE-MARKER-CUT the door creaks and the hall beyond is dark and she"
WHOLE = "ALICE-MARKER-WHOLE the door opens onto a lit hall."


class WorkerDied(BaseException):
    """The worker is killed mid-narrative: nothing of ours runs after it."""


def lapse_and_rerun(scene: Scene, pass_: Pass, monkeypatch) -> Narrative:
    """Kill the pass's worker after three deltas of its narrative, let the sweep find its
    lease lapsed, run it again; the cut-off narrative (deleted by the rerun)."""
    publish = flesh_module.NarrativeWriter.publish

    def dies_after_three(writer, index: int, delta: str) -> None:
        publish(writer, index, delta)
        if index == 2:
            raise WorkerDied()

    monkeypatch.setattr(flesh_module.NarrativeWriter, "publish", dies_after_three)
    with pytest.raises(WorkerDied):
        run(pass_)
    monkeypatch.setattr(flesh_module.NarrativeWriter, "publish", publish)
    cut = Narrative.objects.get(source_pass=pass_)
    Pass.objects.filter(pk=pass_.pk).update(
        lease_owner="dead-host:1:abcd", heartbeat_at=timezone.now() - timedelta(minutes=5)
    )
    monkeypatch.setattr(run_module, "_enqueue", lambda pass_id: None)  # run here, below
    assert medium.passes_sweep(lapsed_after=60)["restarted"] == 1
    assert run(pass_).status == "done"
    return cut


def restart_scene(gm, server) -> tuple[Scene, Pass]:
    model = LLMModel.objects.create(
        owner=gm,
        name="Fake",
        provider="openai_compatible",
        api_endpoint=server.base_url,
        model_id="fake-gpt",
    )
    scene = Scene(gm, medium_model=model)
    server.queue(data=BONES)
    server.queue(text=CUT)
    server.queue(text=WHOLE)  # the rerun's (its outcome is kept: no second bones call)
    return scene, scene.fire(scene.alice, scene.commit(scene.alice, "I open the door."))


def test_a_rerun_tells_the_narratives_readers_only_between_the_two_runs(
    user, server, events, settings, monkeypatch
):
    settings.LMIX_STREAM_BATCH_SECONDS = 0  # a delta per piece: the worker dies mid-text
    settings.LMIX_LEASE_TIMEOUT_SECONDS = 3600  # only the test's own sweep finds it
    scene, pass_ = restart_scene(user, server)
    cut = lapse_and_rerun(scene, pass_, monkeypatch)
    whole = Narrative.objects.get(source_pass=pass_)
    assert whole.pk != cut.pk and whole.text == WHOLE
    alice, gm = f"frame.{scene.frame.pk}.seat.{scene.alice.pk}", f"frame.{scene.frame.pk}.gm"

    restarted = [(g, e) for g, e in events if e["type"] == "narrative.restarted"]
    body = {"type": "narrative.restarted", "solid": str(cut.pk), "seat": str(scene.alice.pk)}
    assert restarted == [(alice, {**body, "shared": False}), (gm, {**body, "shared": False})]
    for group in (alice, gm):
        # Every delta of the cut-off run before it, every one of the new run after it.
        stream = [
            (e["type"], e.get("solid"))
            for g, e in events
            if g == group and e["type"].startswith("narrative.")
        ]
        assert stream == [
            *[("narrative.token", str(cut.pk))] * 3,
            ("narrative.restarted", str(cut.pk)),
            *[("narrative.token", str(whole.pk))] * len(WHOLE.split()),
            ("narrative.done", str(whole.pk)),
        ]
    # Nobody else hears of either run, let alone its text.
    for group, event in events:
        if group not in {alice, gm}:
            assert not event["type"].startswith("narrative.")
            assert "ALICE-MARKER" not in json.dumps(event)


async def test_the_players_and_the_gms_sockets_drop_the_old_run_and_no_other_socket_hears_it(
    server, settings, monkeypatch
):
    settings.LMIX_STREAM_BATCH_SECONDS = 0
    settings.LMIX_LEASE_TIMEOUT_SECONDS = 3600

    @database_sync_to_async
    def setup():
        gm = UserFactory()
        scene, pass_ = restart_scene(gm, server)
        code = spectators_set(frame=scene.frame, enabled=True).spectator_code
        clients = [logged_in_client(u) for u in (gm, scene.alice_player, scene.bob_player)]
        return scene, pass_, clients, code, logged_in_client(UserFactory())

    scene, pass_, (gm, alice, bob), code, watcher = await setup()
    sockets = [await ready(frame_socket(scene.frame.id, c)) for c in (gm, alice, bob)]
    gm_socket, alice_socket, bob_socket = sockets
    spectator = spectator_socket(code, watcher)
    assert (await spectator.connect())[0]
    assert (await spectator.receive_json_from(timeout=5))["type"] == "ready"

    cut = await database_sync_to_async(lapse_and_rerun)(scene, pass_, monkeypatch)

    for communicator in (alice_socket, gm_socket):
        held: dict[str, str] = {}  # the client's narratives, built as the SPA does
        while True:
            event = await next_event(communicator)
            if event["type"] == "narrative.token":
                held[event["solid"]] = held.get(event["solid"], "") + event["delta"]
            elif event["type"] == "narrative.restarted":
                assert event["solid"] == str(cut.pk)
                assert CUT.startswith(held.pop(event["solid"]))  # it held the cut-off text
            elif event["type"] == "narrative.done":
                break
        assert list(held.values()) == [WHOLE]  # the half text is gone, the new one whole
    for communicator in (bob_socket, spectator):
        heard = []
        while not await communicator.receive_nothing(timeout=0.5):
            heard.append(await communicator.receive_json_from())
        assert heard  # the outcome and the windows reach them
        assert not any(e["type"].startswith("narrative.") for e in heard)
        assert "ALICE-MARKER" not in json.dumps(heard)
    assert await hears_nothing(bob_socket, 0.2)
    for communicator in (*sockets, spectator):
        await communicator.disconnect()

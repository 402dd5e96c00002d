"""Fixtures for frames: a production whose cast becomes seats, players who join them."""

from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from lmix.realtime import publish
from synthesis import medium
from synthesis.frames import frame_create, frame_join
from synthesis.models import Frame, Liquid, Pass, Window
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.fakes.llm_server import FakeLLMServer
from tests.productions.conftest import make_production, production_factory  # noqa: F401


def make_frame(gm, *, open_seats: int = 2, **options) -> Frame:
    """A frame of a 3-character production; the first `open_seats` seats wait for players,
    the rest are played by their assistants."""
    production = make_production(gm)
    personas = [member.assistant.persona_id for member in production.cast.all()]
    return frame_create(
        production=production, name="Scene", open_seats=personas[:open_seats], **options
    )


def seat_player(frame: Frame, position: int):
    """A new user who has taken the seat at `position`, and their API client."""
    player = UserFactory()
    seat = frame.seats.get(position=position)
    frame_join(user=player, invite_code=frame.invite_code, seat_id=seat.pk)
    return player, logged_in_client(player)


@pytest.fixture
def frame_factory():
    return make_frame


class Scene:
    """A frame of three characters: Alice and Bob played by people, Tony by an assistant."""

    def __init__(self, gm, **options) -> None:
        self.frame = make_frame(gm, open_seats=2, **options)
        self.alice_player, _ = seat_player(self.frame, 0)
        self.bob_player, _ = seat_player(self.frame, 1)
        self.alice, self.bob, self.tony = self.frame.seats.order_by("position")
        self.t0 = timezone.now() - timedelta(seconds=30)

    def commit(self, seat, text, *, pscale=-2, after=0.0, interruptive=False, targets=()):
        """Committed liquid for `seat`, `after` seconds into the scene."""
        return Liquid.objects.create(
            frame=self.frame,
            seat=seat,
            author=seat.user,
            content=text,
            status="committed",
            pscale=pscale,
            interruptive=interruptive,
            targets=[str(t.pk) for t in targets],
            committed_at=self.t0 + timedelta(seconds=after),
        )

    def submit(self, seat, text, *, pscale=0):
        return Liquid.objects.create(
            frame=self.frame, seat=seat, content=text, status="submitted", pscale=pscale
        )

    def window(self, seat, *liquids, status="firing", pscale=-2, trigger="expiry"):
        expires = timezone.now() + (timedelta(hours=1) if status == "open" else timedelta())
        window = Window.objects.create(
            frame=self.frame,
            seat=seat,
            status=status,
            pscale=pscale,
            expires_at=expires,
            trigger=trigger,
        )
        Liquid.objects.filter(pk__in=[x.pk for x in liquids]).update(window=window)
        return window

    def fire(self, seat, *liquids, pscale=-2, trigger="expiry") -> Pass:
        """A firing window holding `liquids` and its pending medium pass."""
        window = self.window(seat, *liquids, pscale=pscale, trigger=trigger)
        return Pass.objects.create(
            frame=self.frame, seat=seat, kind="medium", trigger=trigger, window=window
        )


def run(pass_: Pass) -> Pass:
    """Run a pending medium pass as the two workers would: its outcome (short queue), then
    its narrative (streams queue). The hand-over's task is caught: the suite's worker, once
    started, would race this for the narrative."""
    with mock.patch("synthesis.tasks.flesh_task.delay"):
        medium.medium_pass_run(pass_id=pass_.pk)
    medium.medium_flesh_run(pass_id=pass_.pk)
    return Pass.objects.get(pk=pass_.pk)


def sent(pass_: Pass, step: str) -> str:
    """Everything the pass sent in `step` calls, as one text."""
    return "\n".join(
        m["content"] for entry in pass_.messages if entry["step"] == step for m in entry["messages"]
    )


@pytest.fixture
def server():
    """A fake OpenAI-compatible server (tests/fakes/llm_server.py) for the test."""
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def events(monkeypatch):
    """(group, event) for everything published, in order."""
    published = []
    monkeypatch.setattr(
        publish, "_put", lambda group, message: published.append((group, message["payload"]))
    )
    return published

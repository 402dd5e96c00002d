"""Fixtures for frames: a production whose cast becomes seats, players who join them."""

import pytest

from productions.frame_services import frame_create, frame_join
from productions.models import Frame
from tests.conftest import logged_in_client
from tests.factories import UserFactory
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

"""A covert character's real name on the GM's page (issue 25, item 3): the GM's frame view
carries it beside the public name; a player's view never does, in any field."""

import json

import pytest

from tests.synthesis.conftest import make_frame, seat_player

pytestmark = pytest.mark.django_db

REAL = "REAL-NAME-MARKER Johnson"
PUBLIC = "Bob Wilson"


@pytest.fixture
def frame(user):
    """Alice and Bob wait for players; Bob's character is undercover: Johnson as Bob Wilson."""
    frame = make_frame(user, open_seats=2)
    undercover = frame.seats.get(position=1)
    undercover.persona.name, undercover.persona.known_as = REAL, PUBLIC
    undercover.persona.save()
    return frame


def test_the_gm_reads_a_covert_characters_real_name_beside_its_public_one(api, frame):
    view = api.get(f"/api/frames/{frame.id}").json()
    undercover = frame.seats.get(position=1)
    seat = next(s for s in view["seats"] if s["id"] == str(undercover.pk))
    assert seat["name"] == PUBLIC
    # Only the characters who go by another name: the others' names are their real ones.
    assert view["gm_names"] == {str(undercover.pk): REAL}


@pytest.mark.parametrize("position", [0, 1], ids=["another player", "its own player"])
def test_no_player_ever_reads_the_real_name_in_their_frame_view(frame, position):
    _, client = seat_player(frame, position)
    view = client.get(f"/api/frames/{frame.id}").json()
    assert "gm_names" not in view
    assert "REAL-NAME-MARKER" not in json.dumps(view)

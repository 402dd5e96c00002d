"""A seat's character sheet (synthesis/sheet.py): exactly what its character's prompts may
know. Markers are planted in every secret of a three-character scene: none reaches a sheet
whose character may not know it, the sheet says nothing its prompt does not, and only the
seat's player and the GM may read it."""

import json
import re

import pytest
from rest_framework.test import APIClient

from authoring.models import Membership
from lmix.models import LLMModel
from productions.knowledge import knowledge_text
from productions.services import production_create
from synthesis.frame_selectors import seats_for_prompts
from synthesis.frames import frame_create, frame_join, seat_leave
from tests.conftest import logged_in_client
from tests.factories import (
    AffiliationFactory,
    AssistantFactory,
    PersonaFactory,
    ScenarioFactory,
    UserFactory,
    WorldFactory,
)

pytestmark = pytest.mark.django_db

# The user, the frame, the caller's seats, every seat with its persona, every seated
# membership, the world, the scenario: one query each, whatever the cast's size.
QUERIES = 7
MARKER = re.compile(r"\b[A-Z]+-[A-Z-]+-MARKER\b")


def persona(gm, who: str, *, alias: str = "", groups=(), covert=()):
    """A persona whose every truth is a marker named after it (`who`): ALICE-INTERNAL-MARKER…
    Its real name is a marker too, so a leak of it behind `alias` shows."""
    p = PersonaFactory(
        owner=gm,
        name=f"{who}-REALNAME-MARKER",
        known_as=alias,
        universal_truth=f"{who}-UNIVERSAL-MARKER",
        internal_truth=f"{who}-INTERNAL-MARKER",
        external_truth=f"{who}-EXTERNAL-MARKER",
        style=f"{who}-STYLE-MARKER",
    )
    for group in groups:
        Membership.objects.create(persona=p, affiliation=group, covert=group in covert)
    return p


def group(gm, what: str):
    return AffiliationFactory(
        owner=gm,
        name=f"{what}-NAME-MARKER",
        universal_truth=f"{what}-UNIVERSAL-MARKER",
        internal_truth=f"{what}-INTERNAL-MARKER",
        external_truth=f"{what}-EXTERNAL-MARKER",
    )


class Table:
    """Alice and Bob played by people, Tony by an assistant.
    - Alice (known as The Painter) is openly in the Circle and covertly in the Ring;
    - Bob (known as The Porter) is openly in the Lodge and covertly in the Ring;
    - Tony (known as The Tailor) is covertly in the Cell.
    So Alice and Bob know each other's real names and Ring; Tony knows neither; nobody but
    Tony knows of the Cell, and only Bob the Lodge's inside."""

    def __init__(self) -> None:
        self.gm = UserFactory()
        gm = self.gm
        circle, lodge, ring, cell = (group(gm, g) for g in ("CIRCLE", "LODGE", "RING", "CELL"))
        alice = persona(gm, "ALICE", alias="The Painter", groups=[circle, ring], covert=[ring])
        bob = persona(gm, "BOB", alias="The Porter", groups=[lodge, ring], covert=[ring])
        tony = persona(gm, "TONY", alias="The Tailor", groups=[cell], covert=[cell])
        model = LLMModel.objects.get(owner=gm, provider="offline")
        production = production_create(
            owner=gm,
            name="Sheets",
            world=WorldFactory(owner=gm, name="Harbour", description="WORLD-DESC-MARKER"),
            scenario=ScenarioFactory(owner=gm, name="Night", description="SCENE-DESC-MARKER"),
            assistants=[
                AssistantFactory(owner=gm, persona=p, model=model) for p in (alice, bob, tony)
            ],
        )
        self.frame = frame_create(
            production=production, name="Sheets", open_seats=[alice.pk, bob.pk]
        )
        self.alice, self.bob, self.tony = self.frame.seats.order_by("position")
        self.alice_player, self.bob_player = UserFactory(), UserFactory()
        for player, seat in ((self.alice_player, self.alice), (self.bob_player, self.bob)):
            frame_join(user=player, invite_code=self.frame.invite_code, seat_id=seat.pk)

    def url(self, seat) -> str:
        return f"/api/frames/{self.frame.pk}/seats/{seat.pk}/sheet"

    def sheet(self, user, seat) -> dict:
        response = logged_in_client(user).get(self.url(seat))
        assert response.status_code == 200, response.content
        return response.json()


@pytest.fixture
def table():
    return Table()


def markers(sheet: dict) -> set[str]:
    return set(MARKER.findall(json.dumps(sheet)))


def test_a_sheet_holds_my_secrets_and_my_groups_but_no_one_elses(table):
    sheet = table.sheet(table.alice_player, table.alice)
    seen = markers(sheet)
    # Mine, all of it; my groups' insides; the world and scene.
    assert {
        "ALICE-REALNAME-MARKER",
        "ALICE-INTERNAL-MARKER",
        "ALICE-EXTERNAL-MARKER",
        "CIRCLE-INTERNAL-MARKER",
        "RING-INTERNAL-MARKER",
        "WORLD-DESC-MARKER",
        "SCENE-DESC-MARKER",
    } <= seen
    # Nobody else's secret, no inside of a group I am not in, no covert group I am not in,
    # no real name behind a public one unless we share a covert group (Bob's).
    assert not seen & {
        "BOB-INTERNAL-MARKER",
        "TONY-INTERNAL-MARKER",
        "BOB-STYLE-MARKER",
        "TONY-STYLE-MARKER",
        "LODGE-INTERNAL-MARKER",
        "CELL-NAME-MARKER",
        "CELL-UNIVERSAL-MARKER",
        "CELL-INTERNAL-MARKER",
        "CELL-EXTERNAL-MARKER",
        "TONY-REALNAME-MARKER",
    }
    assert sheet["me"] == {
        "name": "ALICE-REALNAME-MARKER",
        "public_name": "The Painter",
        "avatar_url": "",
        "universal": "ALICE-UNIVERSAL-MARKER",
        "internal": "ALICE-INTERNAL-MARKER",
        "external": "ALICE-EXTERNAL-MARKER",
        "style": "ALICE-STYLE-MARKER",
    }
    assert {(g["name"], g["covert"]) for g in sheet["groups"]} == {
        ("CIRCLE-NAME-MARKER", False),
        ("RING-NAME-MARKER", True),
    }
    assert (sheet["world"], sheet["scenario"]) == (
        {"name": "Harbour", "description": "WORLD-DESC-MARKER"},
        {"name": "Night", "description": "SCENE-DESC-MARKER"},
    )


def test_others_show_their_public_face_and_a_covert_comember_more(table):
    others = {o["seat"]: o for o in table.sheet(table.alice_player, table.alice)["others"]}
    assert list(others) == [str(table.bob.pk), str(table.tony.pk)]
    bob, tony = others[str(table.bob.pk)], others[str(table.tony.pk)]
    # Bob shares the Ring with Alice: his real name and his covert membership, with its
    # inside; the Lodge only from the outside.
    assert (bob["public_name"], bob["real_name"]) == ("The Porter", "BOB-REALNAME-MARKER")
    assert (bob["universal"], bob["external"]) == ("BOB-UNIVERSAL-MARKER", "BOB-EXTERNAL-MARKER")
    assert [(g["name"], g["covert"], g["internal"]) for g in bob["groups"]] == [
        ("RING-NAME-MARKER", True, "RING-INTERNAL-MARKER"),
        ("LODGE-NAME-MARKER", False, ""),
    ] or [(g["name"], g["covert"], g["internal"]) for g in bob["groups"]] == [
        ("LODGE-NAME-MARKER", False, ""),
        ("RING-NAME-MARKER", True, "RING-INTERNAL-MARKER"),
    ]
    # Tony: his public face, no group at all (his one is covert).
    assert tony["public_name"] == "The Tailor"
    assert tony["real_name"] is None
    assert tony["groups"] == []
    assert (tony["universal"], tony["external"]) == (
        "TONY-UNIVERSAL-MARKER",
        "TONY-EXTERNAL-MARKER",
    )


def test_a_covert_membership_is_seen_only_by_fellow_members(table):
    """Tony's sheet (the GM reads it) knows Alice and Bob by their public names only, Bob in
    the Lodge, and nothing of the Ring."""
    sheet = table.sheet(table.gm, table.tony)
    seen = markers(sheet)
    assert {"TONY-INTERNAL-MARKER", "CELL-NAME-MARKER", "CELL-INTERNAL-MARKER"} <= seen
    assert not seen & {
        "RING-NAME-MARKER",
        "RING-UNIVERSAL-MARKER",
        "RING-INTERNAL-MARKER",
        "ALICE-REALNAME-MARKER",
        "BOB-REALNAME-MARKER",
        "ALICE-INTERNAL-MARKER",
        "BOB-INTERNAL-MARKER",
        "CIRCLE-INTERNAL-MARKER",
        "LODGE-INTERNAL-MARKER",
    }
    others = {o["seat"]: o for o in sheet["others"]}
    assert [g["name"] for g in others[str(table.alice.pk)]["groups"]] == ["CIRCLE-NAME-MARKER"]
    assert [g["name"] for g in others[str(table.bob.pk)]["groups"]] == ["LODGE-NAME-MARKER"]
    assert {o["real_name"] for o in sheet["others"]} == {None}


@pytest.mark.parametrize("who", ["alice", "bob", "tony"])
def test_the_sheet_says_nothing_the_prompt_does_not(table, who):
    """Every fact of a sheet is in its character's compiled knowledge (what the soft and
    medium passes send), built from the same seats; the one addition is the character's
    own external truth, which every other character's prompt holds."""
    seat = getattr(table, who)
    sheet = table.sheet(table.gm, seat)
    seats = seats_for_prompts(frame=table.frame)
    speaker = next(s.persona for s in seats if s.pk == seat.pk)
    production = table.frame.production
    prompt = knowledge_text(
        speaker=speaker,
        cast=[s.persona for s in seats],
        world=production.world,
        scenario=production.scenario,
    )
    facts = [sheet["world"]["name"], sheet["world"]["description"], sheet["scenario"]["name"]]
    facts += [v for k, v in sheet["me"].items() if k not in ("external", "avatar_url")]
    for g in sheet["groups"]:
        facts += [g["name"], g["universal"], g["external"], g["internal"]]
    for other in sheet["others"]:
        facts += [other["public_name"], other["real_name"], other["universal"], other["external"]]
        for g in other["groups"]:
            facts += [g["name"], g["universal"], g["external"], g["internal"]]
    missing = [fact for fact in facts if fact and fact not in prompt]
    assert missing == []
    # And the other way: every marker of the prompt is on the sheet.
    assert set(MARKER.findall(prompt)) <= markers(sheet)


def test_only_the_seats_player_and_the_gm_read_its_sheet(table):
    assert table.sheet(table.bob_player, table.bob)["seat"] == str(table.bob.pk)
    for seat in (table.alice, table.bob, table.tony):
        assert table.sheet(table.gm, seat)["seat"] == str(seat.pk)
    bob = logged_in_client(table.bob_player)
    for seat in (table.alice, table.tony):  # another player's seat, an AI seat
        response = bob.get(table.url(seat))
        assert response.status_code == 404
        assert "MARKER" not in response.content.decode()
    outsider = logged_in_client(UserFactory())
    assert outsider.get(table.url(table.alice)).status_code == 404
    assert APIClient().get(table.url(table.alice)).status_code in (401, 403, 404)


def test_a_seat_of_another_frame_or_none_is_404_even_for_the_gm(table):
    gm = logged_in_client(table.gm)
    other = Table()
    assert gm.get(f"/api/frames/{table.frame.pk}/seats/{other.alice.pk}/sheet").status_code == 404
    missing = "00000000-0000-4000-8000-000000000000"
    assert gm.get(f"/api/frames/{table.frame.pk}/seats/{missing}/sheet").status_code == 404


def test_a_player_who_left_reads_the_sheet_no_more(table):
    seat_leave(seat=table.alice)
    response = logged_in_client(table.alice_player).get(table.url(table.alice))
    assert response.status_code == 404


def test_reading_a_sheet_asks_the_database_a_fixed_number_of_questions(
    table, django_assert_num_queries
):
    """No query per seat or per group (`QUERIES`): the compiler reads what
    `seats_for_prompts` prefetched."""
    client = logged_in_client(table.alice_player)
    with django_assert_num_queries(QUERIES):
        assert client.get(table.url(table.alice)).status_code == 200

"""A frame's export (GET /api/frames/{id}/export): a player downloads their own story and
nothing of anyone else's — markers planted in another player's narrative and intention,
in every internal truth and behind a public name never reach it, as JSON or Markdown —
while the GM's holds every seat's story; anyone else learns nothing."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from authoring.models import Membership
from synthesis.models import Liquid, Narrative, Outcome
from tests.conftest import logged_in_client
from tests.factories import AffiliationFactory, UserFactory
from tests.synthesis.conftest import make_frame, seat_player

pytestmark = pytest.mark.django_db

ALICE_STORY = "ALICE-OWN-NARRATIVE-MARKER"
ALICE_INTENT = "ALICE-OWN-INTENTION-MARKER"
BOB_STORY = "BOB-PRIVATE-NARRATIVE-MARKER"
BOB_INTENT = "BOB-PRIVATE-INTENTION-MARKER"
TONY_STORY = "TONY-PRIVATE-NARRATIVE-MARKER"
COVERT = "COVERT-GROUP-INTERNAL-MARKER"
REAL_NAME = "BOB-REAL-NAME-MARKER"
# Every internal truth make_production plants, and the ones planted here.
SECRETS = [
    "ALICE THOMPSON-SECRET-MARKER",
    "BOB WILSON-SECRET-MARKER",
    "TONY ROSETTI-SECRET-MARKER",
    "GROUP-SECRET-MARKER",
    COVERT,
    REAL_NAME,
]
NOT_ALICES = [BOB_STORY, BOB_INTENT, TONY_STORY, *SECRETS]
PUBLIC_FACT = "The lamp goes out."


class Story:
    """A frame of Alice and Bob (players) and Tony (an assistant): Bob secretly belongs to
    a covert group and goes by a public name; two outcomes, a narrative for each seat, and
    each player's intention (visible to all, as the frame's default lets them be)."""

    def __init__(self) -> None:
        self.gm = UserFactory()
        self.frame = make_frame(self.gm, liquid_visibility="all")
        self.frame.name = "Night at the Rosetti's: Part 1/2"
        self.frame.save(update_fields=["name"])
        self.alice_player, self.alice_api = seat_player(self.frame, 0)
        self.bob_player, self.bob_api = seat_player(self.frame, 1)
        self.alice, self.bob, self.tony = self.frame.seats.order_by("position")
        bob = self.bob.persona
        bob.name, bob.known_as = REAL_NAME, "The Stranger"
        bob.save(update_fields=["name", "known_as"])
        group = AffiliationFactory(owner=self.gm, internal_truth=COVERT)
        Membership.objects.create(persona=bob, affiliation=group, covert=True)
        t0 = timezone.now() - timedelta(minutes=10)
        self.first = self.outcome(seq=3, at=t0, fact=PUBLIC_FACT)
        self.second = self.outcome(seq=7, at=t0 + timedelta(minutes=2), fact="A door creaks.")
        self.narrate(self.alice, ALICE_STORY, self.first, at=t0 + timedelta(seconds=5))
        self.narrate(self.bob, BOB_STORY, self.first, at=t0 + timedelta(seconds=6))
        self.narrate(self.tony, TONY_STORY, self.second, at=t0 + timedelta(minutes=3))
        self.narrate(self.alice, "Alice waits.", self.second, at=t0 + timedelta(minutes=4))
        for seat, text in [(self.alice, ALICE_INTENT), (self.bob, BOB_INTENT)]:
            Liquid.objects.create(frame=self.frame, seat=seat, author=seat.user, content=text)
        self.gm_api = logged_in_client(self.gm)

    def outcome(self, *, seq: int, at, fact: str) -> Outcome:
        outcome = Outcome.objects.create(
            frame=self.frame,
            seq=seq,
            seat=self.alice,
            actions_resolved=[
                {"seat": str(self.alice.pk), "action": "lights a lamp", "result": "success"}
            ],
            world_facts=[fact],
            flags=[{"kind": "internal_truth", "owner": "Bob", "excerpt": "GUARD-FLAG-MARKER"}],
        )
        Outcome.objects.filter(pk=outcome.pk).update(created_at=at)
        return outcome

    def narrate(self, seat, text: str, outcome: Outcome, *, at) -> None:
        narrative = Narrative.objects.create(
            frame=self.frame,
            seat=seat,
            user=seat.user,
            text=text,
            outcome_ids=[str(outcome.pk)],
            trigger="expiry",
            status="done",
        )
        Narrative.objects.filter(pk=narrative.pk).update(created_at=at)

    def export(self, api, kind: str | None = None):
        query = f"?format={kind}" if kind is not None else ""
        return api.get(f"/api/frames/{self.frame.pk}/export{query}")


@pytest.fixture
def story() -> Story:
    return Story()


def present(markers: list[str], text: str) -> list[str]:
    return [marker for marker in markers if marker in text]


@pytest.mark.parametrize("kind", ["json", "md"])
def test_a_players_export_holds_their_story_and_nothing_of_anyone_elses(story, kind):
    response = story.export(story.alice_api, kind)
    assert response.status_code == 200, response.content
    text = response.content.decode()
    assert present(NOT_ALICES, text) == []
    assert "GUARD-FLAG-MARKER" not in text  # the guard's flags are the GM's
    assert present([ALICE_STORY, ALICE_INTENT, PUBLIC_FACT, "The Stranger"], text) == [
        ALICE_STORY,
        ALICE_INTENT,
        PUBLIC_FACT,
        "The Stranger",
    ]


def test_a_players_json_export_numbers_the_outcomes_and_orders_their_narratives(story):
    body = story.export(story.alice_api).json()  # json by default
    assert body["reader"] == "player" and body["my_seats"] == [str(story.alice.pk)]
    assert body["name"] == story.frame.name and body["production_name"] == "Therapy"
    assert [(o["number"], o["seq"]) for o in body["outcomes"]] == [(1, 3), (2, 7)]
    assert "flags" not in body["outcomes"][0]
    assert [(n["text"], n["outcomes"], n["after_outcome"]) for n in body["narratives"]] == [
        (ALICE_STORY, [1], 1),
        ("Alice waits.", [2], 2),
    ]
    assert body["narratives"][0]["character"] == "Alice Thompson"
    assert body["narratives"][0]["player"] == story.alice_player.username
    assert [x["content"] for x in body["intentions"]] == [ALICE_INTENT]
    assert [s["name"] for s in body["seats"]] == ["Alice Thompson", "The Stranger", "Tony Rosetti"]


def test_the_other_players_export_is_theirs_alone(story):
    text = story.export(story.bob_api, "md").content.decode()
    assert BOB_STORY in text and BOB_INTENT in text
    assert present([ALICE_STORY, ALICE_INTENT, TONY_STORY], text) == []


def test_the_gms_export_holds_every_seats_story_in_order(story):
    body = story.export(story.gm_api, "json").json()
    assert body["reader"] == "gm"
    assert [n["text"] for n in body["narratives"]] == [
        ALICE_STORY,
        BOB_STORY,
        TONY_STORY,
        "Alice waits.",
    ]
    assert {x["content"] for x in body["intentions"]} == {ALICE_INTENT, BOB_INTENT}
    assert body["outcomes"][0]["flags"][0]["excerpt"] == "GUARD-FLAG-MARKER"
    # Still no persona's or group's internal truth: an export is the scene, not the cast's secrets.
    assert present(SECRETS, json.dumps(body)) == []


def test_the_gms_markdown_tells_each_outcome_then_the_narratives_written_from_it(story):
    response = story.export(story.gm_api, "md")
    text = response.content.decode()
    order = [
        "# Night at the Rosetti's: Part 1/2",
        "## Cast",
        "**The Stranger**",
        "### 1. What happened",
        PUBLIC_FACT,
        ALICE_STORY,
        BOB_STORY,
        "### 2. What happened",
        TONY_STORY,
        "Alice waits.",
        "## Every intention",
    ]
    positions = [text.index(part) for part in order]
    assert positions == sorted(positions)
    assert "GUARD-FLAG-MARKER" in text


def test_markdown_is_an_attachment_named_after_the_frame(story):
    response = story.export(story.alice_api, "md")
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    disposition = response["Content-Disposition"]
    assert disposition == 'attachment; filename="night-at-the-rosettis-part-12-alice-thompson.md"'
    gm = story.export(story.gm_api, "json")
    assert (
        gm["Content-Disposition"]
        == 'attachment; filename="night-at-the-rosettis-part-12-scene.json"'
    )


def test_a_bad_format_is_refused_with_what_to_ask_for(story):
    for bad in ["pdf", "MD", ""]:
        response = story.export(story.alice_api, bad)
        assert response.status_code == 400, bad
        assert "format=json or format=md" in response.json()["detail"]


def test_an_outsider_learns_nothing_not_even_that_the_frame_exists(story):
    outsider = logged_in_client(UserFactory())
    for kind in ["json", "md", "pdf"]:
        response = story.export(outsider, kind)
        assert response.status_code == 404
        assert present([ALICE_STORY, BOB_STORY, PUBLIC_FACT], response.content.decode()) == []


def test_a_player_who_left_their_seat_exports_nothing(story):
    story.alice_api.post(
        f"/api/frames/{story.frame.pk}/leave", {"seat": str(story.alice.pk)}, format="json"
    )
    assert story.export(story.alice_api, "md").status_code == 404


def test_a_new_player_of_a_seat_never_reads_the_previous_players_intentions(story):
    story.alice_api.post(
        f"/api/frames/{story.frame.pk}/leave", {"seat": str(story.alice.pk)}, format="json"
    )
    _, newcomer = seat_player(story.frame, 0)
    body = story.export(newcomer).json()
    assert body["intentions"] == []
    # The seat's story is its character's: its new player reads it, marked as another's.
    assert body["narratives"][0]["player"] == story.alice_player.username
    markdown = story.export(newcomer, "md").content.decode()
    assert f"Your story (played by {story.alice_player.username} then)" in markdown
    assert ALICE_INTENT not in markdown

"""Rewinding a production (`POST /api/productions/{id}/rewind`): a dry run says what would
be undone and changes nothing; a rewind moves the head back along the followed branch and
keeps the later turns, which `PUT head` restores; refused clearly while a turn is being
written, for a turn off the branch or already last, and for anyone but the owner. What it
does to the cast's state: tests/synthesis/test_production_state.py."""

import pytest

from productions.models import Production, Turn

pytestmark = pytest.mark.django_db(transaction=True)


def say(api, production, content: str) -> dict:
    response = api.post(
        f"/api/productions/{production.pk}/turns", {"content": content}, format="json"
    )
    assert response.status_code == 201, response.content
    return response.json()


def rewind(api, production, to: object, **body):
    return api.post(
        f"/api/productions/{production.pk}/rewind", {"to": str(to), **body}, format="json"
    )


def head(production) -> str:
    return str(Production.objects.get(pk=production.pk).head_id)


def test_a_dry_run_says_what_a_rewind_undoes_and_the_rewind_keeps_it_restorable(
    api, user, production_factory
):
    production = production_factory(user)
    one, two, three = (say(api, production, f"Line {n}.") for n in (1, 2, 3))

    dry = rewind(api, production, one["id"], dry_run=True)
    assert dry.status_code == 200, dry.content
    answer = dry.json()
    assert [t["id"] for t in answer["turns"]] == [two["id"], three["id"]]
    assert answer["turns"][0] == {"id": two["id"], "speaker_name": "Director", "excerpt": "Line 2."}
    assert answer["head"] == answer["restore"] == three["id"] and answer["dry_run"] is True
    assert (answer["state_deltas"], answer["memories"]) == (0, 0)  # no state passes here
    assert head(production) == three["id"]

    done = rewind(api, production, one["id"]).json()
    assert done["head"] == one["id"] == head(production) and done["restore"] == three["id"]
    assert Turn.objects.filter(production=production).count() == 3  # kept
    detail = api.get(f"/api/productions/{production.pk}").json()
    assert detail["head"] == one["id"]

    # A new turn now starts a branch of its own from the rewound point.
    fork = say(api, production, "Another way.")
    assert fork["parent"] == one["id"]
    # Choosing the old branch's leaf again restores it.
    assert (
        api.put(
            f"/api/productions/{production.pk}/head", {"turn": three["id"]}, format="json"
        ).status_code
        == 200
    )
    assert head(production) == three["id"]


def test_a_rewind_is_refused_clearly(api, other_api, user, production_factory):
    production = production_factory(user)
    one = say(api, production, "Line 1.")
    two = say(api, production, "Line 2.")
    # Off the followed branch: a sibling of the second line.
    api.put(f"/api/productions/{production.pk}/head", {"turn": one["id"]}, format="json")
    sibling = say(api, production, "A sibling.")
    off = rewind(api, production, two["id"])
    assert off.status_code == 400 and "not on the branch" in off.json()["detail"]
    last = rewind(api, production, sibling["id"])
    assert last.status_code == 400 and "Nothing to undo" in last.json()["detail"]
    unknown = rewind(api, production, "00000000-0000-0000-0000-000000000000")
    assert unknown.status_code == 400 and "to" in unknown.json()["errors"]
    missing = api.post(f"/api/productions/{production.pk}/rewind", {}, format="json")
    assert missing.status_code == 400 and "to" in missing.json()["errors"]
    assert rewind(other_api, production, one["id"]).status_code == 404

    Turn.objects.create(
        production=production,
        parent_id=sibling["id"],
        depth=2,
        speaker_kind="assistant",
        speaker_name="X",
        status="streaming",
    )
    busy = rewind(api, production, one["id"], dry_run=True)
    assert busy.status_code == 409 and "still being written" in busy.json()["detail"]
    assert head(production) == sibling["id"]  # nothing moved


def test_deleting_the_heads_turn_moves_the_head_to_the_branch_the_page_shows(
    api, user, production_factory
):
    """The head is exactly where the shown branch ends (a rewound head hides what follows
    it): with the head's turn deleted, it moves to the newest turn left under its parent,
    the branch the page shows then, not to the parent with its other versions hidden."""
    production = production_factory(user)
    first = say(api, production, "Line 1.")
    other = say(api, production, "One version.")
    api.put(f"/api/productions/{production.pk}/head", {"turn": first["id"]}, format="json")
    shown = say(api, production, "Another version.")
    assert api.delete(f"/api/productions/{production.pk}/turns/{shown['id']}").status_code == 204
    assert head(production) == other["id"]

"""The persona API's covert memberships and public name (known_as)."""

import pytest

from authoring.models import Membership, Persona
from tests.factories import AffiliationFactory

pytestmark = pytest.mark.django_db


def covert_flags(persona_id) -> dict[str, bool]:
    return {
        str(m.affiliation_id): m.covert for m in Membership.objects.filter(persona_id=persona_id)
    }


def test_a_persona_is_created_with_covert_memberships_and_a_public_name(api, user):
    unit = AffiliationFactory(owner=user, name="NYPD Undercover Unit")
    club = AffiliationFactory(owner=user, name="Chess Club")
    created = api.post(
        "/api/personas",
        {
            "name": "Detective Johnson",
            "known_as": " Bob Wilson ",
            "affiliations": [str(unit.id), str(club.id)],
            "covert_affiliations": [str(unit.id)],
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["known_as"] == "Bob Wilson"
    assert sorted(body["affiliations"]) == sorted([str(unit.id), str(club.id)])
    assert body["covert_affiliations"] == [str(unit.id)]
    assert covert_flags(body["id"]) == {str(unit.id): True, str(club.id): False}
    assert api.get(f"/api/personas/{body['id']}").json()["covert_affiliations"] == [str(unit.id)]
    assert api.get("/api/personas").json()[0]["known_as"] == "Bob Wilson"


def test_a_persona_without_them_has_no_public_name_and_public_memberships(api, user):
    club = AffiliationFactory(owner=user)
    body = api.post(
        "/api/personas", {"name": "Ada", "affiliations": [str(club.id)]}, format="json"
    ).json()
    assert body["known_as"] == "" and body["covert_affiliations"] == []
    assert covert_flags(body["id"]) == {str(club.id): False}


def test_covert_affiliations_must_be_among_the_affiliations(api, user):
    unit = AffiliationFactory(owner=user, name="NYPD Undercover Unit")
    club = AffiliationFactory(owner=user, name="Chess Club")
    refused = api.post(
        "/api/personas",
        {
            "name": "Johnson",
            "affiliations": [str(club.id)],
            "covert_affiliations": [str(unit.id)],
        },
        format="json",
    )
    assert refused.status_code == 400
    assert "must be among the persona's affiliations" in refused.json()["detail"]
    assert "NYPD Undercover Unit" in refused.json()["errors"]["covert_affiliations"][0]
    assert not Persona.objects.exists()

    # On an update, the persona's current affiliations count when none are sent.
    persona_id = api.post(
        "/api/personas", {"name": "Johnson", "affiliations": [str(club.id)]}, format="json"
    ).json()["id"]
    refused = api.patch(
        f"/api/personas/{persona_id}", {"covert_affiliations": [str(unit.id)]}, format="json"
    )
    assert refused.status_code == 400 and "covert_affiliations" in refused.json()["errors"]
    assert covert_flags(persona_id) == {str(club.id): False}


def test_covert_affiliations_of_another_user_are_refused(api, user, other_user):
    theirs = AffiliationFactory(owner=other_user)
    refused = api.post(
        "/api/personas",
        {"name": "Johnson", "affiliations": [], "covert_affiliations": [str(theirs.id)]},
        format="json",
    )
    assert refused.status_code == 400 and "covert_affiliations" in refused.json()["errors"]


def test_an_update_changes_the_flags_and_keeps_them_when_not_sent(api, user):
    unit = AffiliationFactory(owner=user)
    club = AffiliationFactory(owner=user)
    persona_id = api.post(
        "/api/personas",
        {"name": "Johnson", "affiliations": [str(unit.id)], "covert_affiliations": [str(unit.id)]},
        format="json",
    ).json()["id"]
    joined_at = Membership.objects.get(persona_id=persona_id).joined_at

    # New affiliations without covert_affiliations: the kept membership stays covert.
    kept = api.patch(
        f"/api/personas/{persona_id}",
        {"affiliations": [str(unit.id), str(club.id)], "known_as": "Bob Wilson"},
        format="json",
    )
    assert kept.status_code == 200, kept.content
    assert kept.json()["covert_affiliations"] == [str(unit.id)]
    assert kept.json()["known_as"] == "Bob Wilson"
    assert Membership.objects.get(persona_id=persona_id, affiliation=unit).joined_at == joined_at

    # The flags alone: the response shows them, not the instance's stale prefetch.
    swapped = api.patch(
        f"/api/personas/{persona_id}", {"covert_affiliations": [str(club.id)]}, format="json"
    )
    assert swapped.status_code == 200 and swapped.json()["covert_affiliations"] == [str(club.id)]
    assert covert_flags(persona_id) == {str(unit.id): False, str(club.id): True}

    # A full update without the optional fields keeps them, like every optional field.
    put = api.put(
        f"/api/personas/{persona_id}",
        {"name": "Johnson", "affiliations": [str(club.id)]},
        format="json",
    )
    assert put.status_code == 200 and put.json()["known_as"] == "Bob Wilson"
    assert put.json()["covert_affiliations"] == [str(club.id)]

    cleared = api.patch(
        f"/api/personas/{persona_id}", {"covert_affiliations": [], "known_as": ""}, format="json"
    )
    assert cleared.json()["covert_affiliations"] == [] and cleared.json()["known_as"] == ""
    assert covert_flags(persona_id) == {str(club.id): False}


def test_a_public_name_is_limited_like_a_name(api):
    refused = api.post("/api/personas", {"name": "Ada", "known_as": "x" * 201}, format="json")
    assert refused.status_code == 400 and "known_as" in refused.json()["errors"]

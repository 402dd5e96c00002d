"""`manage.py seed_demo`: the seed's world and cast, loadable again and again."""

import io

import pytest
from django.core.management import call_command

from authoring.models import Affiliation, Assistant, Persona
from productions.models import Production

pytestmark = pytest.mark.django_db


def test_seed_demo_is_idempotent_and_builds_the_seed_example(client):
    output = io.StringIO()
    call_command("seed_demo", stdout=output)
    call_command("seed_demo", stdout=output)
    assert "demo / demo-password-lmix" in output.getvalue()

    assert Persona.objects.count() == 3 and Affiliation.objects.count() == 2
    bob = Persona.objects.get(name="Detective Johnson", known_as="Bob Wilson")
    assert [(m.affiliation.name, m.covert) for m in bob.memberships.all()] == [
        ("NYPD Undercover Unit", True)
    ]
    assert all(a.model.provider == "offline" for a in Assistant.objects.all())
    production = Production.objects.get()
    assert production.cast.count() == 3
    assert client.login(username="demo", password="demo-password-lmix")
    assert client.get("/api/productions").json()[0]["name"] == "Therapy Session"


def test_seeding_again_renames_the_former_undercover_persona():
    call_command("seed_demo", stdout=io.StringIO())
    Persona.objects.filter(name="Detective Johnson").update(
        name="Bob Wilson / Detective Johnson", known_as=""
    )
    call_command("seed_demo", stdout=io.StringIO())
    assert Persona.objects.count() == 3
    assert Persona.objects.get(known_as="Bob Wilson").name == "Detective Johnson"

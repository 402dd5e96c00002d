"""`manage.py seed_demo`: the seed's world and cast, loadable again and again."""

import io

import pytest
from django.core.management import call_command

from lmix.models import Affiliation, Assistant, Persona
from productions.models import Production

pytestmark = pytest.mark.django_db


def test_seed_demo_is_idempotent_and_builds_the_seed_example(client):
    output = io.StringIO()
    call_command("seed_demo", stdout=output)
    call_command("seed_demo", stdout=output)
    assert "demo / demo-password-lmix" in output.getvalue()

    assert Persona.objects.count() == 3 and Affiliation.objects.count() == 2
    bob = Persona.objects.get(name="Bob Wilson / Detective Johnson")
    assert [a.name for a in bob.affiliations.all()] == ["NYPD Undercover Unit"]
    assert all(a.model.provider == "offline" for a in Assistant.objects.all())
    production = Production.objects.get()
    assert production.cast.count() == 3
    assert client.login(username="demo", password="demo-password-lmix")
    assert client.get("/api/productions").json()[0]["name"] == "Therapy Session"

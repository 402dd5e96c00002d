"""The demo production: the seed's "Therapy Session" with the three demo assistants."""

from django.contrib.auth.models import AbstractBaseUser

from authoring.models import Assistant, Scenario, World

from .models import Production
from .services import production_create

NAME = "Therapy Session"


def demo_production_seed(*, owner: AbstractBaseUser) -> Production:
    """Create the demo production once (idempotent: an existing one is left as it is)."""
    existing = Production.objects.filter(owner=owner, name=NAME).first()
    if existing is not None:
        return existing
    return production_create(
        owner=owner,
        name=NAME,
        world=World.objects.get(owner=owner, name="Modern NYC"),
        scenario=Scenario.objects.get(owner=owner, name="First Therapy Session"),
        assistants=list(Assistant.objects.filter(owner=owner).order_by("persona__name")),
        show_directive=True,
    )

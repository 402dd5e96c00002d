"""The seed design's demo data: Modern NYC, a first therapy session, two groups, three people."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from lmix.services import offline_model_ensure

from .models import Affiliation, Assistant, Persona, Scenario, World
from .services import persona_save

DEMO_USERS = [
    ("demo", "demo-password-lmix"),
    ("player2", "player2-password-lmix"),
]
DEMO_ADMIN = ("admin", "admin-password-lmix")

WORLD = {
    "name": "Modern NYC",
    "description": (
        "Present-day New York City. Ordinary physics, ordinary people, eight million stories. "
        "Police, crime families and therapists all work the same streets."
    ),
}
SCENARIO = {
    "name": "First Therapy Session",
    "description": (
        "A Tuesday afternoon in a quiet Manhattan therapy office. A new patient arrives for "
        "his first session; another client is waiting in the lobby."
    ),
}
AFFILIATIONS = {
    "NYPD Undercover Unit": {
        "universal_truth": "Elite law enforcement division focused on organized crime.",
        "internal_truth": (
            "Detective Johnson is Bob Wilson, investigating therapist fraud. Murphy takes "
            "bribes from the Italians on Tuesdays."
        ),
        "external_truth": "Tough on crime, by the book, incorruptible.",
    },
    "Rosetti Crime Family": {
        "universal_truth": "Local Italian-American business association.",
        "internal_truth": (
            "Control construction and waste management. Lieutenant Murphy is on our payroll - "
            "meets Tuesdays at the docks."
        ),
        "external_truth": "Community leaders, generous donors to local causes.",
    },
}
# name: (affiliations, the covert ones among them, fields). Detective Johnson is undercover
# as "Bob Wilson", a patient: the others know only that name, and only his unit knows he
# belongs to it.
PERSONAS = {
    "Alice Thompson": (
        [],
        [],
        {
            "universal_truth": "Therapist with 10 years experience, has an office in Manhattan.",
            "internal_truth": "Struggling with her own anxiety, considering career change.",
            "external_truth": "Caring professional, sometimes asks too many personal questions.",
        },
    ),
    "Detective Johnson": (
        ["NYPD Undercover Unit"],
        ["NYPD Undercover Unit"],
        {
            "known_as": "Bob Wilson",
            "universal_truth": "New patient, first therapy session, works in finance.",
            "internal_truth": (
                "Undercover as Bob Wilson to investigate therapist fraud. Hates lying to "
                "people, considering leaving undercover work."
            ),
            "external_truth": "Nervous, dealing with work stress, closed off emotionally.",
        },
    ),
    "Tony Rosetti": (
        ["Rosetti Crime Family"],
        [],
        {
            "universal_truth": "Owns several construction companies.",
            "internal_truth": "Wants to go legitimate but family won't let him.",
            "external_truth": "Successful businessman, bit rough around the edges.",
        },
    ),
}
# Earlier demo names, so that seeding again renames rather than duplicates.
FORMER_NAMES = {"Detective Johnson": "Bob Wilson / Detective Johnson"}


@transaction.atomic
def demo_seed() -> list[tuple[str, str]]:
    """Create (or refresh) the demo users and the first one's authoring data. Idempotent.

    Returns:
        The demo logins as (username, password).
    """
    users = [_demo_user(username, password) for username, password in DEMO_USERS]
    _demo_user(*DEMO_ADMIN, superuser=True)
    owner = users[0]
    World.objects.update_or_create(owner=owner, name=WORLD["name"], defaults=WORLD)
    Scenario.objects.update_or_create(owner=owner, name=SCENARIO["name"], defaults=SCENARIO)
    affiliations = {
        name: Affiliation.objects.update_or_create(owner=owner, name=name, defaults=truths)[0]
        for name, truths in AFFILIATIONS.items()
    }
    narrator = offline_model_ensure(owner=owner)
    for name, (groups, covert, fields) in PERSONAS.items():
        names = [name, FORMER_NAMES.get(name, name)]
        persona = Persona.objects.filter(owner=owner, name__in=names).first() or Persona(
            owner=owner
        )
        persona.name = name
        for attr, value in fields.items():
            setattr(persona, attr, value)
        persona_save(
            persona=persona,
            affiliations=[affiliations[group] for group in groups],
            covert_affiliations=[affiliations[group] for group in covert],
        )
        Assistant.objects.get_or_create(owner=owner, persona=persona, model=narrator)
    return [*DEMO_USERS, DEMO_ADMIN]


def _demo_user(username: str, password: str, superuser: bool = False) -> AbstractBaseUser:
    """Create a demo login once; an existing one is kept as it is (hashing a password on
    every start would cost seconds)."""
    user, created = get_user_model().objects.get_or_create(
        username=username, defaults={"is_staff": superuser, "is_superuser": superuser}
    )
    if created:
        user.set_password(password)
        user.save(update_fields=["password"])
    return user

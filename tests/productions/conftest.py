"""Fixtures for productions: a cast on a chosen model, and websocket clients."""

import pytest
from channels.testing import WebsocketCommunicator
from django.conf import settings

from config.asgi import application
from lmix.models import LLMModel
from productions.services import production_create
from tests.factories import (
    AffiliationFactory,
    AssistantFactory,
    PersonaFactory,
    ScenarioFactory,
    WorldFactory,
)


def make_production(
    owner,
    model: LLMModel | None = None,
    size: int = 3,
    show_directive=True,
    names: list[str] | None = None,
):
    """A production whose cast shares one model (the owner's offline narrator by default):
    the first `size` of Alice, Bob and Tony, or the characters `names`."""
    model = model or LLMModel.objects.get(owner=owner, provider="offline")
    group = AffiliationFactory(owner=owner, internal_truth="GROUP-SECRET-MARKER")
    assistants = []
    cast = names if names is not None else ["Alice Thompson", "Bob Wilson", "Tony Rosetti"][:size]
    for index, name in enumerate(cast):
        persona = PersonaFactory(
            owner=owner, name=name, internal_truth=f"{name.upper()}-SECRET-MARKER"
        )
        if index == 1:
            persona.affiliations.set([group])
        assistants.append(AssistantFactory(owner=owner, persona=persona, model=model))
    return production_create(
        owner=owner,
        name="Therapy",
        world=WorldFactory(owner=owner),
        scenario=ScenarioFactory(owner=owner),
        assistants=assistants,
        show_directive=show_directive,
    )


@pytest.fixture
def production_factory():
    return make_production


def session_cookie(client) -> bytes:
    name = settings.SESSION_COOKIE_NAME
    return f"{name}={client.cookies[name].value}".encode()


def socket(production_id, cookie: bytes | None = None) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://localhost"), (b"host", b"localhost")]
    if cookie:
        headers.append((b"cookie", cookie))
    return WebsocketCommunicator(application, f"/ws/productions/{production_id}/", headers=headers)

"""The Django admin shows frames and what happens in them, and changes none of it (only the
services keep windows, passes and sockets in step)."""

import pytest
from django.urls import reverse

from synthesis.models import Frame, Liquid, Narrative, Outcome, Pass, TableTalk, Window
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.synthesis.conftest import Scene

pytestmark = pytest.mark.django_db

MODELS = [Frame, Liquid, Window, Pass, Outcome, Narrative, TableTalk]


@pytest.fixture
def scene(frame_factory):
    scene = Scene(UserFactory())
    liquid = scene.commit(scene.alice, "ADMIN-LIQUID opens the shutters")
    pass_ = scene.fire(scene.alice, liquid)
    Outcome.objects.create(frame=scene.frame, seq=1, seat=scene.alice, source_pass=pass_)
    Narrative.objects.create(
        frame=scene.frame, seat=scene.alice, text="ADMIN-NARRATIVE", trigger="expiry"
    )
    TableTalk.objects.create(frame=scene.frame, author=scene.alice_player, text="ADMIN-TALK")
    return scene


@pytest.fixture
def admin_client():
    return logged_in_client(UserFactory(is_staff=True, is_superuser=True))


def url(model, view: str, *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


def test_every_frame_row_is_listed_and_readable(scene, admin_client):
    for model in MODELS:
        row = model.objects.filter(frame=scene.frame) if model is not Frame else Frame.objects
        obj = row.first()
        listing = admin_client.get(url(model, "changelist"))
        assert listing.status_code == 200, model
        page = admin_client.get(url(model, "change", obj.pk))
        assert page.status_code == 200, model
        assert b'name="_save"' not in page.content, f"{model.__name__} offers to save"
    assert b"ADMIN-LIQUID" in admin_client.get(url(Liquid, "changelist")).content
    frame_page = admin_client.get(url(Frame, "change", scene.frame.pk)).content.decode()
    assert scene.alice.persona.name in frame_page  # its seats, inline
    assert scene.frame.invite_code not in frame_page


def test_nothing_is_added_changed_or_deleted_through_the_admin(scene, admin_client):
    liquid = Liquid.objects.get(frame=scene.frame)
    changed = admin_client.post(url(Liquid, "change", liquid.pk), {"content": "EDITED"})
    assert changed.status_code == 403
    assert admin_client.get(url(Liquid, "add")).status_code == 403
    deleted = admin_client.post(url(Frame, "delete", scene.frame.pk), {"post": "yes"})
    assert deleted.status_code == 403
    liquid.refresh_from_db()
    assert liquid.content == "ADMIN-LIQUID opens the shutters"
    assert Frame.objects.filter(pk=scene.frame.pk).exists()


def test_a_user_who_is_not_staff_is_sent_to_the_admin_login(scene):
    client = logged_in_client(scene.alice_player)
    response = client.get(url(Narrative, "changelist"))
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]

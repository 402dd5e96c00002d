"""Persona authoring as chat front ends have it: greeting, example dialogue, tags, and an
uploaded avatar (type and size checked by content, stored under the data dir, served)."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from authoring.models import Persona
from productions.knowledge import knowledge_text
from tests.factories import PersonaFactory, ScenarioFactory, WorldFactory

pytestmark = pytest.mark.django_db

# The smallest valid files of each kind: their first bytes are what is judged.
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 64
GIF = b"GIF89a" + b"\x00" * 64
WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 64


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def upload(api, persona_id, content: bytes, name: str = "face.png", content_type="image/png"):
    file = SimpleUploadedFile(name, content, content_type=content_type)
    return api.post(f"/api/personas/{persona_id}/avatar", {"avatar": file}, format="multipart")


def test_greeting_example_dialogue_and_tags_round_trip_with_tags_tidied(api):
    created = api.post(
        "/api/personas",
        {
            "name": "Tony",
            "greeting": "*leans on the bar* What'll it be?",
            "example_dialogue": "Tony: Nobody leaves owing me.\nTony: Sit.",
            "tags": [" Noir ", "villain", "noir", "", "  big   city "],
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    body = api.get(f"/api/personas/{created.json()['id']}").json()
    assert body["greeting"] == "*leans on the bar* What'll it be?"
    assert body["example_dialogue"].endswith("Tony: Sit.")
    assert body["tags"] == ["Noir", "villain", "big city"]


def test_too_many_or_too_long_tags_are_a_clear_400(api):
    many = api.post(
        "/api/personas", {"name": "A", "tags": list("abcdefghijklmnopqrstu")}, format="json"
    )
    assert many.status_code == 400 and "tags" in many.json()["errors"]
    long = api.post("/api/personas", {"name": "A", "tags": ["x" * 41]}, format="json")
    assert long.status_code == 400 and "tags" in long.json()["errors"]


@pytest.mark.parametrize(
    ("content", "suffix"), [(PNG, "png"), (JPEG, "jpg"), (GIF, "gif"), (WEBP, "webp")]
)
def test_an_uploaded_image_becomes_the_avatar_and_is_served(api, user, media_root, content, suffix):
    persona = PersonaFactory(owner=user)
    # The name and declared type are the browser's word; the content decides.
    response = upload(api, persona.id, content, name="whatever.bin", content_type="text/plain")
    assert response.status_code == 200, response.content
    url = response.json()["avatar_url"]
    assert url.startswith("/media/avatars/") and url.endswith(f".{suffix}")
    assert Persona.objects.get(pk=persona.pk).avatar_url == url
    assert len(list((media_root / "avatars").iterdir())) == 1

    served = api.get(url)
    assert served.status_code == 200
    assert b"".join(served.streaming_content) == content
    assert served["Content-Type"].startswith("image/")
    assert "sandbox" in served["Content-Security-Policy"]


def test_a_file_that_is_not_an_image_is_a_400_and_nothing_is_stored(api, user, media_root):
    persona = PersonaFactory(owner=user, avatar_url="https://example.com/a.png")
    response = upload(api, persona.id, b"<svg onload=alert(1)>", name="x.png")
    assert response.status_code == 400
    assert response.json()["errors"]["avatar"] == [
        "The avatar must be a PNG, JPEG, WebP or GIF image."
    ]
    assert Persona.objects.get(pk=persona.pk).avatar_url == "https://example.com/a.png"
    assert not (media_root / "avatars").exists() or not any((media_root / "avatars").iterdir())


def test_an_image_over_2_mib_is_a_400_naming_the_limit(api, user, media_root):
    persona = PersonaFactory(owner=user)
    response = upload(api, persona.id, PNG + b"\x00" * (2 * 1024 * 1024))
    assert response.status_code == 400
    assert "the limit is 2 MiB" in response.json()["detail"]
    assert Persona.objects.get(pk=persona.pk).avatar_url == ""


def test_a_missing_file_is_a_400(api, user):
    persona = PersonaFactory(owner=user)
    response = api.post(f"/api/personas/{persona.id}/avatar", {}, format="multipart")
    assert response.status_code == 400 and "avatar" in response.json()["errors"]


def test_another_users_persona_takes_no_avatar(other_api, user, media_root):
    persona = PersonaFactory(owner=user)
    assert upload(other_api, persona.id, PNG).status_code == 404
    assert not (media_root / "avatars").exists()


def test_a_replaced_or_cleared_avatar_file_is_removed(
    api, user, media_root, django_capture_on_commit_callbacks
):
    persona = PersonaFactory(owner=user)
    with django_capture_on_commit_callbacks(execute=True):
        first = upload(api, persona.id, PNG).json()["avatar_url"]
    with django_capture_on_commit_callbacks(execute=True):
        second = upload(api, persona.id, GIF).json()["avatar_url"]
    assert [p.name for p in (media_root / "avatars").iterdir()] == [second.rsplit("/", 1)[1]]
    assert api.get(first).status_code == 404

    with django_capture_on_commit_callbacks(execute=True):
        cleared = api.patch(f"/api/personas/{persona.id}", {"avatar_url": ""}, format="json")
    assert cleared.status_code == 200
    assert not any((media_root / "avatars").iterdir())


def test_avatar_url_takes_http_urls_and_own_uploads_only(api, user):
    persona = PersonaFactory(owner=user)
    url = f"/api/personas/{persona.id}"
    ok = api.patch(url, {"avatar_url": "https://example.com/face.png"}, format="json")
    assert ok.status_code == 200
    for bad in ["javascript:alert(1)", "/etc/passwd", "//evil.example/x.png"]:
        response = api.patch(url, {"avatar_url": bad}, format="json")
        assert response.status_code == 400 and "avatar_url" in response.json()["errors"], bad


def test_example_dialogue_is_in_its_own_prompt_only(user):
    tony = PersonaFactory(owner=user, example_dialogue="Tony: TONY-VOICE-MARKER\nTony: Sit.")
    ada = PersonaFactory(owner=user)
    world, scenario = WorldFactory(owner=user), ScenarioFactory(owner=user)
    own = knowledge_text(speaker=tony, cast=[tony, ada], world=world, scenario=scenario)
    other = knowledge_text(speaker=ada, cast=[tony, ada], world=world, scenario=scenario)
    assert "- Example dialogue (your voice, not events of this scene):\n" in own
    assert "  Tony: TONY-VOICE-MARKER\n  Tony: Sit." in own
    assert "TONY-VOICE-MARKER" not in other


def test_the_upload_is_in_the_schema_as_multipart(api):
    schema = api.get("/api/schema", HTTP_ACCEPT="application/json")
    operation = schema.json()["paths"]["/api/personas/{id}/avatar/"]["post"]
    assert "multipart/form-data" in operation["requestBody"]["content"]


def test_media_outside_avatars_is_not_served(api, media_root):
    (media_root / "secret.txt").parent.mkdir(parents=True, exist_ok=True)
    (media_root / "secret.txt").write_bytes(b"x")
    assert api.get("/media/secret.txt").content != b"x"
    assert api.get("/media/avatars/../secret.txt").content != b"x"


def test_deleting_the_account_removes_its_uploaded_avatars(
    api, user, media_root, django_capture_on_commit_callbacks
):
    persona = PersonaFactory(owner=user)
    with django_capture_on_commit_callbacks(execute=True):
        assert upload(api, persona.id, PNG).status_code == 200
    assert any((media_root / "avatars").iterdir())
    with django_capture_on_commit_callbacks(execute=True):
        gone = api.delete(
            "/api/auth/me",
            {"username": user.username, "password": "a-good-password-1"},
            format="json",
        )
    assert gone.status_code == 204, gone.content
    assert not any((media_root / "avatars").iterdir())

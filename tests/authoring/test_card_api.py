"""`POST /api/personas/import` and `GET /api/personas/{id}/card`: real-format files in, cards
out, lossless round trips, the owner only, and nothing created by a refused import."""

import base64
import json
import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from authoring import card_png
from authoring.card_services import CARD_MAX_BYTES
from authoring.models import Persona
from productions.knowledge import knowledge_text
from tests.factories import PersonaFactory, ScenarioFactory, WorldFactory

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).parent / "fixtures"
MAPPED = [
    "name",
    "known_as",
    "style",
    "greeting",
    "example_dialogue",
    "tags",
    "universal_truth",
    "internal_truth",
    "external_truth",
    "imported",
]


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def upload(api, content: bytes, name: str = "card.json"):
    file = SimpleUploadedFile(name, content, content_type="application/octet-stream")
    return api.post("/api/personas/import", {"file": file}, format="multipart")


def fixture_upload(api, name: str):
    return upload(api, (FIXTURES / name).read_bytes(), name)


def mapped(body: dict) -> dict:
    return {key: body[key] for key in MAPPED}


def card_of(api, persona_id: str, spec: str, fmt: str):
    return api.get(f"/api/personas/{persona_id}/card?spec={spec}&format={fmt}")


def card_in_png(content: bytes) -> dict:
    texts = card_png.text_chunks(content)
    return json.loads(base64.b64decode(texts.get("ccv3") or texts["chara"]))


@pytest.mark.parametrize("name", ["mira.v2.json", "mira.v3.json", "captain.luminoracore.json"])
def test_a_json_file_imports_as_a_persona(api, name):
    response = fixture_upload(api, name)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["name"] in {"Mira Vance", "Captain Orla Finch"}
    assert body["imported"]
    assert Persona.objects.get(pk=body["id"]).owner_id is not None


def test_a_card_sent_as_the_json_body_imports_too(api):
    card = json.loads((FIXTURES / "mira.v3.json").read_text())
    response = api.post("/api/personas/import", card, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["known_as"] == "the Lamplighter"


@pytest.mark.parametrize(("name", "expected"), [("mira.v2.png", "V2"), ("mira.v3.png", "V3")])
def test_a_png_card_imports_with_its_image_as_the_avatar(api, media_root, name, expected):
    content = (FIXTURES / name).read_bytes()
    response = upload(api, content, name)
    assert response.status_code == 201, response.content
    body = response.json()
    # V3: the ccv3 chunk wins over the backfilled V2 one.
    assert body["name"] == "Mira Vance"
    assert (body["known_as"] == "the Lamplighter") == (expected == "V3")
    assert body["avatar_url"].startswith("/media/avatars/") and body["avatar_url"].endswith(".png")
    stored = (media_root / body["avatar_url"].removeprefix("/media/")).read_bytes()
    # The avatar is the image without the card (it would go stale as the persona changes).
    assert card_png.text_chunks(stored) == {}
    assert card_png.without_cards(content) == stored


@pytest.mark.parametrize(
    "source", ["mira.v2.json", "mira.v3.json", "mira.v3.png", "captain.luminoracore.json"]
)
@pytest.mark.parametrize(
    ("spec", "fmt"), [("v2", "json"), ("v3", "json"), ("v2", "png"), ("v3", "png")]
)
def test_import_of_an_export_is_lossless(api, source, spec, fmt):
    first = fixture_upload(api, source).json()
    exported = card_of(api, first["id"], spec, fmt)
    assert exported.status_code == 200, exported.content
    assert exported["Content-Type"] == ("image/png" if fmt == "png" else "application/json")
    assert exported["Content-Disposition"].startswith("attachment; filename=")
    again = upload(api, exported.content, f"again.{fmt}")
    assert again.status_code == 201, again.content
    assert mapped(again.json()) == mapped(first)


def test_a_persona_made_here_round_trips_through_a_card(api):
    created = api.post(
        "/api/personas",
        {
            "name": "Tony",
            "known_as": "Mr. T",
            "style": "gruff",
            "greeting": "What'll it be?",
            "example_dialogue": "Tony: Sit.",
            "tags": ["noir"],
            "universal_truth": "Owns the bar.",
            "internal_truth": "Owes the mob.",
            "external_truth": "A friendly barman.",
        },
        format="json",
    ).json()
    for spec in ("v2", "v3"):
        card = card_of(api, created["id"], spec, "json").json()
        assert card["spec"] == f"chara_card_{spec}"
        assert card["data"]["description"] == "Owns the bar."
        again = api.post("/api/personas/import", card, format="json").json()
        assert mapped(again) == mapped(created)


def test_an_exported_card_follows_its_spec(api):
    persona = fixture_upload(api, "mira.v3.json").json()
    v3 = card_of(api, persona["id"], "v3", "json").json()
    assert (v3["spec"], v3["spec_version"]) == ("chara_card_v3", "3.0")
    data = v3["data"]
    for key in ("name", "description", "personality", "scenario", "first_mes", "mes_example"):
        assert isinstance(data[key], str)
    assert data["nickname"] == "the Lamplighter"
    assert isinstance(data["group_only_greetings"], list)
    assert isinstance(data["modification_date"], int)
    assert data["extensions"]["risu/utilityBot"] is False  # foreign extensions kept
    v2 = card_of(api, persona["id"], "v2", "json").json()
    assert (v2["spec"], v2["spec_version"]) == ("chara_card_v2", "2.0")
    assert "nickname" not in v2["data"] and "assets" not in v2["data"]
    # V3-only fields ride in our namespaced extension, as the V2 spec allows.
    assert v2["data"]["extensions"]["lmix"]["card_v3"]["source"] == [
        "https://example.org/cards/mira"
    ]


def test_a_png_export_embeds_the_card_in_the_avatar_or_a_placeholder(api, media_root):
    imported = fixture_upload(api, "mira.v2.png").json()
    png = card_of(api, imported["id"], "v3", "png").content
    avatar = (media_root / imported["avatar_url"].removeprefix("/media/")).read_bytes()
    assert card_png.without_cards(png) == avatar
    assert card_png.text_chunks(png).keys() == {"ccv3"}
    assert card_in_png(png)["data"]["name"] == "Mira Vance"
    bare = api.post("/api/personas", {"name": "No face"}, format="json").json()
    png = card_of(api, bare["id"], "v2", "png").content
    assert card_png.without_cards(png) == card_png.placeholder()
    assert card_in_png(png)["spec"] == "chara_card_v2"


def test_only_the_owner_imports_into_their_own_and_exports_their_own(api, other_api, anon_client):
    persona = fixture_upload(api, "mira.v2.json").json()
    assert card_of(other_api, persona["id"], "v3", "json").status_code == 404
    assert card_of(anon_client, persona["id"], "v3", "json").status_code in (401, 403)
    assert fixture_upload(anon_client, "mira.v2.json").status_code in (401, 403)
    theirs = fixture_upload(other_api, "mira.v2.json").json()
    mine = [p["id"] for p in api.get("/api/personas").json()]
    assert theirs["id"] not in mine and persona["id"] in mine


def test_a_bad_spec_or_format_is_a_400(api):
    persona = fixture_upload(api, "mira.v2.json").json()
    assert card_of(api, persona["id"], "v4", "json").status_code == 400
    response = card_of(api, persona["id"], "v2", "gif")
    assert response.status_code == 400 and "format" in response.json()["errors"]


def spoiled_card(change) -> bytes:
    card = json.loads((FIXTURES / "mira.v2.json").read_text())
    change(card)
    return json.dumps(card).encode()


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        (b"{not json", "card.json", "not valid JSON"),
        (b"\xff\xfe\x00", "card.json", "not valid JSON"),
        (spoiled_card(lambda c: c.update(spec="chara_card_v9")), "card.json", "'chara_card_v9'"),
        (spoiled_card(lambda c: c["data"].pop("name")), "card.json", "data.name is missing"),
        (spoiled_card(lambda c: c["data"].update(tags=[1])), "card.json", r"data.tags\[0\]"),
        (b'{"hello": "world"}', "card.json", "Not a character card or a LuminoraCore"),
        (
            b'{"spec": "chara_card_v2", "data": {"name": "\\ud800"}}',
            "card.json",
            "not valid JSON .*unpaired surrogate",
        ),
        (b"[" * 40 + b"]" * 40, "card.json", "not valid JSON .*nested deeper"),
        (
            b'{"spec": "chara_card_v2", "data": {"name": "A", "extensions": {"k": "\\u0000"}}}',
            "card.json",
            "data.extensions.k holds a NUL character",
        ),
        ((FIXTURES / "plain.png").read_bytes(), "face.png", "no character card"),
        ((FIXTURES / "mira.v2.png").read_bytes()[:-30], "card.png", "truncated"),
        (
            card_png.with_text((FIXTURES / "plain.png").read_bytes(), {"chara": "not*base64"}),
            "card.png",
            "not base64",
        ),
        (
            card_png.with_text(
                (FIXTURES / "plain.png").read_bytes(),
                {"chara": base64.b64encode(b"[1,").decode()},
            ),
            "card.png",
            "'chara' chunk is not valid JSON",
        ),
    ],
    ids=[
        "bad-json",
        "not-utf8",
        "wrong-spec",
        "no-name",
        "wrong-type",
        "neither-format",
        "lone-surrogate",
        "too-deep",
        "nul-character",
        "png-without-card",
        "truncated-png",
        "chunk-not-base64",
        "chunk-not-json",
    ],
)
def test_a_malformed_file_is_a_clear_400_and_creates_nothing(
    api, media_root, content, name, message
):
    response = upload(api, content, name)
    assert response.status_code == 400, response.content
    body = response.json()
    assert re.search(message, body["detail"]), body
    assert body["errors"]["file"] == [body["detail"]]
    assert not Persona.objects.exists()
    assert not list(media_root.glob("avatars/*"))


def test_an_oversize_file_is_refused_before_anything_is_stored(api, media_root):
    content = (FIXTURES / "mira.v2.png").read_bytes() + b"\x00" * CARD_MAX_BYTES
    response = upload(api, content, "huge.png")
    assert response.status_code == 400
    assert "too large" in response.json()["detail"]
    assert not Persona.objects.exists()


def test_a_failed_save_removes_the_stored_avatar(api, media_root, monkeypatch):
    def fail(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(Persona, "save", fail)
    with pytest.raises(RuntimeError):
        upload(api, (FIXTURES / "mira.v2.png").read_bytes(), "card.png")
    assert list(media_root.glob("avatars/*")) == []
    monkeypatch.undo()
    assert not Persona.objects.exists()


def test_only_the_imported_persona_reads_its_cards_instructions(api, user):
    mira = Persona.objects.get(pk=fixture_upload(api, "mira.v2.json").json()["id"])
    other = PersonaFactory(owner=user, name="Other")
    world, scenario = WorldFactory(owner=user), ScenarioFactory(owner=user)
    own = knowledge_text(speaker=mira, cast=[mira, other], world=world, scenario=scenario)
    assert "Instructions from your character card:" in own
    assert "Never reveal the key's purpose" in own
    theirs = knowledge_text(speaker=other, cast=[mira, other], world=world, scenario=scenario)
    assert "Never reveal the key's purpose" not in theirs
    assert "Salt Council" not in theirs  # the book became Mira's internal truth


def test_a_non_ascii_name_gives_an_ascii_file_name(api):
    persona = api.post("/api/personas", {"name": "Мира “Lamp” Vance"}, format="json").json()
    response = card_of(api, persona["id"], "v3", "json")
    assert response["Content-Disposition"] == 'attachment; filename="Lamp__Vance.v3.json"'
    assert response.json()["data"]["name"] == "Мира “Lamp” Vance"


def test_an_imported_field_edited_out_of_shape_in_the_admin_still_exports(api, user):
    persona = PersonaFactory(owner=user, imported={"card": {"other": [1], "extensions": "x"}})
    response = card_of(api, str(persona.pk), "v2", "json")
    assert response.status_code == 200
    assert response.json()["data"]["extensions"]["lmix"]["internal_truth"] == persona.internal_truth

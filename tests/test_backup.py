"""`manage.py backup` / `restore` (config/backup.py, config/restore.py, docs/backups.md):
round trips of the whole instance and of one user, what a per-user archive leaves out
(other accounts, API keys), the refusals, and nothing partial after a failure."""

import io
import json
import zipfile
from pathlib import Path
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.core import serializers
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from authoring.models import Persona, World
from authoring.services import persona_avatar_set
from config import restore as restore_module
from config.archive import archived_models, label
from lmix.account_services import account_delete
from lmix.models import LLMCall, LLMModel
from synthesis.frames import frame_join
from synthesis.models import (
    Content,
    Frame,
    FrameBan,
    Liquid,
    Narrative,
    Outcome,
    Seat,
    Skill,
    TableTalk,
)
from synthesis.state.run import state_pass_run
from synthesis.state.significance import significance_pass_run
from synthesis.state_models import Memory, SignificancePass, StateDelta, StatePass
from tests.conftest import logged_in_client
from tests.factories import LLMModelFactory, PersonaFactory, UserFactory, WorldFactory
from tests.synthesis.conftest import Scene, make_frame, run

User = get_user_model()
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
KEY_MARKER = "sk-BACKUP-KEY-MARKER-7f3a"
OTHER_MARKER = "OTHER-USERS-SECRET-MARKER"


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.LMIX_STATE_PASSES = True
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def played_scene(gm) -> Scene:
    """A frame with everything a frame holds: two players, an outcome and narratives, table
    talk, content, a frame skill, a ban; the GM's avatar upload, keyed model and a call."""
    scene = Scene(gm)
    # Character state too (edges, memories, mood, their weights), run here, not queued: a
    # queued pass the suite's worker ran later would change what a test counts.
    with override_settings(LMIX_STATE_PASSES=False):
        run(scene.fire(scene.alice, scene.commit(scene.alice, "I open the window.")))
        run(scene.fire(scene.bob, scene.commit(scene.bob, "I sit by the fire.")))
    with mock.patch("synthesis.state.run.significance_pass_enqueue"):
        for outcome in Outcome.objects.filter(frame=scene.frame):
            StatePass.objects.create(outcome=outcome, frame=scene.frame)  # pending: jobs
            SignificancePass.objects.create(outcome=outcome, frame=scene.frame)
            state_pass_run(outcome_id=outcome.pk)
            significance_pass_run(outcome_id=outcome.pk)
    TableTalk.objects.create(frame=scene.frame, author=scene.alice_player, text="brb")
    Content.objects.create(
        frame=scene.frame, type="npc", name="Innkeeper", data={"description": "Gruff."}, author=gm
    )
    Skill.objects.create(
        scope="frame", face="player", category="tone", name="Noir", text="Dark.", frame=scene.frame
    )
    Skill.objects.create(
        scope="user", face="player", category="tone", name="Mine", text="x", owner=gm
    )
    FrameBan.objects.create(frame=scene.frame, user=UserFactory())
    persona = Persona.objects.filter(owner=gm).first()
    persona_avatar_set(persona=persona, upload=SimpleUploadedFile("a.png", PNG))
    model = LLMModelFactory(owner=gm, name="Keyed")
    model.api_key = KEY_MARKER
    model.save()
    LLMCall.objects.create(
        owner=gm, llm_model=model, provider="openai", model_id="m", purpose="t", kind="complete"
    )
    return scene


def other_users_data() -> object:
    """Another user with data of their own, markers in it."""
    other = UserFactory(email="other@example.org")
    WorldFactory(owner=other, description=OTHER_MARKER)
    PersonaFactory(owner=other, internal_truth=OTHER_MARKER)
    return other


def every_row() -> dict[str, list[dict]]:
    """Every archived row with its values as Python reads them (times to the microsecond),
    by model."""
    return {
        label(model): serializers.serialize("python", model._base_manager.order_by("pk"))
        for model in archived_models()
    }


def archive_text(path: Path) -> str:
    """Every member of the archive, decompressed, as one text."""
    with zipfile.ZipFile(path) as archive:
        return "\n".join(
            archive.read(name).decode("utf-8", "replace") for name in archive.namelist()
        )


def with_manifest(path: Path, tmp_path: Path, **changes) -> Path:
    """A copy of the archive whose manifest has `changes`."""
    changed = tmp_path / f"changed-{len(list(tmp_path.iterdir()))}.zip"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(changed, "w") as target:
        for name in source.namelist():
            data = source.read(name)
            if name == "manifest.json":
                data = json.dumps(json.loads(data) | changes).encode()
            target.writestr(name, data)
    return changed


def backup(tmp_path: Path, username: str | None = None) -> Path:
    path = tmp_path / f"{username or 'instance'}-{len(list(tmp_path.glob('*.zip')))}.zip"
    args = ["backup", "--output", str(path)] + (["--user", username] if username else [])
    call_command(*args, stdout=io.StringIO())
    return path


def restore(path: Path, *args: str) -> str:
    out = io.StringIO()
    call_command("restore", str(path), *args, stdout=out)
    return out.getvalue()


def gm_view(frame: Frame) -> dict:
    return logged_in_client(frame.owner).get(f"/api/frames/{frame.pk}").json()


def wipe() -> None:
    """An empty database, as after `flush` (its post-migrate rows included)."""
    call_command("flush", interactive=False, verbosity=0)


# Round trips


@pytest.mark.django_db(transaction=True)
def test_an_instance_round_trip_restores_every_row_and_upload(tmp_path, media_root):
    gm = UserFactory(is_staff=True)
    scene = played_scene(gm)
    other_users_data()
    assert Outcome.objects.count() == 2 and Narrative.objects.count() == 2
    assert Memory.objects.exists() and StateDelta.objects.exists()
    view = gm_view(scene.frame)  # logs the GM in first: last_login is part of every row
    before = every_row()
    avatars = {p.name: p.read_bytes() for p in (media_root / "avatars").iterdir()}
    path = backup(tmp_path)

    wipe()
    for file in (media_root / "avatars").iterdir():
        file.unlink()
    assert not User.objects.exists()
    out = restore(path)

    assert "2 outcomes" in out and "1 uploaded files" in out
    assert every_row() == before
    assert {p.name: p.read_bytes() for p in (media_root / "avatars").iterdir()} == avatars
    frame = Frame.objects.get(pk=scene.frame.pk)
    after = gm_view(frame)
    # The budget is this minute's counts in the cache, not the database: it may roll over.
    after.pop("budget"), view.pop("budget")
    assert after == view
    # New rows get keys after the restored ones (PostgreSQL's sequences were reset).
    assert UserFactory().pk > max(row["pk"] for row in before["auth.user"])
    # Keys stay encrypted as stored: readable with the same secret key.
    assert LLMModel.objects.get(name="Keyed").api_key == KEY_MARKER


def test_an_instance_archive_keeps_keys_encrypted_as_stored(db, tmp_path):
    played_scene(UserFactory())
    encrypted = LLMModel.objects.get(name="Keyed").api_key_encrypted
    text = archive_text(backup(tmp_path))
    assert encrypted in text and KEY_MARKER not in text


def test_a_user_archive_holds_no_other_users_rows_and_no_api_key(db, tmp_path):
    gm = UserFactory()
    scene = played_scene(gm)
    other = other_users_data()
    # The GM also plays in the other user's frame (and writes there): that frame is theirs.
    foreign = make_frame(other, open_seats=1)
    seat = foreign.seats.get(position=0)
    frame_join(user=gm, invite_code=foreign.invite_code, seat_id=seat.pk)
    Liquid.objects.create(frame=foreign, seat=seat, author=gm, content="Hi.")
    path = backup(tmp_path, gm.username)
    text = archive_text(path)
    encrypted = LLMModel.objects.get(name="Keyed").api_key_encrypted

    assert KEY_MARKER not in text and encrypted not in text
    assert OTHER_MARKER not in text
    for account in (other, scene.alice_player, scene.bob_player):
        assert account.username not in text
        assert account.password not in text
    assert str(foreign.pk) not in text
    with zipfile.ZipFile(path) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        users = json.loads(archive.read("data/auth.user.json"))
        seats = json.loads(archive.read("data/synthesis.seat.json"))
        bans = json.loads(archive.read("data/synthesis.frameban.json"))
    assert manifest["scope"] == "user" and manifest["user"]["username"] == gm.username
    assert [u["pk"] for u in users] == [gm.pk]
    # Seats played by others stay, open; the ban names another account, so it stays out.
    assert {s["fields"]["controller"] for s in seats} == {"open", "ai"}
    assert all(s["fields"]["user"] is None for s in seats)
    assert bans == []
    assert manifest["counts"]["synthesis.narrative"] == 2
    assert manifest["counts"]["lmix.llmcall"] == LLMCall.objects.filter(owner=gm).count()
    assert manifest["counts"]["authoring.world"] == 1


def test_a_players_archive_holds_nothing_of_the_frames_they_play_in(db, tmp_path):
    gm = UserFactory()
    scene = played_scene(gm)
    path = backup(tmp_path, scene.alice_player.username)
    with zipfile.ZipFile(path) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    held = {key for key, count in manifest["counts"].items() if count}
    assert held <= {"auth.user", "lmix.llmmodel", "lmix.llmcall"}  # their offline narrator
    text = archive_text(path)
    assert str(scene.frame.pk) not in text and gm.username not in text
    assert "I open the window." not in text


@pytest.mark.django_db(transaction=True)
def test_a_user_round_trip_into_a_fresh_database(tmp_path, media_root):
    gm = UserFactory(is_superuser=True)
    scene = played_scene(gm)
    other_users_data()
    outcomes = list(Outcome.objects.order_by("seq").values("id", "seq", "world_facts"))
    narratives = {n.pk: n.text for n in Narrative.objects.all()}
    calls = LLMCall.objects.filter(owner=gm).count()
    password, worlds = gm.password, set(World.objects.filter(owner=gm).values_list("pk", flat=True))
    path = backup(tmp_path, gm.username)

    wipe()
    for file in (media_root / "avatars").iterdir():
        file.unlink()
    restore(path)

    restored = User.objects.get()
    assert restored.username == gm.username and restored.password == password
    assert not restored.is_superuser  # rights belong to an instance, not to the archive
    assert set(World.objects.filter(owner=restored).values_list("pk", flat=True)) == worlds
    assert list(Outcome.objects.order_by("seq").values("id", "seq", "world_facts")) == outcomes
    assert {n.pk: n.text for n in Narrative.objects.all()} == narratives
    assert not Narrative.objects.exclude(user=None).exists()
    frame = Frame.objects.get(pk=scene.frame.pk)
    view = gm_view(frame)
    assert [o["id"] for o in view["outcomes"]] == [str(o["id"]) for o in outcomes]
    assert len(list((media_root / "avatars").iterdir())) == 1
    assert LLMModel.objects.get(name="Keyed").api_key == ""  # never archived: enter it again
    assert LLMCall.objects.filter(owner=restored).count() == calls


def test_a_user_round_trip_into_an_instance_with_other_users(db, tmp_path, media_root):
    gm = UserFactory()
    scene = played_scene(gm)
    other = other_users_data()
    frame_id, username = scene.frame.pk, gm.username
    path = backup(tmp_path, username)
    rows = {key: len(value) for key, value in every_row().items()}
    account_delete(user=gm, username=username, password="a-good-password-1")
    assert not Frame.objects.filter(pk=frame_id).exists()

    out = restore(path)

    assert f"for the user “{username}”" in out
    restored = User.objects.get(username=username)
    frame = Frame.objects.get(pk=frame_id)
    assert frame.owner == restored
    assert Seat.objects.filter(frame=frame, controller="open").count() == 2
    assert World.objects.filter(owner=other).count() == 1
    # Everything but the other players' references and the ban came back.
    after = {key: len(value) for key, value in every_row().items()}
    assert after["synthesis.outcome"] == rows["synthesis.outcome"]
    assert after["synthesis.frameban"] == rows["synthesis.frameban"] - 1
    assert gm_view(frame)["outcomes"]


def test_a_user_archive_restores_into_another_account(db, tmp_path):
    gm = UserFactory()
    scene = played_scene(gm)
    path = backup(tmp_path, gm.username)
    frame_id = scene.frame.pk
    account_delete(user=gm, username=gm.username, password="a-good-password-1")
    newcomer = UserFactory()  # has its own offline narrator, the default

    restore(path, "--as-user", newcomer.username)

    assert Frame.objects.get(pk=frame_id).owner == newcomer
    names = sorted(LLMModel.objects.filter(owner=newcomer).values_list("name", "is_default"))
    assert ("Offline Narrator", True) in names
    assert ("Offline Narrator (restored)", False) in names
    assert not User.objects.filter(username=gm.username).exists()


# Refusals


def test_restoring_the_same_user_twice_is_refused_clearly(db, tmp_path):
    gm = UserFactory()
    played_scene(gm)
    path = backup(tmp_path, gm.username)
    with pytest.raises(CommandError, match=f"A user named “{gm.username}” already exists"):
        restore(path)
    with pytest.raises(CommandError, match="already holds rows of the archive: .*Delete the user"):
        restore(path, "--as-user", UserFactory().username)


def test_an_instance_archive_is_refused_by_a_database_holding_data(db, tmp_path):
    played_scene(UserFactory())
    path = backup(tmp_path)
    with pytest.raises(CommandError, match=r"already holds data \(\d+ users.*--replace"):
        restore(path)


def test_replace_deletes_first_and_restores(db, tmp_path):
    gm = UserFactory()
    played_scene(gm)
    before = every_row()
    path = backup(tmp_path)
    UserFactory()
    WorldFactory(owner=gm, name="Added after the backup")
    out = restore(path, "--replace", "--noinput")
    assert "after deleting everything this database held" in out
    assert every_row() == before


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"format": "something-else"}, "Not an LMiX backup: its format is 'something-else'"),
        ({"version": 2}, "format version 2, made by a newer LMiX; this one reads up to version 1"),
        ({"version": "1"}, "Unknown backup format version '1'"),
        ({"migrations": {"lmix": ["9999_from_the_future"]}}, "newer LMiX .*9999_from_the_future"),
        ({"migrations": {"lmix": ["0001_initial"], "admin": ["0042_unknown"]}}, "admin.0042"),
        ({"migrations": ["lmix"]}, "has no migration state"),
        ({"models": None}, "lists no models"),
        ({"scope": "everything"}, "Unknown backup scope 'everything'"),
    ],
)
def test_an_archive_from_elsewhere_or_later_is_refused(db, tmp_path, changes, message):
    gm = UserFactory()
    path = with_manifest(backup(tmp_path, gm.username), tmp_path, **changes)
    account_delete(user=gm, username=gm.username, password="a-good-password-1")
    with pytest.raises(CommandError, match=message):
        restore(path)
    assert not User.objects.filter(username=gm.username).exists()


def test_an_unapplied_migration_asks_for_migrate_first(db, tmp_path, monkeypatch):
    path = backup(tmp_path, UserFactory().username)
    applied = restore_module.migration_refusal.__globals__["MigrationRecorder"]
    real = applied.applied_migrations
    monkeypatch.setattr(
        applied,
        "applied_migrations",
        lambda self: {k: v for k, v in real(self).items() if k[0] != "synthesis"},
    )
    with pytest.raises(CommandError, match="has not applied: run `manage.py migrate` first"):
        restore(path)


def test_a_file_that_is_no_backup_is_refused(db, tmp_path):
    not_zip = tmp_path / "x.zip"
    not_zip.write_text("hello")
    with pytest.raises(CommandError, match="not a zip archive"):
        restore(not_zip)
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as archive:
        archive.writestr("readme.txt", "hi")
    with pytest.raises(CommandError, match="has no manifest.json"):
        restore(empty)


def test_the_wrong_options_for_a_scope_are_refused(db, tmp_path):
    gm = UserFactory()
    with pytest.raises(CommandError, match="--replace applies to an instance archive"):
        restore(backup(tmp_path, gm.username), "--replace", "--noinput")
    with pytest.raises(CommandError, match="--as-user applies to a per-user archive"):
        restore(backup(tmp_path), "--as-user", gm.username)
    with pytest.raises(CommandError, match="no user named “nobody”"):
        backup(tmp_path, "nobody")


# All or nothing


def failing_after(monkeypatch, rows: int) -> None:
    real, done = restore_module._insert, []

    def insert(obj):
        if len(done) == rows:
            raise RuntimeError("injected failure")
        done.append(obj)
        real(obj)

    monkeypatch.setattr(restore_module, "_insert", insert)


def test_a_failing_instance_restore_leaves_the_database_as_it_was(db, tmp_path, monkeypatch):
    played_scene(UserFactory())
    path = backup(tmp_path)
    WorldFactory(name="Only here")
    before = every_row()
    failing_after(monkeypatch, 40)
    with pytest.raises(RuntimeError, match="injected"):
        restore(path, "--replace", "--noinput")
    assert every_row() == before


def test_a_failing_user_restore_creates_nothing(db, tmp_path, monkeypatch, media_root):
    gm = UserFactory()
    played_scene(gm)
    path = backup(tmp_path, gm.username)
    account_delete(user=gm, username=gm.username, password="a-good-password-1")
    for file in (media_root / "avatars").iterdir():
        file.unlink()
    before = every_row()
    failing_after(monkeypatch, 30)
    with pytest.raises(RuntimeError, match="injected"):
        restore(path)
    assert every_row() == before
    assert not list((media_root / "avatars").iterdir())


def test_a_failure_writing_uploads_removes_those_written(db, tmp_path, monkeypatch, media_root):
    gm = UserFactory()
    played_scene(gm)
    PersonaFactory(owner=gm)
    second = Persona.objects.filter(owner=gm, avatar_url="").first()
    persona_avatar_set(persona=second, upload=SimpleUploadedFile("b.png", PNG + b"2"))
    path = backup(tmp_path, gm.username)
    account_delete(user=gm, username=gm.username, password="a-good-password-1")
    for file in (media_root / "avatars").iterdir():
        file.unlink()
    real, calls = restore_module.default_storage.save, []

    def save(name, content):
        if calls:
            raise OSError("disk full")
        calls.append(name)
        return real(name, content)

    monkeypatch.setattr(restore_module.default_storage, "save", save)
    with pytest.raises(OSError, match="disk full"):
        restore(path)
    assert not list((media_root / "avatars").iterdir())
    assert not User.objects.filter(username=gm.username).exists()


def test_a_dry_run_says_what_it_would_create_and_creates_nothing(db, tmp_path, media_root):
    gm = UserFactory()
    played_scene(gm)
    path = backup(tmp_path, gm.username)
    account_delete(user=gm, username=gm.username, password="a-good-password-1")
    for file in (media_root / "avatars").iterdir():
        file.unlink()
    before = every_row()
    out = restore(path, "--dry-run")
    assert "Would create (user archive for the user" in out
    assert "2 narratives" in out and "1 user\n" in out and "1 uploaded files" in out
    assert every_row() == before
    assert not list((media_root / "avatars").iterdir())


def test_the_archive_is_readable_by_its_owner_only_and_overwrites_nothing(db, tmp_path):
    path = backup(tmp_path)
    assert path.stat().st_mode & 0o077 == 0
    with pytest.raises(CommandError, match="exists already"):
        call_command("backup", "--output", str(path))


def test_the_archive_rows_are_djangos_serialization(db, tmp_path):
    gm = UserFactory()
    played_scene(gm)
    with zipfile.ZipFile(backup(tmp_path)) as archive:
        rows = archive.read("data/synthesis.outcome.json")
    objects = list(serializers.deserialize("json", rows))
    assert {o.object.pk for o in objects} == set(Outcome.objects.values_list("pk", flat=True))

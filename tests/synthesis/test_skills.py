"""Skills: the shipped platform files, precedence by scope within a category, guard skills
no frame or user can replace, and the API's access rules."""

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from synthesis.models import Face, Skill, SkillScope
from synthesis.skills import platform as platform_files
from synthesis.skills import platform_skills_sync, skills_for, winning_skills
from synthesis.skills.loading import SPECIFICITY
from tests.synthesis.conftest import make_frame, seat_player

SHIPPED = platform_files.shipped_skills()


def test_every_shipped_file_parses_and_each_face_has_its_guard():
    files = list(platform_files.FILES.glob("*"))
    assert len({s.key for s in SHIPPED}) == len(SHIPPED) == len(files)
    guarded = {s.face for s in SHIPPED if s.guard}
    assert guarded == set(Face.values)
    player = {s.category for s in SHIPPED if s.face == Face.PLAYER}
    assert {"orientation", "outcome-rules", "word-budgets", "agency", "secrets"} <= player


def test_a_malformed_file_is_refused_by_name(tmp_path: Path):
    bad = tmp_path / "player-tone.md"
    bad.write_text("---\nface: player\ncategory: pacing\nname: X\n---\nText.\n")
    with pytest.raises(ValueError, match="player-tone.md"):
        platform_files.parse(bad)
    bad.write_text("no header at all")
    with pytest.raises(ValueError, match="header"):
        platform_files.parse(bad)


@pytest.mark.django_db
def test_migrate_leaves_the_shipped_skills_in_the_database():
    rows = Skill.objects.filter(scope=SkillScope.PLATFORM)
    assert {(r.key, r.text, r.guard) for r in rows} == {(s.key, s.text, s.guard) for s in SHIPPED}


@pytest.mark.django_db
def test_a_sync_keeps_an_admins_edit_and_follows_the_files_otherwise(monkeypatch):
    edited = Skill.objects.get(key="player-orientation")
    edited.text = "Our table plays it 50 / 50."
    edited.save()
    changed = [
        s if s.key != "player-word-budgets" else s.__class__(**{**s.__dict__, "text": "New."})
        for s in SHIPPED
        if s.key != "designer-skill-structure"
    ]
    changed = [
        s if s.key != "player-orientation" else s.__class__(**{**s.__dict__, "text": "Newer."})
        for s in changed
    ]
    monkeypatch.setattr(platform_files, "shipped_skills", lambda: tuple(changed))
    platform_skills_sync()
    assert Skill.objects.get(key="player-orientation").text == "Our table plays it 50 / 50."
    assert Skill.objects.get(key="player-orientation").shipped == "Newer."
    assert Skill.objects.get(key="player-word-budgets").text == "New."
    assert not Skill.objects.filter(key="designer-skill-structure").exists()
    platform_skills_sync()  # again: nothing moves
    assert Skill.objects.filter(scope=SkillScope.PLATFORM).count() == len(changed)


# Precedence, over any mix of scopes and categories.

CATEGORIES = ["tone", "pacing", "secrets", "agency"]
skill_specs = st.lists(
    st.tuples(
        st.sampled_from(list(SkillScope)),
        st.sampled_from([Face.PLAYER, Face.AUTHOR]),
        st.sampled_from(CATEGORIES),
        st.booleans(),
    ),
    max_size=12,
)


def unsaved(scope: str, face: str, category: str, guard: bool, n: int) -> Skill:
    return Skill(
        scope=scope,
        face=face,
        category=category,
        guard=guard and scope == SkillScope.PLATFORM,
        name=f"{scope}-{n}",
    )


@given(skill_specs)
def test_the_most_specific_skill_wins_each_category_and_guards_hold(specs):
    skills = [unsaved(*spec, n) for n, spec in enumerate(specs)]
    chosen = winning_skills(skills)
    keys = [(s.face, s.category) for s in chosen]
    assert len(keys) == len(set(keys))  # one per category of a face
    guarded = {(s.face, s.category) for s in skills if s.guard}
    for face, category in {(s.face, s.category) for s in skills}:
        candidates = [s for s in skills if (s.face, s.category) == (face, category)]
        winner = [s for s in chosen if (s.face, s.category) == (face, category)]
        if (face, category) in guarded:
            assert winner and winner[0].scope == SkillScope.PLATFORM
            continue
        assert winner, (face, category)
        assert SPECIFICITY[winner[0].scope] == max(SPECIFICITY[s.scope] for s in candidates)
    assert [s.guard for s in chosen] == sorted(s.guard for s in chosen)  # guards last


@pytest.mark.django_db
def test_skills_for_reads_the_platform_the_frame_and_the_player_only(user, other_user):
    frame = make_frame(user, open_seats=1)
    elsewhere = make_frame(user, open_seats=1)
    player, _ = seat_player(frame, 0)
    mine = Skill.objects.create(
        scope="user", owner=player, face="player", category="tone", name="Mine", text="Dry."
    )
    Skill.objects.create(
        scope="user", owner=other_user, face="player", category="pacing", name="No", text="."
    )
    table = Skill.objects.create(
        scope="frame", frame=frame, face="player", category="tone", name="Table", text="Warm."
    )
    Skill.objects.create(
        scope="frame", frame=elsewhere, face="player", category="pacing", name="No", text="."
    )
    # Written around the API: a guard category still keeps the platform's rule.
    Skill.objects.create(
        scope="user", owner=player, face="player", category="secrets", name="Leak", text="!"
    )
    for_player = skills_for("player", frame=frame, user=player)
    names = {s.name for s in for_player}
    assert mine in for_player and table not in for_player
    assert "No" not in names and "Leak" not in names
    assert Skill.objects.get(key="player-secrets") in for_player
    public = skills_for("player", frame=frame)  # an outcome: nobody's own skills
    assert table in public and mine not in public
    assert all(s.face == "player" for s in public)


# The API.


def write(client, **body: str):
    body = {"face": "player", "category": "tone", "name": "Tone", "text": "Spare."} | body
    return client.post("/api/skills", body, format="json")


@pytest.mark.django_db
def test_a_player_writes_reads_and_deletes_their_own_skills(api, other_api):
    made = write(api)
    assert made.status_code == 201, made.content
    skill = made.json()
    assert skill["scope"] == "user" and skill["editable"] and skill["frame"] is None
    listed = api.get("/api/skills?face=player").json()
    assert skill["id"] in [s["id"] for s in listed]
    assert {s["scope"] for s in listed} == {"platform", "user"}
    assert all(s["face"] == "player" for s in listed)
    assert not any(s["editable"] for s in listed if s["scope"] == "platform")
    assert skill["id"] not in [s["id"] for s in other_api.get("/api/skills").json()]
    assert other_api.get(f"/api/skills/{skill['id']}").status_code == 404
    assert other_api.delete(f"/api/skills/{skill['id']}").status_code == 404
    changed = api.patch(f"/api/skills/{skill['id']}", {"text": "Lush."}, format="json")
    assert changed.status_code == 200 and changed.json()["text"] == "Lush."
    assert api.delete(f"/api/skills/{skill['id']}").status_code == 204
    assert not Skill.objects.filter(pk=skill["id"]).exists()


@pytest.mark.django_db
def test_bad_skills_are_refused_with_a_reason(api):
    assert write(api).status_code == 201
    again = write(api, name="Another tone")
    assert again.status_code == 409 and "tone" in again.json()["detail"]
    guard = write(api, category="secrets")
    assert guard.status_code == 400 and "category" in guard.json()["errors"]
    assert "cannot be replaced" in guard.json()["detail"]
    slug = write(api, category="Not a slug!")
    assert slug.status_code == 400 and "category" in slug.json()["errors"]
    assert write(api, face="narrator").status_code == 400
    assert write(api, text="x" * 4001).status_code == 400
    assert api.get("/api/skills?face=narrator").status_code == 400
    pacing = write(api, category="pacing").json()
    moved = api.patch(f"/api/skills/{pacing['id']}", {"category": "agency"}, format="json")
    assert moved.status_code == 400
    assert Skill.objects.get(pk=pacing["id"]).category == "pacing"


@pytest.mark.django_db
def test_platform_skills_are_read_only_through_the_api(api):
    platform = Skill.objects.get(key="player-agency")
    assert api.get(f"/api/skills/{platform.pk}").json()["guard"] is True
    patched = api.patch(f"/api/skills/{platform.pk}", {"text": "Anything goes."}, format="json")
    assert patched.status_code == 403
    assert api.delete(f"/api/skills/{platform.pk}").status_code == 403
    platform.refresh_from_db()
    assert "Anything goes" not in platform.text


@pytest.mark.django_db
def test_frame_skills_are_the_gms(api, user, other_api):
    frame = make_frame(user, open_seats=1)
    _, player = seat_player(frame, 0)
    made = write(api, frame=str(frame.pk))
    assert made.status_code == 201 and made.json()["scope"] == "frame"
    listed = api.get(f"/api/skills?frame={frame.pk}").json()
    assert made.json()["id"] in [s["id"] for s in listed]
    assert made.json()["id"] not in [s["id"] for s in api.get("/api/skills").json()]
    assert write(player, frame=str(frame.pk)).status_code == 403
    assert player.get(f"/api/skills?frame={frame.pk}").status_code == 403
    assert player.get(f"/api/skills/{made.json()['id']}").status_code == 404
    assert write(other_api, frame=str(frame.pk)).status_code == 404
    assert other_api.get(f"/api/skills?frame={frame.pk}").status_code == 404
    assert api.get("/api/skills?frame=nope").status_code == 404


def test_signed_out_visitors_get_no_skills(anon_client):
    assert anon_client.get("/api/skills").status_code in (401, 403)

"""Character snapshots (synthesis/snapshots/): an export holds only what its reader may know
(markers planted in every other secret), follows the published JSON Schema, and is
recorded; a malformed import is refused with a 400 naming the problem and creates nothing;
export → import (into another GM's frame: no ids carried over) → export is lossless; a
reset takes a snapshot first, starts the fold over, and that snapshot restores it; live
frames are snapshotted when they changed, pruned."""

import copy
import io
import json
import os
import subprocess
import sys

import jsonschema
import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from authoring.models import Persona
from synthesis.gm_voice import gm_note
from synthesis.models import Frame, Outcome
from synthesis.snapshot_models import Snapshot
from synthesis.snapshots import build as build_module
from synthesis.snapshots.schema import FrameSnapshot, SnapshotV1
from synthesis.snapshots.services import frame_snapshot_take, frames_snapshot
from synthesis.state.levels import MOOD_NAMES
from synthesis.state.selectors import state_at
from synthesis.state.services import delta_record, memory_record
from synthesis.state_models import DeltaKind, Edge, Memory, SeatState, StateDelta
from synthesis.tasks import frames_snapshot_task
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.synthesis.conftest import Scene

pytestmark = pytest.mark.django_db

MARKERS = [
    "BOB WILSON-SECRET-MARKER",  # Bob's internal truth
    "TONY ROSETTI-SECRET-MARKER",  # Tony's
    "GROUP-SECRET-MARKER",  # Bob's group's internal truth (Alice is no member)
    "BOB-REAL-NAME-MARKER",  # Bob's real name: others know him as "The Stranger"
    "BOB-MEMORY-MARKER",
    "BOB-FACT-MARKER",
    "BOB-KNOWS-MARKER",
    "BOB-MOOD-MARKER",
    "GM-NOTE-MARKER",
]


def outcome_for(scene: Scene, witnesses: list, text: str = "opens the door") -> Outcome:
    last = Outcome.objects.filter(frame=scene.frame).order_by("-seq").first()
    return Outcome.objects.create(
        frame=scene.frame,
        seq=(last.seq if last else 0) + 1,
        seat=scene.alice,
        actions_resolved=[{"seat": str(scene.alice.pk), "action": text, "result": "success"}],
        witnesses=[str(s.pk) for s in witnesses],
    )


def lived(scene: Scene) -> Outcome:
    """Some play: Alice's state moves over two outcomes; Bob's holds markers. Returns the
    first outcome (the moment `?at=` tests)."""
    bob = scene.bob.persona
    bob.name, bob.known_as = "Bob BOB-REAL-NAME-MARKER", "The Stranger"
    bob.save()
    first = outcome_for(scene, [scene.alice, scene.bob])
    a = scene.alice
    delta_record(
        seat=a, kind=DeltaKind.EDGE, outcome=first, target=scene.bob, affinity=20, text="he limps"
    )
    delta_record(seat=a, kind=DeltaKind.MOOD, outcome=first, mood="shy", intensity=0.2)
    delta_record(seat=a, kind=DeltaKind.FACT, outcome=first, text="the door was locked")
    memory_record(seat=a, outcome=first, text="Alice saw the door open", significance=3)
    second = outcome_for(scene, [scene.alice, scene.bob, scene.tony], "runs")
    delta_record(seat=a, kind=DeltaKind.EDGE, outcome=second, target=scene.tony, trust=-20)
    delta_record(seat=a, kind=DeltaKind.MOOD, outcome=second, mood="anxious", intensity=0.1)
    memory_record(seat=a, outcome=second, text="Tony ran off", significance=1)
    b = scene.bob
    delta_record(seat=b, kind=DeltaKind.EDGE, outcome=second, target=a, text="BOB-KNOWS-MARKER")
    delta_record(seat=b, kind=DeltaKind.FACT, outcome=second, text="BOB-FACT-MARKER")
    memory_record(seat=b, outcome=second, text="BOB-MEMORY-MARKER in the hall")
    SeatState.objects.filter(seat=b).update(mood="BOB-MOOD-MARKER"[:20])
    gm_note(frame=scene.frame, seat=b, text="GM-NOTE-MARKER for Bob")
    return first


def snapshot_url(scene: Scene, seat) -> str:
    return f"/api/frames/{scene.frame.pk}/seats/{seat.pk}/snapshot"


def export(client, scene: Scene, seat, **query) -> dict:
    response = client.get(snapshot_url(scene, seat), query)
    assert response.status_code == 200, response.content
    assert response["Content-Disposition"].startswith("attachment; filename=")
    return json.loads(response.content)


def state_of(snapshot: dict) -> dict:
    """A snapshot without when and where it was taken, nor the persona (another frame's
    seat plays its own; the persona's round trip is `persona_of`): what a round trip keeps."""
    return {k: v for k, v in snapshot.items() if k not in ("_snapshot_info", "persona")}


def persona_of(persona_id: str) -> dict:
    """A persona as a snapshot writes it."""
    return build_module.persona_template(Persona.objects.get(pk=persona_id))


def test_a_players_export_holds_only_what_its_character_knows(user):
    scene = Scene(user)
    lived(scene)
    alice = logged_in_client(scene.alice_player)
    text = json.dumps(export(alice, scene, scene.alice))
    assert not [m for m in MARKERS if m in text]
    assert "ALICE THOMPSON-SECRET-MARKER" in text  # her own internal truth is hers
    data = json.loads(text)
    names = {a["character"] for a in data["current_state"]["affinity"]}
    assert names == {"The Stranger", "Tony Rosetti"}
    assert [e["summary"] for e in data["current_state"]["memorable_episodes"]] == [
        "Alice saw the door open",
        "Tony ran off",
    ]
    # Another's seat is not hers to export; the markers are real (the GM's export of Bob).
    assert alice.get(snapshot_url(scene, scene.bob)).status_code == 404
    gm_text = logged_in_client(user).get(snapshot_url(scene, scene.bob)).content.decode()
    assert "BOB-MEMORY-MARKER" in gm_text and "BOB WILSON-SECRET-MARKER" in gm_text
    assert "BOB-REAL-NAME-MARKER" in gm_text and "BOB-KNOWS-MARKER" in gm_text


def test_an_export_follows_the_published_schema_and_is_recorded(user):
    scene = Scene(user)
    lived(scene)
    answer = Client().get("/api/schemas/snapshot-v1.json")  # public: no one signed in
    assert answer.status_code == 200
    schema = answer.json()
    jsonschema.Draft202012Validator.check_schema(schema)
    data = export(logged_in_client(scene.alice_player), scene, scene.alice)
    jsonschema.Draft202012Validator(schema).validate(data)
    SnapshotV1.model_validate(data)
    info = data["_snapshot_info"]
    assert (info["format"], info["version"], info["character"]) == (
        "lmix-snapshot",
        1,
        "Alice Thompson",
    )
    assert data["active_configuration"]["active_mood"] == "anxious"
    assert set(data["active_configuration"]["toward"]) == {"The Stranger", "Tony Rosetti"}
    record = Snapshot.objects.get(kind="export")
    assert (record.by, record.seat, record.frame) == (scene.alice_player, scene.alice, scene.frame)
    broken = copy.deepcopy(data)
    broken["current_state"]["mood"]["intensity"] = 3
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_a_memory_the_gm_removed_is_in_no_export(user):
    """The GM's removed memory is kept, hidden (synthesis/state/services.py::memory_edit):
    never recalled, shown, nor exported."""
    from synthesis.state.services import memory_edit

    scene = Scene(user)
    lived(scene)
    removed = memory_record(
        seat=scene.alice, outcome=outcome_for(scene, [scene.alice]), text="REMOVED-MARKER"
    )
    memory_edit(memory=removed, by=user, removed=True)
    for client in (logged_in_client(scene.alice_player), logged_in_client(user)):
        data = export(client, scene, scene.alice)
        assert "Alice saw the door open" in json.dumps(data)
        assert "REMOVED-MARKER" not in json.dumps(data)


def test_an_export_at_an_outcome_shows_the_state_then(user):
    scene = Scene(user)
    first = lived(scene)
    data = export(logged_in_client(scene.alice_player), scene, scene.alice, at=str(first.pk))
    state = data["current_state"]
    assert [a["character"] for a in state["affinity"]] == ["The Stranger"]
    assert state["mood"] == {"current": "shy", "intensity": 0.7}
    assert [e["summary"] for e in state["memorable_episodes"]] == ["Alice saw the door open"]
    assert data["_snapshot_info"]["source"]["outcome_seq"] == first.seq
    other = Scene(user)
    stranger = outcome_for(other, [other.alice])
    answer = logged_in_client(user).get(snapshot_url(scene, scene.alice), {"at": stranger.pk})
    assert answer.status_code == 404


def counts() -> tuple:
    return (
        StateDelta.objects.count(),
        Memory.objects.count(),
        Snapshot.objects.filter(kind="import").count(),
        Edge.objects.count(),
    )


def _set(data: dict, path: str, value) -> dict:
    data = copy.deepcopy(data)
    *parents, last = path.split(".")
    node = data
    for key in parents:
        node = node[int(key)] if key.isdigit() else node[key]
    if value is KeyError:
        del node[last]
    else:
        node[last] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "said"),
    [
        ("_snapshot_info.version", 2, "version"),
        ("_snapshot_info.format", "tavern-card", "format"),
        ("_snapshot_info", KeyError, "_snapshot_info"),
        ("persona.name", KeyError, "persona.name"),
        ("current_state.mood.intensity", "high", "current_state.mood.intensity"),
        ("current_state.affinity.0.points", 101, "current_state.affinity[0].points"),
        ("current_state.affinity.0.points", "50", "current_state.affinity[0].points"),
        ("current_state.mood.current", "furious", "current_state.mood.current"),
        ("current_state.memorable_episodes.0.significance", 7, "significance"),
        ("current_state.learned_facts", "none", "current_state.learned_facts"),
        ("current_state.colour", "red", "current_state.colour"),
    ],
)
def test_a_malformed_import_is_refused_naming_where_and_creates_nothing(user, path, value, said):
    scene = Scene(user)
    lived(scene)
    gm = logged_in_client(user)
    good = export(gm, scene, scene.alice)
    before = counts()
    url = f"/api/frames/{scene.frame.pk}/snapshots"
    body = {"seat": str(scene.tony.pk), "snapshot": _set(good, path, value)}
    answer = gm.post(url, body, content_type="application/json")
    assert answer.status_code == 400, answer.content
    assert said in answer.json()["detail"]
    assert counts() == before


def test_an_import_that_is_not_a_snapshot_is_refused(user):
    scene = Scene(user)
    gm = logged_in_client(user)
    url = f"/api/frames/{scene.frame.pk}/snapshots"
    for snapshot in ([], "text", {"spec": "chara_card_v2"}):
        body = {"seat": str(scene.alice.pk), "snapshot": snapshot}
        answer = gm.post(url, body, content_type="application/json")
        assert answer.status_code == 400, answer.content
    upload = io.BytesIO(b"{not json")
    upload.name = "x.json"
    answer = gm.post(url, {"seat": str(scene.alice.pk), "file": upload})
    assert answer.status_code == 400 and "not valid JSON" in answer.json()["detail"]
    assert counts() == (0, 0, 0, 0)


def test_only_the_gm_imports_and_resets(user):
    scene = Scene(user)
    lived(scene)
    alice = logged_in_client(scene.alice_player)
    own = export(alice, scene, scene.alice)
    url = f"/api/frames/{scene.frame.pk}/snapshots"
    body = {"seat": str(scene.alice.pk), "snapshot": own}
    assert alice.post(url, body, content_type="application/json").status_code == 403
    reset = f"/api/frames/{scene.frame.pk}/seats/{scene.alice.pk}/reset"
    answer = alice.post(reset, {"confirm": "Alice Thompson"}, content_type="application/json")
    assert answer.status_code == 403
    assert alice.get(url).status_code == 403
    assert Memory.objects.filter(seat=scene.alice).count() == 2


def import_(client, frame: Frame, seat, snapshot: dict, **options) -> dict:
    body = {"seat": str(seat.pk), "snapshot": snapshot, **options}
    answer = client.post(f"/api/frames/{frame.pk}/snapshots", body, content_type="application/json")
    assert answer.status_code == 201, answer.content
    return answer.json()


def test_a_round_trip_into_another_gms_frame_is_lossless(user):
    scene = Scene(user)
    lived(scene)
    first = export(logged_in_client(user), scene, scene.alice)
    other_gm = UserFactory()
    other = Scene(other_gm)  # another GM's frame, other seats' ids: names carry it
    other.bob.persona.known_as = "The Stranger"
    other.bob.persona.save()
    done = import_(logged_in_client(other_gm), other.frame, other.alice, first, persona=True)
    assert done["unknown_characters"] == [] and done["memories"] == 2
    assert done["persona"]["created"] is True
    assert persona_of(done["persona"]["id"]) == first["persona"]  # recreated, every field
    assert done["restored"] == ["affinity", "mood", "facts", "memories"]
    second = export(logged_in_client(other_gm), other, other.alice)
    assert state_of(second) == state_of(first)
    # The state is the fold of the imported deltas, made by the importer.
    assert {d.by_id for d in StateDelta.objects.filter(seat=other.alice)} == {other_gm.pk}
    cached = Edge.objects.get(source=other.alice, target=other.bob)
    assert (cached.affinity, cached.trust) == (30, 50)
    # Again: nothing doubles, the persona is matched.
    again = import_(logged_in_client(other_gm), other.frame, other.alice, first, persona=True)
    assert again["memories"] == 0 and again["persona"]["created"] is False
    assert state_of(export(logged_in_client(other_gm), other, other.alice)) == state_of(first)


def test_unknown_characters_are_reported_and_the_options_choose(user):
    scene = Scene(user)
    lived(scene)
    gm = logged_in_client(user)
    data = export(gm, scene, scene.alice)
    data["current_state"]["affinity"].append(
        {"character": "Nobody Here", "points": 90, "level": "soulmate", "trust": 9, "knowledge": []}
    )
    other = Scene(user)
    done = import_(gm, other.frame, other.alice, data, restore={"mood": True, "affinity": False})
    assert done["restored"] == ["mood"] and done["unknown_characters"] == []
    assert not Edge.objects.filter(source=other.alice).exists()
    assert not Memory.objects.filter(seat=other.alice).exists()
    assert state_at(seat=other.alice).seat.mood == "anxious"
    done = import_(gm, other.frame, other.alice, data, restore=["affinity"])
    assert done["unknown_characters"] == ["The Stranger", "Nobody Here"]  # Bob is plain here
    assert Edge.objects.filter(source=other.alice).count() == 1  # Tony


def test_a_multipart_file_imports(user):
    scene = Scene(user)
    lived(scene)
    gm = logged_in_client(user)
    data = export(gm, scene, scene.alice)
    other = Scene(user)
    upload = io.BytesIO(json.dumps(data).encode())
    upload.name = "alice.snapshot.json"
    body = {"seat": str(other.alice.pk), "file": upload, "restore": ["facts", "memories"]}
    answer = gm.post(f"/api/frames/{other.frame.pk}/snapshots", body)
    assert answer.status_code == 201, answer.content
    assert answer.json()["restored"] == ["facts", "memories"]
    assert state_at(seat=other.alice).seat.facts == ("the door was locked",)


def test_a_reset_asks_for_the_name_snapshots_first_and_restores(user):
    scene = Scene(user)
    lived(scene)
    gm = logged_in_client(user)
    before = export(gm, scene, scene.alice)
    url = f"/api/frames/{scene.frame.pk}/seats/{scene.alice.pk}/reset"
    wrong = gm.post(url, {"confirm": "alice"}, content_type="application/json")
    assert wrong.status_code == 400 and "Alice Thompson" in wrong.json()["detail"]
    assert Memory.objects.filter(seat=scene.alice).count() == 2
    done = gm.post(url, {"confirm": "Alice Thompson"}, content_type="application/json")
    assert done.status_code == 200, done.content
    assert done.json()["memories_cleared"] == 2
    record = Snapshot.objects.get(pk=done.json()["snapshot"])
    assert record.kind == "reset" and state_of(record.data) == state_of(before)
    values = state_at(seat=scene.alice)
    assert values.edges == {} and values.seat.facts == () and values.seat.mood == "neutral"
    assert not Edge.objects.filter(source=scene.alice).exists()  # the cache agrees
    assert not SeatState.objects.filter(seat=scene.alice).exists()
    # A rewind to before the reset folds the old state back (the reset is a delta).
    first_seq = Outcome.objects.filter(frame=scene.frame).order_by("seq").first().seq
    assert state_at(seat=scene.alice, upto_seq=first_seq).seat.mood == "shy"
    # The snapshot taken first restores it, by its id.
    body = {"seat": str(scene.alice.pk), "snapshot_id": done.json()["snapshot"]}
    answer = gm.post(
        f"/api/frames/{scene.frame.pk}/snapshots", body, content_type="application/json"
    )
    assert answer.status_code == 201, answer.content
    assert state_of(export(gm, scene, scene.alice)) == state_of(before)


def test_live_frames_are_snapshotted_when_they_changed_and_pruned(user):
    scene = Scene(user)
    lived(scene)
    closed = Scene(user)
    Frame.objects.filter(pk=closed.frame.pk).update(status="closed")
    frames_snapshot_task()
    assert Snapshot.objects.filter(kind="frame").count() == 1
    assert frames_snapshot() == 0  # nothing changed
    taken = []
    for n in range(3):
        delta_record(seat=scene.bob, kind=DeltaKind.FACT, text=f"fact {n}")
        taken.append(frame_snapshot_take(frame=scene.frame, keep=2))
    kept = Snapshot.objects.filter(frame=scene.frame, kind="frame")
    assert {s.pk for s in kept} == {taken[1].pk, taken[2].pk}
    data = taken[2].data
    assert [s["_snapshot_info"]["character"] for s in data["seats"]] == [
        "Alice Thompson",
        "The Stranger",
        "Tony Rosetti",
    ]
    FrameSnapshot.model_validate(data)
    # The GM lists and downloads them; a frame snapshot's seat restores by id.
    gm = logged_in_client(user)
    listed = gm.get(f"/api/frames/{scene.frame.pk}/snapshots").json()["snapshots"]
    assert [s["kind"] for s in listed] == ["frame", "frame"]
    file = gm.get(f"/api/frames/{scene.frame.pk}/snapshots/{taken[2].pk}")
    assert file.status_code == 200 and json.loads(file.content) == data
    body = {"seat": str(scene.bob.pk), "snapshot_id": str(taken[2].pk), "restore": ["facts"]}
    answer = gm.post(
        f"/api/frames/{scene.frame.pk}/snapshots", body, content_type="application/json"
    )
    assert answer.status_code == 201, answer.content
    alice = logged_in_client(scene.alice_player)
    assert alice.get(f"/api/frames/{scene.frame.pk}/snapshots/{taken[2].pk}").status_code == 403


# -- the round trip, for any state ---------------------------------------------------------

texts = st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), max_size=30)
edge_ops = st.lists(
    st.tuples(st.sampled_from(["bob", "tony"]), st.integers(-25, 25), st.integers(-25, 25), texts),
    max_size=8,
)


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    edges=edge_ops,
    mood=st.sampled_from(MOOD_NAMES),
    intensity=st.floats(-1, 1),
    facts=st.lists(texts, max_size=5),
    memories=st.lists(st.tuples(texts, st.integers(0, 3)), max_size=4),
)
def test_any_state_round_trips(user, edges, mood, intensity, facts, memories):
    scene = Scene(user)
    a = scene.alice
    for target, affinity, trust, text in edges:
        seat = scene.bob if target == "bob" else scene.tony
        delta_record(
            seat=a, kind=DeltaKind.EDGE, target=seat, affinity=affinity, trust=trust, text=text
        )
    delta_record(seat=a, kind=DeltaKind.MOOD, mood=mood, intensity=intensity)
    for fact in facts:
        delta_record(seat=a, kind=DeltaKind.FACT, text=fact)
    for text, significance in memories:
        if text.strip():
            memory_record(
                seat=a, outcome=outcome_for(scene, [a]), text=text, significance=significance
            )
    gm = logged_in_client(user)
    first = export(gm, scene, a)
    other = Scene(user)
    import_(gm, other.frame, other.alice, first)
    assert state_of(export(gm, other, other.alice)) == state_of(first)


@pytest.mark.parametrize(
    ("env", "every"),
    [
        ({"REDIS_URL": "redis://127.0.0.1:6379/8"}, 1800.0),  # services mode: on, 30 min
        ({"REDIS_URL": "redis://127.0.0.1:6379/8", "LMIX_FRAME_SNAPSHOT_EVERY": "0"}, None),
        ({"REDIS_URL": "", "LMIX_FRAME_SNAPSHOT_EVERY": "5"}, 300.0),
        ({"REDIS_URL": ""}, None),  # embedded: no beat, off
    ],
)
def test_beat_snapshots_live_frames_as_the_setting_says(env, every):
    code = (
        "import json, config.settings as s; "
        "print(json.dumps(s.CELERY_BEAT_SCHEDULE.get('frames-snapshot')))"
    )
    environ = {k: v for k, v in os.environ.items() if k != "LMIX_FRAME_SNAPSHOT_EVERY"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**environ, **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    entry = json.loads(out.strip().splitlines()[-1])
    if every is None:
        assert entry is None
    else:
        assert entry == {"task": "synthesis.tasks.frames_snapshot_task", "schedule": every}

"""Every status moves by its lifecycle's table: each table covers its whole enum, every
move the table does not allow is refused (raised, or, from a status the row no longer has,
not made), and no code writes a status but the lifecycle."""

import ast
from pathlib import Path

import pytest

from lmix.lifecycle import lifecycle_move, lifecycle_move_all
from productions.models import TURN_TRANSITIONS, Turn, TurnStatus
from synthesis.frame_events import next_seq
from synthesis.liquid import frame_status_set
from synthesis.models import (
    FRAME_TRANSITIONS,
    LIQUID_TRANSITIONS,
    NARRATIVE_TRANSITIONS,
    PASS_TRANSITIONS,
    WINDOW_TRANSITIONS,
    Frame,
    FrameStatus,
    Liquid,
    LiquidStatus,
    Narrative,
    NarrativeStatus,
    Pass,
    PassStatus,
    Window,
    WindowStatus,
)
from synthesis.state_models import STATE_PASS_TRANSITIONS, StatePass, StatePassStatus
from tests.synthesis.conftest import Scene

TABLES = [
    (Turn, TurnStatus, TURN_TRANSITIONS),
    (Frame, FrameStatus, FRAME_TRANSITIONS),
    (Liquid, LiquidStatus, LIQUID_TRANSITIONS),
    (Window, WindowStatus, WINDOW_TRANSITIONS),
    (Pass, PassStatus, PASS_TRANSITIONS),
    (Narrative, NarrativeStatus, NARRATIVE_TRANSITIONS),
    (StatePass, StatePassStatus, STATE_PASS_TRANSITIONS),
]
ILLEGAL = [
    pytest.param(model, table, source, target, id=f"{model.__name__}:{source}->{target}")
    for model, statuses, table in TABLES
    for source in statuses.values
    for target in statuses.values
    if target not in table[source]
]
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("model", "statuses", "table"), TABLES, ids=lambda x: getattr(x, "__name__", "")
)
def test_each_table_covers_its_enum(model, statuses, table):
    assert set(table) == set(statuses.values)
    assert all(targets <= set(statuses.values) for targets in table.values())


@pytest.mark.parametrize(("model", "table", "source", "target"), ILLEGAL)
def test_an_illegal_move_raises_before_touching_the_database(model, table, source, target):
    with pytest.raises(ValueError):
        lifecycle_move(model, table, "no-such-row", target, only_from=(source,))
    with pytest.raises(ValueError):
        lifecycle_move_all(model.objects.none(), table, target, only_from=(source,))


@pytest.mark.django_db
def test_a_closed_frame_stays_closed(user):
    frame = Scene(user).frame
    frame_status_set(frame=frame, status=FrameStatus.CLOSED)
    assert Frame.move(frame.pk, FrameStatus.PAUSED) is False  # from closed: not made
    with pytest.raises(ValueError):
        Frame.move(frame.pk, FrameStatus.OPEN, only_from=(FrameStatus.CLOSED,))
    assert Frame.objects.get(pk=frame.pk).status == FrameStatus.CLOSED


@pytest.mark.django_db
def test_a_finished_narrative_is_final_and_failing_moves_only_streaming_ones(user):
    scene = Scene(user)
    narratives = [
        Narrative.objects.create(frame=scene.frame, seat=scene.alice, trigger="commit", status=s)
        for s in (NarrativeStatus.STREAMING, NarrativeStatus.DONE)
    ]
    streaming, done = narratives
    assert Narrative.move(done.pk, NarrativeStatus.FAILED) is False
    failed = lifecycle_move_all(
        Narrative.objects.filter(frame=scene.frame), NARRATIVE_TRANSITIONS, NarrativeStatus.FAILED
    )
    assert failed == 1
    assert Narrative.objects.get(pk=streaming.pk).status == NarrativeStatus.FAILED
    assert Narrative.objects.get(pk=done.pk).status == NarrativeStatus.DONE
    with pytest.raises(ValueError):
        Narrative.move(streaming.pk, NarrativeStatus.STREAMING)


@pytest.mark.django_db
def test_one_sequence_counter_numbers_frame_and_production_events(user):
    from productions.events import notify_turn_created

    frame = Scene(user).frame
    before = Frame.objects.get(pk=frame.pk).seq
    assert [next_seq(frame.pk), next_seq(str(frame.pk))] == [before + 1, before + 2]
    production = frame.production
    turn = Turn.objects.create(
        production=production, speaker_kind="director", speaker_name="D", status="done"
    )
    seq = production.__class__.objects.get(pk=production.pk).event_seq
    notify_turn_created(turn)
    assert production.__class__.objects.get(pk=production.pk).event_seq == seq + 1
    Frame.objects.filter(pk=frame.pk).delete()
    with pytest.raises(Frame.DoesNotExist):
        next_seq(frame.pk)


def _status_writes(path: Path) -> list[str]:
    """Lines of `path` that write a status to the database other than by creating a row:
    `update(status=…)`, a prepared update of "status", `save(update_fields=[…"status"…])`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        keywords = {k.arg for k in node.keywords}
        status_named = any(
            isinstance(sub, ast.Constant) and sub.value == "status"
            for arg in [*node.args, *(k.value for k in node.keywords)]
            for sub in ast.walk(arg)
        )
        if (
            node.func.attr == "update"
            and "status" in keywords
            or (node.func.attr in ("update", "updating", "save") and status_named)
        ):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_no_status_is_written_but_by_the_lifecycle():
    allowed = {ROOT / "lmix" / "lifecycle.py", ROOT / "lmix" / "realtime" / "leases.py"}
    writes = [
        line
        for app in ("config", "lmix", "authoring", "productions", "synthesis")
        for path in sorted((ROOT / app).rglob("*.py"))
        if "migrations" not in path.parts and path not in allowed
        for line in _status_writes(path)
    ]
    assert writes == []

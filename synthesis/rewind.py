"""Rewind a frame to one of its outcomes, and restore a rewind (docs/synthesis.md, "Rewind
and regenerate"). Nothing is deleted: the rows after the point get `rewound` (their default
manager stops reading them, rewind_models.py), the state caches are folded again from the
deltas left visible, and every reader re-reads (`frame.rewound`). A rewind records every
seat's state just before it; restoring it brings back exactly what it hid."""

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Model, Q
from django.utils import timezone

from lmix.errors import ApplicationError
from lmix.lifecycle import lifecycle_move_all
from lmix.realtime.publish import group_send_on_commit

from .event_types import FrameRewound
from .frame_events import frame_group, lock_frame, next_seq, spectator_group
from .models import (
    WINDOW_TRANSITIONS,
    Frame,
    FrameStatus,
    Liquid,
    LiquidStatus,
    Narrative,
    Outcome,
    Pass,
    Seat,
    Window,
    WindowStatus,
)
from .rewind_models import Rewind, RewindKind
from .scene_models import Scene, SceneStatus, SceneSummary, SummaryStatus
from .snapshot_models import Snapshot, SnapshotKind
from .snapshots.services import frame_snapshot_data
from .state.fold import fold
from .state_models import (
    AFFINITY_START,
    TRUST_START,
    DeltaKind,
    Edge,
    Memory,
    SeatState,
    StateDelta,
    StatePass,
)

# What a rewind hides, by the key its counts and dry run use; in the order it hides them:
# passes first, so a worker still writing for a hidden outcome loses its pass (its lease)
# before the rows it writes are looked for.
HIDDEN: dict[str, type[Model]] = {
    "passes": Pass,
    "state_passes": StatePass,
    "outcomes": Outcome,
    "narratives": Narrative,
    "liquid": Liquid,
    "memories": Memory,
    "state_deltas": StateDelta,
}
CLOSED = "The scene is closed: a closed frame is not rewound."
LIST_MAX = 200  # rows of each kind a dry run lists (its counts are whole)


@dataclass
class Plan:
    """The visible rows after one point of a frame: what a rewind to it hides."""

    outcomes: list[Outcome] = field(default_factory=list)
    narratives: list[Narrative] = field(default_factory=list)
    liquid: list[Liquid] = field(default_factory=list)
    memories: list[Memory] = field(default_factory=list)
    state_deltas: list[StateDelta] = field(default_factory=list)
    passes: list[Any] = field(default_factory=list)  # ids
    state_passes: list[Any] = field(default_factory=list)  # ids

    def ids(self, key: str) -> list[Any]:
        rows = getattr(self, key)
        return [getattr(row, "pk", row) for row in rows]

    def counts(self) -> dict[str, int]:
        return {key: len(getattr(self, key)) for key in HIDDEN}

    def empty(self) -> bool:
        return not any(self.counts().values())


def rewind_plan(*, frame: Frame, to_seq: int) -> Plan:
    """Everything visible after the outcome numbered `to_seq`: the later outcomes; the
    narratives that tell any of them (one that also tells an earlier outcome goes too: its
    text holds the later one); the liquid they resolved (hidden with them: its player
    writes anew, or the GM regenerates); the memories and state deltas they caused, and
    the GM's state edits made since the first of them; what AI seats wrote since, not yet
    narrated; the passes that made them, the soft passes of that liquid and the state
    passes of those outcomes."""
    outcomes = list(Outcome.objects.filter(frame=frame, seq__gt=to_seq).order_by("seq"))
    if not outcomes:
        return Plan()
    first = outcomes[0]
    out_ids = {str(o.pk) for o in outcomes}
    narratives = [
        n
        for n in Narrative.objects.filter(frame=frame).order_by("created_at", "id")
        if out_ids.intersection(n.outcome_ids)
        or (not n.outcome_ids and n.created_at >= first.created_at)
    ]
    liquid_ids = {x for o in outcomes for x in o.liquid_ids}
    # And what assistants wrote since for their AI seats, not narrated yet: reactions to
    # what goes (a person's own intentions stay theirs, to keep or withdraw).
    liquid = list(
        Liquid.objects.filter(frame=frame).filter(
            Q(pk__in=liquid_ids)
            | Q(
                author__isnull=True,
                seat__isnull=False,
                submitted_at__gte=first.created_at,
                status__in=[LiquidStatus.SUBMITTED, LiquidStatus.COMMITTED],
            )
        )
    )
    memories = list(Memory.objects.filter(frame_id=frame.pk, outcome__in=outcomes))
    deltas = list(
        StateDelta.objects.filter(frame_id=frame.pk).filter(
            Q(outcome__in=outcomes) | Q(outcome__isnull=True, created_at__gte=first.created_at)
        )
    )
    made = {o.source_pass_id for o in outcomes} | {n.source_pass_id for n in narratives}
    passes = Pass.objects.filter(frame=frame).filter(
        Q(pk__in=[p for p in made if p])
        | Q(liquid__in=[x.pk for x in liquid])
        | Q(waiting_on__in=outcomes)
    )
    state_passes = StatePass.objects.filter(outcome__in=outcomes)
    return Plan(
        outcomes=outcomes,
        narratives=narratives,
        liquid=liquid,
        memories=memories,
        state_deltas=deltas,
        passes=list(passes.values_list("pk", flat=True)),
        state_passes=list(state_passes.values_list("pk", flat=True)),
    )


def _point(*, frame: Frame, to: object) -> Outcome:
    """The visible outcome of `frame` a rewind goes back to.

    Raises:
        ApplicationError: no such outcome in this frame (404; a hidden one is not there).
    """
    outcome = Outcome.objects.filter(frame=frame, pk=to).first()
    if outcome is None:
        raise ApplicationError("No such outcome in this frame.", status_code=404)
    return outcome


def rewind_preview(*, frame: Frame, to: object) -> dict:
    """The dry run: what a rewind to outcome `to` would hide (the `RewindPreview` answer),
    changing nothing."""
    point = _point(frame=frame, to=to)
    body = preview_body(rewind_plan(frame=frame, to_seq=point.seq), to_seq=point.seq)
    body["counts"].update(scenes_counts(frame=frame, to_seq=point.seq))
    return body


def preview_body(plan: Plan, *, to_seq: int) -> dict:
    """The GM's list of what goes: each row's kind, a line of its text and whose it is."""
    names = {
        s.pk: s.persona.name
        for s in Seat.objects.filter(pk__in=_seat_ids(plan)).select_related("persona")
    }

    def actions(outcome: Outcome) -> str:
        said = [str(a.get("action", "")) for a in outcome.actions_resolved]
        return " ".join([*said, *map(str, outcome.world_facts)])[:300]

    return {
        "to_seq": to_seq,
        "counts": plan.counts(),
        "outcomes": [
            {"id": str(o.pk), "seq": o.seq, "text": actions(o), "held": o.held}
            for o in plan.outcomes[:LIST_MAX]
        ],
        "narratives": [
            {"id": str(n.pk), "seat": names.get(n.seat_id, ""), "text": n.text[:300]}
            for n in plan.narratives[:LIST_MAX]
        ],
        "liquid": [
            {"id": str(x.pk), "seat": names.get(x.seat_id, ""), "text": x.content[:300]}
            for x in plan.liquid[:LIST_MAX]
        ],
        "memories": [
            {"id": str(m.pk), "seat": names.get(m.seat_id, ""), "text": m.text[:300]}
            for m in plan.memories[:LIST_MAX]
        ],
        "state_deltas": [
            {"id": str(d.pk), "seat": names.get(d.seat_id, ""), "kind": d.kind}
            for d in plan.state_deltas[:LIST_MAX]
        ],
    }


def _seat_ids(plan: Plan) -> set[Any]:
    rows = [*plan.narratives, *plan.liquid, *plan.memories, *plan.state_deltas]
    return {row.seat_id for row in rows if row.seat_id}


def seat_states(*, frame: Frame) -> dict[str, Any]:
    """Every seat's state as its visible deltas fold (the pre-rewind record), and the
    caches exactly as stored, so a restore puts back what the fold does not say (when each
    edge last moved)."""
    deltas: dict[Any, list[StateDelta]] = {}
    for delta in StateDelta.objects.filter(frame_id=frame.pk).order_by("id"):
        deltas.setdefault(delta.seat_id, []).append(delta)
    seats: dict[str, Any] = {}
    for seat_id in Seat.objects.filter(frame=frame).values_list("pk", flat=True):
        values = fold(deltas.get(seat_id, []))
        seats[str(seat_id)] = {
            "edges": {k: _plain(asdict(v)) for k, v in sorted(values.edges.items())},
            "seat": _plain(asdict(values.seat)),
        }
    edges = [
        {
            "source": str(e.source_id),
            "target": str(e.target_id),
            "last_outcome": str(e.last_outcome_id) if e.last_outcome_id else None,
            "last_interaction_at": e.last_interaction_at.isoformat()
            if e.last_interaction_at
            else None,
            "summary": e.summary,
        }
        for e in Edge.objects.filter(frame_id=frame.pk)
    ]
    return {"seats": seats, "edges": edges}


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}


def caches_rebuild(
    *, frame: Frame, edges: list[dict] | None = None, summaries: bool = True
) -> None:
    """Fold every seat's visible deltas into its caches (`Edge`, `SeatState`) again: an
    edge no visible delta moves goes, unless it keeps a scene's summary (then at its start
    values); the others take the fold's values, and when they last moved and their summary
    from `edges` (a pre-rewind record: exact) or else from their last visible delta that
    came of an outcome. Without a record an edge keeps its summary, unless `summaries` is
    false: the scene that wrote it was hidden or reopened (it comes back at the next close)."""
    moved = {(e["source"], e["target"]): e for e in edges or []}
    if edges is not None:
        said = {key: e.get("summary", "") for key, e in moved.items()}
    elif summaries:
        said = {
            (str(e.source_id), str(e.target_id)): e.summary
            for e in Edge.objects.filter(frame_id=frame.pk).exclude(summary="")
        }
    else:
        said = {}
    deltas: dict[Any, list[StateDelta]] = {}
    last: dict[tuple[str, str], Outcome] = {}
    for delta in StateDelta.objects.filter(frame_id=frame.pk).select_related("outcome"):
        deltas.setdefault(delta.seat_id, []).append(delta)
        if delta.target_id and delta.outcome_id:
            last[(str(delta.seat_id), str(delta.target_id))] = delta.outcome
    kept: list[Any] = []
    folded: set[tuple[str, str]] = set()
    for seat_id in Seat.objects.filter(frame=frame).values_list("pk", flat=True):
        values = fold(deltas.get(seat_id, []))
        for target, edge_values in values.edges.items():
            key = (str(seat_id), target)
            folded.add(key)
            edge_at = _moved_at(moved.get(key), last.get(key))
            edge, _ = Edge.objects.update_or_create(
                source_id=seat_id,
                target_id=target,
                defaults={
                    "frame_id": frame.pk,
                    "affinity": edge_values.affinity,
                    "trust": edge_values.trust,
                    "knowledge": list(edge_values.knowledge),
                    "summary": said.get(key, ""),
                    **edge_at,
                },
            )
            kept.append(edge.pk)
        seat = values.seat
        if any(d.kind != DeltaKind.EDGE for d in deltas.get(seat_id, [])):
            SeatState.objects.update_or_create(
                seat_id=seat_id,
                defaults={
                    "frame_id": frame.pk,
                    "mood": seat.mood,
                    "intensity": seat.intensity,
                    "facts": list(seat.facts),
                },
            )
        else:
            SeatState.objects.filter(seat_id=seat_id).delete()
    for (source, target), text in said.items():
        if (source, target) in folded or not text:
            continue  # an edge only a scene's summary made (scenes/run.py::_store)
        edge, _ = Edge.objects.update_or_create(
            source_id=source,
            target_id=target,
            defaults={
                "frame_id": frame.pk,
                "affinity": AFFINITY_START,
                "trust": TRUST_START,
                "knowledge": [],
                "summary": text,
                **_moved_at(moved.get((source, target)), None),
            },
        )
        kept.append(edge.pk)
    Edge.objects.filter(frame_id=frame.pk).exclude(pk__in=kept).delete()


def _moved_at(record: dict | None, outcome: Outcome | None) -> dict[str, Any]:
    """When an edge last moved: as recorded, or its last visible outcome's."""
    if record is not None:
        at = record["last_interaction_at"]
        return {
            "last_outcome_id": record["last_outcome"],
            "last_interaction_at": at and datetime.fromisoformat(at),
        }
    return {
        "last_outcome_id": outcome.pk if outcome else None,
        "last_interaction_at": outcome.created_at if outcome else None,
    }


def _scene_at(frame: Frame, to_seq: int) -> Scene | None:
    """The visible scene holding outcome `to_seq` (the first scene for 0)."""
    scenes = Scene.objects.filter(frame=frame)
    return scenes.filter(opened_seq__lt=to_seq).order_by("-number").first() or (
        scenes.order_by("number").first()
    )


def scenes_counts(*, frame: Frame, to_seq: int) -> dict[str, int]:
    """What a rewind to `to_seq` does to scenes: the later ones it hides, and whether it
    reopens the one holding that outcome (the dry run's and the rewind's counts)."""
    scene = _scene_at(frame, to_seq)
    if scene is None:
        return {"scenes": 0, "scenes_reopened": 0}
    later = Scene.objects.filter(frame=frame, number__gt=scene.number).count()
    return {"scenes": later, "scenes_reopened": int(scene.status == SceneStatus.CLOSED)}


def _scenes_hide(*, frame: Frame, to_seq: int, rewind: Rewind) -> dict[str, Any]:
    """Scenes back to outcome `to_seq`: those opened after it, and their summaries, are
    hidden under `rewind`; the one holding it reopens (its summaries hidden: they told what
    is gone) and the frame's scene start moves back to it. Returns the record a restore
    puts back exactly: the frame's scene start and the reopened scene's closing."""
    record: dict[str, Any] = {
        "scene_seq": frame.scene_seq,
        "scene_at": frame.scene_at.isoformat() if frame.scene_at else None,
        "reopened": None,
    }
    scene = _scene_at(frame, to_seq)
    if scene is None:
        return record
    later = Scene.objects.filter(frame=frame, number__gt=scene.number)
    SceneSummary.objects.filter(scene__in=later).update(rewound=rewind)
    later.update(rewound=rewind)
    if scene.status == SceneStatus.CLOSED:
        record["reopened"] = {
            "id": str(scene.pk),
            **{f: _iso(getattr(scene, f)) for f in REOPENED},
        }
        SceneSummary.objects.filter(scene=scene).update(rewound=rewind)
        Scene.move(
            scene.pk,
            SceneStatus.OPEN,
            closed_seq=None,
            closed_reason="",
            closed_at=None,
            summary_status=SummaryStatus.NONE,  # a summary task still on its way finds none
            summary="",
            summary_error="",
            tries=[],
        )
    before = Scene.objects.filter(frame=frame, number__lt=scene.number).order_by("-number").first()
    Frame.objects.filter(pk=frame.pk).update(
        scene_seq=scene.opened_seq, scene_at=before.closed_at if before else None
    )
    return record


# The fields a reopened scene loses, recorded for its restore.
REOPENED = (
    "status",
    "closed_seq",
    "closed_reason",
    "closed_at",
    "summary_status",
    "summary",
    "summary_error",
    "tries",
    "updated_at",
    "lease_owner",
    "heartbeat_at",
    "attempts",
)


def _iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def _scenes_restore(*, frame: Frame, rewind: Rewind) -> None:
    """Put scenes back as they were just before `rewind`: the reopened scene closed again
    (first: one open scene at a time), then the hidden scenes and summaries shown."""
    record = rewind.before.get("scenes") or {}
    reopened = record.get("reopened")
    if reopened:
        fields = {f: reopened[f] for f in REOPENED if f in reopened}  # older rewinds: fewer
        for f in ("closed_at", "updated_at", "heartbeat_at"):
            fields[f] = fields.get(f) and datetime.fromisoformat(fields[f])
        Scene.all_objects.filter(pk=reopened["id"]).update(**fields)
    Scene.all_objects.filter(rewound=rewind).update(rewound=None)
    SceneSummary.all_objects.filter(rewound=rewind).update(rewound=None)
    if record:
        at = record["scene_at"]
        Frame.objects.filter(pk=frame.pk).update(
            scene_seq=record["scene_seq"], scene_at=at and datetime.fromisoformat(at)
        )


def scenes_moved(*, frame: Frame, to_seq: int) -> bool:
    """Whether a rewind to `to_seq` would change any scene (a scene closed since a rewind
    with no outcome played after: restoring must still hide that)."""
    return any(scenes_counts(frame=frame, to_seq=to_seq).values())


def rewind_snapshot(*, frame: Frame, rewind: Rewind, user: AbstractBaseUser | None) -> Snapshot:
    """The pre-rewind snapshot: every seat's, as the periodic frame snapshots hold them
    (snapshots/), kept with the rewind for the GM to download from the frame's list."""
    return Snapshot.objects.create(
        frame=frame,
        kind=SnapshotKind.REWIND,
        rewind=rewind,
        by=user,
        data=frame_snapshot_data(frame=frame),
    )


def frame_lock_open(frame: Frame) -> Frame:
    """The frame, locked (every outcome write takes its lock) and read afresh.

    Raises:
        ApplicationError: the scene is closed (409): a closed frame is not rewound.
    """
    lock_frame(frame.pk)
    frame = Frame.objects.get(pk=frame.pk)
    if frame.status == FrameStatus.CLOSED:
        raise ApplicationError(CLOSED, status_code=409)
    return frame


def _hide(*, frame: Frame, to_seq: int, rewind: Rewind) -> dict[str, int]:
    """Hide everything visible after `to_seq` under `rewind`. Passes and state passes go
    first (their rows' locks wait for a worker still writing under them), then the plan is
    read again, so a narrative or a memory such a worker stored meanwhile goes too."""
    first = rewind_plan(frame=frame, to_seq=to_seq)
    Pass.objects.filter(pk__in=first.passes).update(rewound=rewind)
    # A window whose pass was still running is over: it must not show firing for ever.
    lifecycle_move_all(
        Window.objects.filter(passes__in=Pass.all_objects.filter(rewound=rewind)),
        WINDOW_TRANSITIONS,
        WindowStatus.FIRED,
        only_from=(WindowStatus.FIRING,),
    )
    StatePass.objects.filter(pk__in=first.state_passes).update(rewound=rewind)
    plan = rewind_plan(frame=frame, to_seq=to_seq)
    for key, model in HIDDEN.items():
        model.objects.filter(pk__in=plan.ids(key)).update(rewound=rewind)
    counts = plan.counts()
    counts["passes"] = len(set(first.passes) | set(plan.passes))
    counts["state_passes"] = len(set(first.state_passes) | set(plan.state_passes))
    return counts


def _notify(frame: Frame, rewind: Rewind, event: str) -> int:
    """`frame.rewound` / `frame.restored`, numbered, to everyone (spectators too): every
    reader re-reads. Returns its seq."""
    seq = next_seq(frame.pk)
    body = {
        "id": rewind.pk,
        "kind": rewind.kind,
        "to_seq": rewind.to_seq,
        "restored": rewind.restored_at is not None,
    }
    wire = FrameRewound(type=event, rewind=body, seq=seq).wire()  # type: ignore[arg-type]
    group_send_on_commit(frame_group(frame.pk), wire)
    group_send_on_commit(spectator_group(frame.pk), wire)
    return seq


def rewind_record(
    *,
    frame: Frame,
    to_seq: int,
    user: AbstractBaseUser | None,
    kind: str = RewindKind.REWIND,
    to_outcome: Outcome | None = None,
    edits: list[dict] | None = None,
) -> Rewind:
    """Hide everything after `to_seq` (the frame locked by the caller): the pre-rewind
    record first, then the rows, then the caches folded again, then everyone told.

    Raises:
        ApplicationError: nothing comes after that point (409).
    """
    if rewind_plan(frame=frame, to_seq=to_seq).empty() and not (
        kind == RewindKind.RESTORE and scenes_moved(frame=frame, to_seq=to_seq)
    ):
        raise ApplicationError("Nothing was played after that outcome.", status_code=409)
    rewind = Rewind.objects.create(
        frame=frame,
        kind=kind,
        to_seq=to_seq,
        to_outcome=to_outcome,
        seq=0,
        by=user,
        before=seat_states(frame=frame),
        edits=edits or [],
    )
    rewind_snapshot(frame=frame, rewind=rewind, user=user)
    counts = scenes_counts(frame=frame, to_seq=to_seq)
    rewind.before["scenes"] = _scenes_hide(frame=frame, to_seq=to_seq, rewind=rewind)
    rewind.counts = {**_hide(frame=frame, to_seq=to_seq, rewind=rewind), **counts}
    caches_rebuild(frame=frame, summaries=not any(counts.values()))
    rewind.seq = _notify(frame, rewind, "frame.rewound")
    rewind.save(update_fields=["counts", "seq", "before"])
    return rewind


@transaction.atomic
def frame_rewind(*, frame: Frame, to: object, user: AbstractBaseUser) -> Rewind:
    """The GM rewinds the frame to outcome `to`: everything after it is hidden, kept and
    restorable (`rewind_restore`).

    Raises:
        ApplicationError: no such outcome (404), the frame is closed or nothing follows
            the outcome (409).
    """
    frame = frame_lock_open(frame)
    point = _point(frame=frame, to=to)
    return rewind_record(frame=frame, to_seq=point.seq, user=user, to_outcome=point)


@transaction.atomic
def rewind_restore(*, rewind: Rewind, user: AbstractBaseUser) -> Rewind:
    """The GM restores a rewind: what was played since it is hidden in turn (a rewind of
    kind `restore`, itself restorable), then what it hid comes back and the caches are put
    back exactly as they were just before it.

    Raises:
        ApplicationError: it was restored already, a newer rewind still stands (restore
            that first), or the frame is closed (409).
    """
    frame = frame_lock_open(rewind.frame)
    rewind = Rewind.objects.get(pk=rewind.pk)
    if rewind.restored_at is not None:
        raise ApplicationError("This rewind was restored already.", status_code=409)
    if Rewind.objects.filter(frame=frame, pk__gt=rewind.pk, restored_at__isnull=True).exists():
        raise ApplicationError("Restore the newer rewind first.", status_code=409)
    if not rewind_plan(frame=frame, to_seq=rewind.to_seq).empty() or scenes_moved(
        frame=frame, to_seq=rewind.to_seq
    ):
        rewind_record(frame=frame, to_seq=rewind.to_seq, user=user, kind=RewindKind.RESTORE)
    for model in HIDDEN.values():
        model.all_objects.filter(rewound=rewind).update(rewound=None)
    _scenes_restore(frame=frame, rewind=rewind)
    caches_rebuild(frame=frame, edges=rewind.before.get("edges"))
    rewind.restored_at, rewind.restored_by = timezone.now(), user
    rewind.restored_seq = _notify(frame, rewind, "frame.restored")
    rewind.save(update_fields=["restored_at", "restored_by", "restored_seq"])
    return rewind


def rewind_list(*, frame: Frame) -> list[dict]:
    """The frame's rewinds, newest first, for the GM (the `RewindBody` answers)."""
    rewinds = list(Rewind.objects.filter(frame=frame).select_related("by", "restored_by"))
    newest_live = max((r.pk for r in rewinds if r.restored_at is None), default=None)
    return [rewind_body(r, restorable=r.pk == newest_live) for r in reversed(rewinds)]


def rewind_body(rewind: Rewind, *, restorable: bool = False) -> dict:
    return {
        "id": rewind.pk,
        "kind": rewind.kind,
        "to_seq": rewind.to_seq,
        "to_outcome": str(rewind.to_outcome_id) if rewind.to_outcome_id else None,
        "by": rewind.by.username if rewind.by else None,
        "created_at": rewind.created_at.isoformat(),
        "counts": rewind.counts,
        "edits": rewind.edits,
        "restored_at": rewind.restored_at.isoformat() if rewind.restored_at else None,
        "restored_by": rewind.restored_by.username if rewind.restored_by else None,
        "restorable": restorable,
    }

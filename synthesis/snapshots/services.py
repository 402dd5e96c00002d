"""Snapshot work: exporting a seat's (recorded), importing one into a seat as delta rows
and memories (all or nothing), resetting a character (a snapshot first), and snapshotting
every live frame that changed (the beat task), pruned."""

import hashlib
import json
import uuid
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.dateparse import parse_datetime
from pydantic import ValidationError

from authoring.models import Persona
from lmix.errors import ApplicationError
from productions.knowledge import public_name

from ..frame_selectors import FrameAccess, seats_for_prompts
from ..medium.context import seat_labels
from ..models import Frame, FrameStatus, Outcome, Seat
from ..snapshot_models import Snapshot, SnapshotKind
from ..state.fold import DELTA_MAX, EdgeValues
from ..state.selectors import state_at
from ..state.services import delta_record, name_key
from ..state_models import DeltaKind, Memory, MemorySource
from .build import PERSONA_FIELDS, seat_snapshot
from .schema import FORMAT, VERSION, SnapshotV1

RESTORABLE = ("affinity", "mood", "facts", "memories")
FRAME_FORMAT = "lmix-frame-snapshot"


def _seat_of(*, access: FrameAccess, seat_id: object, seats: list[Seat]) -> Seat:
    """The frame's seat `seat_id`, if the caller is its player or the GM (404 otherwise:
    another's seat is not even said to exist, as the sheet and the state say)."""
    try:
        seat_pk = uuid.UUID(str(seat_id))
    except ValueError:
        raise ApplicationError("No such seat in this frame.", status_code=404) from None
    seat = next((s for s in seats if s.pk == seat_pk), None)
    if seat is None or not (access.is_gm or seat_pk in access.seat_ids):
        raise ApplicationError("No such seat in this frame.", status_code=404)
    return seat


def snapshot_export(
    *, access: FrameAccess, user: AbstractBaseUser, seat_id: object, at: object = None
) -> dict[str, Any]:
    """The seat's snapshot (now, or as of the outcome `at`) for its player or the GM,
    recorded (`Snapshot`, kind export).

    Raises:
        ApplicationError: 404 for a seat or an outcome not the caller's to read.
    """
    frame = access.frame
    seats = seats_for_prompts(frame=frame)
    seat = _seat_of(access=access, seat_id=seat_id, seats=seats)
    outcome = None
    if at:
        try:
            outcome = Outcome.objects.get(frame=frame, pk=uuid.UUID(str(at)))
        except (ValueError, Outcome.DoesNotExist):
            raise ApplicationError("No such outcome in this frame.", status_code=404) from None
    data = seat_snapshot(frame=frame, seat=seat, seats=seats, at=outcome)
    Snapshot.objects.create(
        frame=frame, seat=seat, outcome=outcome, by=user, kind=SnapshotKind.EXPORT, data=data
    )
    return data


def _refuse(message: str, where: str = "snapshot") -> None:
    raise ApplicationError(message, details={where: [message]})


def snapshot_parse(data: Any) -> SnapshotV1:
    """A snapshot checked: its format and version first (a clear word for a file of another
    kind or version), then every field, each problem named with where it is.

    Raises:
        ApplicationError: 400, naming the problem and its place (`current_state.mood.intensity`).
    """
    if not isinstance(data, dict):
        _refuse("The snapshot must be a JSON object.")
    info = data.get("_snapshot_info")
    if not isinstance(info, dict):
        _refuse("Not an LMiX snapshot: `_snapshot_info` is missing.")
    if info.get("format") != FORMAT:
        _refuse(f"Not an LMiX snapshot: `_snapshot_info.format` must be '{FORMAT}'.")
    if info.get("version") != VERSION:
        _refuse(
            f"`_snapshot_info.version` is {json.dumps(info.get('version'))}; this LMiX reads "
            f"version {VERSION} (see /api/schemas/snapshot-v1.json)."
        )
    try:
        return SnapshotV1.model_validate(data)
    except ValidationError as error:
        problems = [f"{_place(e['loc'])}: {e['msg']}" for e in error.errors(include_url=False)[:10]]
        message = "The snapshot does not follow version 1: " + "; ".join(problems[:3])
        raise ApplicationError(message, details={"snapshot": problems}) from None


def _place(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "snapshot"


def restore_options(value: Any) -> set[str]:
    """What to restore: a list of names, or an object of booleans; absent: everything."""
    if value is None:
        return set(RESTORABLE)
    if isinstance(value, dict):
        names = {k for k, v in value.items() if v is True}
        unknown = set(value) - set(RESTORABLE)
        bad = [k for k, v in value.items() if not isinstance(v, bool)]
        if bad:
            _refuse(f"`restore.{bad[0]}` must be true or false.", "restore")
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        names = set(value)
        unknown = names - set(RESTORABLE)
    else:
        _refuse("`restore` must be a list of names or an object of booleans.", "restore")
    if unknown:
        _refuse(
            f"`restore` names {sorted(unknown)[0]!r}; it may hold {', '.join(RESTORABLE)}.",
            "restore",
        )
    return names


def stored_snapshot(*, frame: Frame, snapshot_id: object, seat: Seat) -> dict[str, Any]:
    """A snapshot this frame stored (a reset's, an export's, or the seat's entry of a frame
    snapshot, periodic or taken before a rewind), to restore.

    Raises:
        ApplicationError: 404 when the frame has no such snapshot of that seat.
    """
    try:
        record = Snapshot.objects.get(frame=frame, pk=uuid.UUID(str(snapshot_id)))
    except (ValueError, Snapshot.DoesNotExist):
        raise ApplicationError("No such snapshot in this frame.", status_code=404) from None
    if record.kind not in (SnapshotKind.FRAME, SnapshotKind.REWIND):  # a frame's: every seat
        return record.data
    for entry in record.data.get("seats", []):
        if entry.get("_snapshot_info", {}).get("source", {}).get("seat_id") == str(seat.pk):
            return entry
    raise ApplicationError("That frame snapshot holds no state of this seat.", status_code=404)


def _steps(change: int) -> list[int]:
    """A change of affinity or trust as delta steps, each within what one delta may move."""
    steps = []
    while change:
        step = max(-DELTA_MAX, min(DELTA_MAX, change))
        steps.append(step)
        change -= step
    return steps


@transaction.atomic
def snapshot_import(
    *,
    access: FrameAccess,
    user: AbstractBaseUser,
    seat_id: object,
    data: Any,
    restore: set[str],
    persona: bool = False,
) -> dict[str, Any]:
    """Restore a snapshot into a seat of the frame (the GM's), as the GM's own delta rows
    (`by`: they fold, and a rewind keeps or drops them as it does the GM's edits) and
    memories: all of it or nothing. Others are found by name among the frame's seats; a
    name none has is reported, not fatal. Affinity and trust are set to the snapshot's,
    the mood too; facts, knowledge and memories the seat lacks are added.

    Args:
        restore: which of RESTORABLE.
        persona: also recreate the persona in the importer's library (matched first: one of
            theirs with the same fields is reused).
    Returns:
        The `SnapshotImported` answer (answers.py).
    """
    parsed = snapshot_parse(data)
    frame = access.frame
    seats = seats_for_prompts(frame=frame)
    seat = _seat_of(access=access, seat_id=seat_id, seats=seats)
    by_name: dict[str, Seat] = {}
    for other in seats:  # the public name first, then the real one (the GM knows both)
        by_name.setdefault(name_key(other.persona.name), other)
    for other_pk, label in seat_labels(seats).items():
        by_name[name_key(label)] = next(s for s in seats if s.pk == other_pk)
    state = parsed.current_state
    now = state_at(seat=seat)
    unknown: list[str] = []

    def other(name: str | None) -> Seat | None:
        """Another character of this frame by name (the seat itself is no other)."""
        found = by_name.get(name_key(name)) if name else None
        if name and found is None and name not in unknown:
            unknown.append(name)
        return found if found is not None and found.pk != seat.pk else None

    if "affinity" in restore:
        for entry in state.affinity:
            target = other(entry.character)
            if target is None:
                continue
            edge = now.edges.get(str(target.pk), EdgeValues())
            for fact in entry.knowledge:
                if fact not in edge.knowledge:
                    delta_record(seat=seat, kind=DeltaKind.EDGE, by=user, target=target, text=fact)
            for step in _steps(entry.points - edge.affinity):
                delta_record(seat=seat, kind=DeltaKind.EDGE, by=user, target=target, affinity=step)
            for step in _steps(entry.trust - edge.trust):
                delta_record(seat=seat, kind=DeltaKind.EDGE, by=user, target=target, trust=step)
            if str(target.pk) not in now.edges and not (
                entry.knowledge
                or _steps(entry.points - edge.affinity)
                or _steps(entry.trust - edge.trust)
            ):  # an edge at its starting values is still an edge: they met
                delta_record(seat=seat, kind=DeltaKind.EDGE, by=user, target=target)
    if "mood" in restore:
        mood = state.mood
        delta_record(
            seat=seat,
            kind=DeltaKind.MOOD,
            by=user,
            mood=mood.current,
            intensity=mood.intensity - now.seat.intensity,
        )
    if "facts" in restore:
        for fact in state.learned_facts:
            if fact.value not in now.seat.facts:
                delta_record(seat=seat, kind=DeltaKind.FACT, by=user, text=fact.value)
    memories = 0
    if "memories" in restore:
        known = set(Memory.objects.filter(seat=seat).values_list("text", flat=True))
        for episode in state.memorable_episodes:
            if episode.summary in known:
                continue
            told_by = other(episode.told_by) if episode.source == MemorySource.TOLD else None
            witnesses = [w for w in (other(n) for n in episode.witnesses) if w is not None]
            memory = Memory.objects.create(
                frame=frame,
                seat=seat,
                text=episode.summary,
                witnesses=[str(seat.pk), *(str(w.pk) for w in witnesses)],
                source=episode.source,
                told_by=told_by,
                reliability=episode.reliability,
                significance=episode.significance,
                pinned=episode.pinned,
            )
            # When it was made, not when it was imported: recall ranks by recency.
            Memory.objects.filter(pk=memory.pk).update(created_at=episode.date)
            known.add(episode.summary)
            memories += 1
    made = _persona_recreate(owner=user, template=parsed.persona) if persona else None
    record = Snapshot.objects.create(
        frame=frame,
        seat=seat,
        by=user,
        kind=SnapshotKind.IMPORT,
        data=parsed.model_dump(mode="json", by_alias=True),
    )
    warnings = []
    if name_key(parsed.persona.name) != name_key(seat.persona.name):
        warnings.append(
            f"The snapshot is of {parsed.persona.name}; this seat plays {seat.persona.name}."
        )
    return {
        "snapshot": str(record.pk),
        "seat": str(seat.pk),
        "restored": [name for name in RESTORABLE if name in restore],
        "memories": memories,
        "unknown_characters": unknown,
        "persona": made,
        "warnings": warnings,
    }


def _persona_recreate(*, owner: AbstractBaseUser, template: Any) -> dict[str, Any]:
    """The snapshot's persona in the owner's library: one of theirs with the same fields,
    or a new one."""
    fields = template.model_dump()
    same = [
        p
        for p in Persona.objects.filter(owner=owner, name=template.name)
        if all(getattr(p, f) == fields[f] for f in PERSONA_FIELDS)
    ]
    if same:
        return {"id": str(same[0].pk), "name": same[0].name, "created": False}
    persona = Persona(owner=owner, **fields)
    persona.full_clean(exclude=["owner", "avatar_url"])
    persona.save()
    return {"id": str(persona.pk), "name": persona.name, "created": True}


@transaction.atomic
def seat_reset(
    *, access: FrameAccess, user: AbstractBaseUser, seat_id: object, confirm: str
) -> dict[str, Any]:
    """Reset a character (the GM): its state snapshotted first (`Snapshot`, kind reset,
    which restores it: `snapshot_import` with its id), then a reset delta (the fold starts
    over from it, so a rewind to before it brings the state back) and its memories cleared.

    Raises:
        ApplicationError: 403 for a player; 400 unless `confirm` is the character's name
            (its real one, or the one the others know).
    """
    if not access.is_gm:
        raise ApplicationError("Only the frame's GM can do that.", status_code=403)
    frame = access.frame
    seats = seats_for_prompts(frame=frame)
    seat = _seat_of(access=access, seat_id=seat_id, seats=seats)
    names = {seat.persona.name.strip(), public_name(seat.persona).strip()}
    if str(confirm).strip() not in names:
        message = f"To reset this character, type its name, {seat.persona.name!r}, to confirm."
        raise ApplicationError(message, details={"confirm": [message]})
    data = seat_snapshot(frame=frame, seat=seat, seats=seats)
    record = Snapshot.objects.create(
        frame=frame, seat=seat, by=user, kind=SnapshotKind.RESET, data=data
    )
    delta_record(seat=seat, kind=DeltaKind.RESET, by=user)
    cleared, _ = Memory.objects.filter(seat=seat).delete()
    return {"snapshot": str(record.pk), "seat": str(seat.pk), "memories_cleared": cleared}


def frame_snapshot_data(*, frame: Frame) -> dict[str, Any]:
    """Every seat's snapshot (all of it: the GM's to read)."""
    seats = seats_for_prompts(frame=frame)
    return {  # `FrameSnapshot` (schema.py)
        "format": FRAME_FORMAT,
        "version": VERSION,
        "frame": {"id": str(frame.pk), "name": frame.name},
        "seats": [seat_snapshot(frame=frame, seat=s, seats=seats) for s in seats],
    }


def _fingerprint(data: dict[str, Any]) -> str:
    """What the snapshot holds, without when it was taken."""
    seats = [{k: v for k, v in s.items() if k != "_snapshot_info"} for s in data["seats"]]
    text = json.dumps([data["frame"], seats], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def frame_snapshot_take(*, frame: Frame, keep: int | None = None) -> Snapshot | None:
    """Snapshot the frame if it changed since its last one, keeping its newest `keep`.

    Returns:
        The new snapshot, or None when nothing changed.
    """
    keep = settings.LMIX_FRAME_SNAPSHOT_KEEP if keep is None else keep
    data = frame_snapshot_data(frame=frame)
    fingerprint = _fingerprint(data)
    last = Snapshot.objects.filter(frame=frame, kind=SnapshotKind.FRAME).first()
    if last is not None and last.fingerprint == fingerprint:
        return None
    record = Snapshot.objects.create(
        frame=frame, kind=SnapshotKind.FRAME, data=data, fingerprint=fingerprint
    )
    older = Snapshot.objects.filter(frame=frame, kind=SnapshotKind.FRAME).values_list(
        "pk", flat=True
    )[keep:]
    Snapshot.objects.filter(pk__in=list(older)).delete()
    return record


def frames_snapshot() -> int:
    """Snapshot every live frame (open or paused) that changed: the beat task's.

    Returns:
        How many snapshots were taken.
    """
    taken = 0
    for frame in Frame.objects.exclude(status=FrameStatus.CLOSED).iterator():
        with transaction.atomic():
            taken += frame_snapshot_take(frame=frame) is not None
    return taken


def frame_snapshots(*, access: FrameAccess) -> list[dict[str, Any]]:
    """The frame's snapshot records, newest first (the GM's)."""
    if not access.is_gm:
        raise ApplicationError("Only the frame's GM can do that.", status_code=403)
    records = Snapshot.objects.filter(frame=access.frame).select_related("seat__persona", "by")
    return [
        {
            "id": str(r.pk),
            "kind": r.kind,
            "rewind": r.rewind_id,
            "seat": str(r.seat_id) if r.seat_id else None,
            "character": r.seat.persona.name if r.seat else None,
            "by": r.by.get_username() if r.by else None,
            "outcome_seq": (r.data.get("_snapshot_info", {}).get("source", {}) or {}).get(
                "outcome_seq"
            ),
            "created_at": r.created_at.isoformat(),
        }
        for r in records[:200]
    ]


def frame_snapshot_get(*, access: FrameAccess, snapshot_id: object) -> tuple[dict, str]:
    """A stored snapshot's JSON and a file name for it (the GM's)."""
    if not access.is_gm:
        raise ApplicationError("Only the frame's GM can do that.", status_code=403)
    try:
        record = Snapshot.objects.get(frame=access.frame, pk=uuid.UUID(str(snapshot_id)))
    except (ValueError, Snapshot.DoesNotExist):
        raise ApplicationError("No such snapshot in this frame.", status_code=404) from None
    named = f"{record.kind}-{record.rewind_id}" if record.rewind_id else record.kind
    return record.data, f"{named}-{record.created_at:%Y%m%d-%H%M%S}.json"


def snapshot_filename(data: dict[str, Any]) -> str:
    """An ASCII file name for a seat's snapshot (a header must survive every client)."""
    info = data["_snapshot_info"]
    stem = "".join(c if c.isascii() and c.isalnum() else "_" for c in info["character"])
    moment = parse_datetime(info["created_at"])
    return f"{stem.strip('_')[:60] or 'character'}-{moment:%Y%m%d-%H%M%S}.snapshot.json"

"""Gather: what one character's medium pass may use, read for that character only.

The pass's own committed liquid (in its window), same-pscale committed liquid of the other
seats still waiting (resolved together), the outcomes since its last narrative that it
witnessed, the visible intentions of others still under way, its compiled knowledge and its
own recent narratives. Never another character's narrative, internal truth or a group's
inside it is not a member of: those stay out of every prompt built from this context.

In a shared frame one pass at a time narrates for everyone: it takes every committed liquid
of the frame not yet narrated, and its knowledge is what everyone may know (the public
characters of the bones prompt), never anyone's inside.
"""

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import QuerySet

from lmix.prepared import Param, Prepared, Statement, together
from productions.knowledge import knowledge_text, public_name
from synthesis.frame_selectors import seats_for_prompts_reads, seats_with_memberships
from synthesis.models import Face, Frame, FrameMode, LiquidVisibility, Seat

from ..models import (
    Liquid,
    LiquidStatus,
    Narrative,
    NarrativeStatus,
    Outcome,
    Pass,
    PassStatus,
    Trigger,
)
from ..windows import DEFAULT_PSCALE
from .components import BONES, flesh_kind

TEXT_MAX = 500  # one action, fact or reason, as a prompt line or stored in an outcome
PENDING_MAX = 8  # others' intentions still under way, newest kept
# An outcome can only resolve liquid committed before it; this much slack absorbs clocks.
CLOCK_SLACK = timedelta(minutes=5)


class LeaseLost(Exception):
    """The run no longer holds its pass (restarted elsewhere, retried, deleted): it stops
    and writes nothing more."""


@dataclass(frozen=True)
class PassLease:
    """Which run holds a running pass: every write of the run is conditional on it."""

    pass_id: uuid.UUID
    owner: str
    attempts: int

    @property
    def where(self) -> dict[str, object]:
        return {"lease_owner": self.owner, "attempts": self.attempts}


def held_pass(lease: PassLease) -> QuerySet[Pass]:
    """The pass, if the run still holds it under `lease`."""
    return Pass.objects.filter(pk=lease.pass_id, status=PassStatus.RUNNING, **lease.where)


@dataclass(frozen=True)
class Action:
    """A committed (or, for a pending intention, submitted) liquid as prompts show it."""

    liquid_id: uuid.UUID
    seat_id: uuid.UUID
    label: str
    text: str
    interruptive: bool = False
    targets: tuple[str, ...] = ()  # labels of the characters it acts on
    # An AI seat's assistant wrote it: no person chose what it says, so its words never
    # count as a secret its actor revealed (the secret guard, synthesis/guard.py).
    by_model: bool = False

    @property
    def chosen(self) -> str:
        """Its words as a person chose to say them, or nothing (`by_model`)."""
        return "" if self.by_model else self.text


@dataclass
class MediumContext:
    pass_: Pass
    frame: Frame
    seat: Seat
    seats: list[Seat]  # the frame's, in position order, personas' affiliations prefetched
    labels: dict[uuid.UUID, str]  # seat → the character's name in prompts and answers
    pscale: int
    own: list[Liquid]  # this pass narrates and consumes these
    to_resolve: list[Action]  # in canonical order: commit time, then seat position
    resolved_before: dict[uuid.UUID, int]  # own liquid another outcome already resolved → seq
    outcomes: list[Outcome]  # oldest first
    horizon: int  # the newest outcome's seq when this was gathered
    pending: list[Action]
    knowledge: str
    recent: list[Narrative]  # own, oldest first
    interrupt_outcome: Outcome | None = None
    interrupt_reason: str = ""
    visible_liquid: bool = True
    shared: bool = False  # one prose for everyone, from public knowledge (shared mode)
    # What the prompt's components read (components.py), by component name.
    loaded: dict[str, list] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.labels[self.seat.pk]


def flat(text: str, limit: int = TEXT_MAX) -> str:
    """One line: a player's newlines can never start a line of its own in a prompt."""
    return " ".join(str(text).split())[:limit]


def seat_labels(seats: list[Seat]) -> dict[uuid.UUID, str]:
    """Each seat's character by the name everyone knows (its `known_as`: prompts of one
    character hold outcomes everyone reads); a name two personas share gets its position."""
    names = [public_name(seat.persona).strip() or "Someone" for seat in seats]
    return {
        seat.pk: name if names.count(name) == 1 else f"{name} ({seat.position + 1})"
        for seat, name in zip(seats, names, strict=True)
    }


def effective_pscale(liquid: Liquid) -> int:
    return liquid.pscale if liquid.pscale is not None else DEFAULT_PSCALE


# What a pass reads with its frame: the prompts' world and scenario, the medium model.
FRAME_RELATED = ("production__world", "production__scenario", "medium_model")


# Gather's reads (`_gather_reads`), built once (lmix/prepared.py); the settings are read
# when they are built.
# Intentions only: an author's or a designer's writing is its own pass's (synthesis/faces/).
LIVE_LIQUID = Prepared(
    lambda: Liquid.objects.filter(
        frame=Param(Liquid, "frame"),
        face=Face.PLAYER,
        status__in=[LiquidStatus.SUBMITTED, LiquidStatus.COMMITTED],
    ).order_by("submitted_at", "id")
)


def _newest_narratives(**where: object) -> Prepared[Narrative]:
    return Prepared(
        lambda: Narrative.objects.filter(status=NarrativeStatus.DONE, **where).order_by(
            "-created_at", "-id"
        )[: max(settings.LMIX_MEDIUM_NARRATIVES_CONTEXT, 1)]
    )


SHARED_NARRATIVES = _newest_narratives(frame=Param(Narrative, "frame"), shared=True)
OWN_NARRATIVES = _newest_narratives(seat=Param(Narrative, "seat"), shared=False)
NEWEST_OUTCOMES = Prepared(
    lambda: Outcome.objects.filter(frame=Param(Outcome, "frame")).order_by("-seq")[
        : settings.LMIX_MEDIUM_OUTCOMES_CONTEXT
    ]
)


def _gather_reads(
    frame: Frame, pass_: Pass, *, shared: bool, extra: Sequence[Statement] = ()
) -> tuple[list[Seat], list[Liquid], list[Narrative], list[Outcome], list[list]]:
    """The frame's seats (personas and memberships attached), its live liquid, the pass's
    newest narratives (the frame's shared ones in a shared frame) and the frame's newest
    outcomes. Prepared (lmix/prepared.py) and sent in one round trip (`together`): these
    five reads run for every outcome, none needs another's answer, and building them with
    the ORM each time costs more than PostgreSQL takes to answer them (docs/benchmarks.md,
    "Stop 31").
    A seat's assistant and model are loaded only if the pass needs them (a frame without a
    medium model of its own). `extra` are the reads of the prompt's components, sent in the
    same round trip; their rows come last."""
    seat_rows, memberships, live, newest_first, newest, *more = together(
        *seats_for_prompts_reads(frame_id=frame.pk),
        LIVE_LIQUID.read(frame=frame.pk),
        (
            SHARED_NARRATIVES.read(frame=frame.pk)
            if shared
            else OWN_NARRATIVES.read(seat=pass_.seat_id)
        ),
        NEWEST_OUTCOMES.read(frame=frame.pk),
        *extra,
    )
    return seats_with_memberships(seat_rows, memberships), live, newest_first, newest, more


def gather(pass_: Pass, *, frame: Frame | None = None, flesh: bool = False) -> MediumContext:
    """Read everything the pass's character may use, now. `frame` is the pass's frame as
    this run just read it with the pass (`FRAME_RELATED` too); without it, it is read here,
    as a second gather must (its `seq` is the horizon). For the `flesh` prompt, the reads of
    its components (the character's state) go in the same batch; the bones prompt, on the
    path from a commit to its outcome, reads nothing more.

    Raises:
        ObjectDoesNotExist: the frame or the seat is gone.
    """
    if frame is None:
        frame = Frame.objects.select_related(*FRAME_RELATED).get(pk=pass_.frame_id)
    shared = frame.mode == FrameMode.SHARED
    readers = (flesh_kind(shared=shared) if flesh else BONES).reads()
    seats, live, newest_first, newest, more = _gather_reads(
        frame, pass_, shared=shared, extra=[c.read(pass_) for c in readers]
    )
    seat = next((s for s in seats if s.pk == pass_.seat_id), None)
    if seat is None:
        raise Seat.DoesNotExist("The pass's seat is gone.")
    labels = seat_labels(seats)
    position = {s.pk: s.position for s in seats}
    # Every outcome stored later takes a sequence number above the frame's now.
    horizon = frame.seq
    window = pass_.window
    if shared:  # everything committed and not yet narrated, whoever wrote it
        own = sorted(
            (x for x in live if x.status == LiquidStatus.COMMITTED),
            key=lambda x: (x.committed_at, str(x.pk)),
        )
    elif pass_.window_id:
        own = sorted(
            (
                x
                for x in live
                if x.seat_id == seat.pk
                and x.status == LiquidStatus.COMMITTED
                and x.window_id == pass_.window_id
            ),
            key=lambda x: (x.committed_at, str(x.pk)),
        )
    else:
        own = []  # an interrupt for a seat whose pass runs already: that pass has its liquid
    pscale = window.pscale if window is not None else DEFAULT_PSCALE
    mine = {x.pk for x in own}
    others = [x for x in live if x.seat_id != seat.pk and x.pk not in mine]
    same = [
        x for x in others if x.status == LiquidStatus.COMMITTED and effective_pscale(x) == pscale
    ]
    resolved = _resolved_seqs(frame, own + same, newest=newest)
    unresolved_own = [x for x in own if x.pk not in resolved]
    # Others' actions resolve together with this character's own, never on their own here.
    theirs = [x for x in same if x.pk not in resolved] if unresolved_own else []
    ordered = sorted(
        unresolved_own + theirs,
        key=lambda x: (x.committed_at or x.submitted_at, position.get(x.seat_id, 0), str(x.pk)),
    )
    to_resolve = [_action(x, labels) for x in ordered]
    visible = frame.liquid_visibility == LiquidVisibility.ALL
    chosen = {x.pk for x in ordered}
    pending = (
        [
            _action(x, labels)
            for x in others
            if x.pk not in chosen
            and x.pk not in resolved
            and not x.held  # an AI's words the guard holds: the GM's until released
            and x.pscale is not None
            and x.pscale >= pscale
        ][-PENDING_MAX:]
        if visible
        else []
    )
    interrupt_outcome = None
    if pass_.trigger == Trigger.INTERRUPT and pass_.interrupt.get("outcome"):
        interrupt_outcome = Outcome.objects.filter(
            frame=frame, pk=_uuid(pass_.interrupt["outcome"]), held=False
        ).first()
    resolved_before = {x.pk: resolved[x.pk] for x in own if x.pk in resolved}
    keep = settings.LMIX_MEDIUM_NARRATIVES_CONTEXT
    outcomes = _outcomes(
        frame,
        seat,
        newest,
        narrated=newest_first[0].outcome_ids if newest_first else [],
        narrated_at=newest_first[0].created_at if newest_first else None,
        must={*resolved_before.values(), *_seq_of(interrupt_outcome)},
    )
    # Older scenes reach the prompt as their summaries (synthesis/scenes/components.py),
    # not as their outcomes and narratives, but for what this pass must resolve.
    must = {*resolved_before.values(), *_seq_of(interrupt_outcome)}
    outcomes = [o for o in outcomes if o.seq > frame.scene_seq or o.seq in must]
    recent = [
        n for n in newest_first[:keep] if frame.scene_at is None or n.created_at >= frame.scene_at
    ]
    production = frame.production
    return MediumContext(
        pass_=pass_,
        frame=frame,
        seat=seat,
        seats=seats,
        labels=labels,
        pscale=pscale,
        own=own,
        to_resolve=to_resolve,
        resolved_before=resolved_before,
        outcomes=outcomes,
        horizon=horizon,
        pending=pending,
        knowledge=""
        if shared
        else knowledge_text(
            speaker=seat.persona,
            cast=[s.persona for s in seats],
            world=production.world,
            scenario=production.scenario,
        ),
        recent=recent[::-1],
        interrupt_outcome=interrupt_outcome,
        interrupt_reason=(
            flat(pass_.interrupt.get("reason", "")) if pass_.trigger == Trigger.INTERRUPT else ""
        ),
        visible_liquid=visible,
        shared=shared,
        loaded={c.name: rows for c, rows in zip(readers, more, strict=True)},
    )


def _action(liquid: Liquid, labels: dict[uuid.UUID, str]) -> Action:
    targets = [labels.get(_uuid(t)) for t in liquid.targets or []]
    return Action(
        liquid_id=liquid.pk,
        seat_id=liquid.seat_id,
        label=labels.get(liquid.seat_id, "Someone"),
        text=flat(liquid.content),
        interruptive=liquid.interruptive,
        targets=tuple(t for t in targets if t and t != labels.get(liquid.seat_id)),
        by_model=liquid.author_id is None,
    )


def _resolved_seqs(
    frame: Frame, liquids: list[Liquid], *, newest: list[Outcome]
) -> dict[uuid.UUID, int]:
    """Which of `liquids` an outcome already resolved (liquid → the first such seq).
    `newest` are the frame's newest outcomes (`NEWEST_OUTCOMES`): when they are fewer than
    it reads, they are all of them, and nothing more is read."""
    if not liquids:
        return {}
    since: datetime = min(x.committed_at or x.submitted_at for x in liquids) - CLOCK_SLACK
    wanted = {str(x.pk): x.pk for x in liquids}
    found: dict[uuid.UUID, int] = {}
    if len(newest) < (NEWEST_OUTCOMES.limit or 0):
        since_then = [(o.seq, o.liquid_ids) for o in newest[::-1] if o.created_at >= since]
    else:
        since_then = (
            Outcome.objects.filter(frame=frame.pk, created_at__gte=since)
            .order_by("seq")
            .values_list("seq", "liquid_ids")
        )
    for seq, liquid_ids in since_then:
        for liquid_id in liquid_ids or []:
            if liquid_id in wanted:
                found.setdefault(wanted[liquid_id], seq)
    return found


def _outcomes(
    frame: Frame,
    seat: Seat,
    newest: list[Outcome],
    *,
    narrated: list,
    must: set[int],
    narrated_at: datetime | None = None,
) -> list[Outcome]:
    """Of the frame's `newest` outcomes (`NEWEST_OUTCOMES`), those after the ones the
    pass's last narrative told (`narrated`, its outcome ids) that the seat witnessed, plus
    those it must know (its own action's, the interrupt's), oldest first; never a held one."""
    # Narrated outcomes older than all of these leave every one of them untold.
    told = {str(pk) for pk in narrated}
    after = max((o.seq for o in newest if str(o.pk) in told), default=0)
    # A held outcome is the GM's until released: in no prompt (a pass it concerns waits
    # for it, held: synthesis/medium/run.py `_held`). `_resolved_seqs` still counts it.
    # One released since the last narrative was told is new to it, however old its seq.
    chosen = {
        o.seq: o
        for o in newest
        if (o.seq > after or _released_since(o, told, narrated_at))
        and str(seat.pk) in (o.witnesses or [])
        and not o.held
    }
    missing = must - chosen.keys() - {o.seq for o in newest if o.held}
    if missing:
        rows = Outcome.objects.filter(frame=frame, seq__in=missing, held=False)
        chosen.update({o.seq: o for o in rows})
    return [chosen[seq] for seq in sorted(chosen)]


def _released_since(outcome: Outcome, told: set[str], narrated_at: datetime | None) -> bool:
    """A held outcome the GM released after the pass's last narrative, which could not
    tell it (`_outcomes`)."""
    released = outcome.released_at
    return bool(released and narrated_at and released > narrated_at and str(outcome.pk) not in told)


def _seq_of(outcome: Outcome | None) -> set[int]:
    return {outcome.seq} if outcome is not None else set()


def _uuid(value: object) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None

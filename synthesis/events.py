"""What synthesis events frame sockets are sent, and who reads each body (the
`*_audiences` functions are pure: choosing recipients is a privacy decision, unit-tested).
Groups, the frame's sequence and publishing are in synthesis/frame_events.py."""

from typing import Any

from lmix.realtime.publish import group_send, group_send_on_commit
from lmix.realtime.wire import fast_wire

from .event_types import (
    LiquidEvent,
    LiquidFlagged,
    NarrativeDone,
    NarrativeRestarted,
    NarrativeToken,
    OutcomeCreated,
    OutcomeDiscarded,
    OutcomeEdited,
    OutcomeFlagged,
    OutcomeReleased,
    PassFailed,
    StateChanged,
    WindowCancelled,
    WindowEvent,
)
from .frame_events import (
    Audiences,
    frame_group,
    gm_group,
    notify_audiences,
    notify_frame,
    seat_group,
    spectator_group,
)
from .models import Frame, Liquid, Narrative, Outcome, Pass, Seat, Window

_FROM_SEATS: Any = object()


def liquid_audiences(
    event_type: str,
    liquid: Liquid,
    *,
    frame: Frame,
    seats: list[Seat],
    occupant: Any = _FROM_SEATS,
) -> Audiences:
    """Who reads what of a liquid event: the GM and the liquid's own seat's player all of
    it; every other seat's player what `others_reading` allows: its words where the frame
    shows liquid to all and it is not held (an AI seat's words the secret guard flagged),
    never the soft pass's words on it; else only that it exists. When the others read all
    there is (no soft words yet), one message to the frame group.

    Whatever the visibility, a seat's player now never learns of a previous player's
    liquid (`previous_players`: the seat changed hands since it was written), not even
    its id: their seat group is sent nothing (the hole in their sequence makes their
    client re-read its snapshot, which omits it), everyone else is told as above, one
    group each. `occupant`: who plays the liquid's seat now, when the caller read it
    (else as `seats` say).
    """
    from .selectors import liquid_body, others_reading, previous_players

    whole = liquid_body(liquid)
    others = liquid_body(liquid, others_reading(frame, liquid))
    if occupant is _FROM_SEATS:
        occupant = next((s.user_id for s in seats if s.pk == liquid.seat_id), None)
    stale = occupant is not None and previous_players(liquid, occupant)
    if others == whole and not stale:
        return {frame_group(frame.pk): {"type": event_type, "liquid": whole}}
    audiences: Audiences = {gm_group(frame.pk): {"type": event_type, "liquid": whole}}
    for seat in seats:
        if seat.user_id is None:  # nobody's sockets listen there
            continue
        mine = seat.pk == liquid.seat_id
        if mine and stale:
            continue
        audiences[seat_group(frame.pk, seat.pk)] = {
            "type": event_type,
            "liquid": whole if mine else others,
        }
    return audiences


def notify_liquid(
    event_type: str, liquid: Liquid, *, frame: Frame, seats: list[Seat] | None = None
) -> None:
    """`liquid.created|updated|withdrawn|analyzed|committed|consumed`, each reader getting
    the body they may read (see `liquid_audiences`). Without `seats`, the seats' players
    are read (one light query) unless everyone reads the same body. Who plays a person's
    liquid's seat now is read afresh (one more), not from `seats`: a pass's seats were read
    before it ran, and the seat may have changed hands since; under the frame's lock, which
    seat changes take too, it cannot change before this commits."""
    occupant = _FROM_SEATS
    if liquid.author_id is not None:
        players = Seat.objects.filter(pk=liquid.seat_id).values_list("user_id", flat=True)
        occupant = next(iter(players), None)
    changed_hands = occupant not in (_FROM_SEATS, None, liquid.author_id)
    if seats is None and (not _one_body(frame, liquid) or changed_hands):
        seats = list(Seat.objects.filter(frame_id=frame.pk).only("id", "frame_id", "user_id"))
    audiences = liquid_audiences(
        event_type, liquid, frame=frame, seats=seats or [], occupant=occupant
    )
    notify_audiences(frame.pk, LiquidEvent, audiences)


def _one_body(frame: Frame, liquid: Liquid) -> bool:
    """Whether every reader reads all of the liquid (so no seat need be read)."""
    from .selectors import liquid_body, others_reading

    return liquid_body(liquid, others_reading(frame, liquid)) == liquid_body(liquid)


def notify_window(event_type: str, window: Window, *, cause: dict | None = None) -> None:
    """`window.opened|cancelled|fired|done|failed`: timers are public to the frame. A
    cancellation says why: `cause` {kind: "interrupt", outcome, reason} or {kind: "gm"}."""
    from .selectors import window_body

    fields: dict[str, Any] = {"type": event_type, "window": window_body(window)}
    if cause is not None:
        fields["cause"] = cause
    model = WindowCancelled if event_type == "window.cancelled" else WindowEvent
    notify_frame(window.frame_id, model, **fields)


def notify_liquid_flagged(liquid: Liquid) -> None:
    """`liquid.flagged` to the GM alone: the secret guard's flags on an intention an AI seat
    wrote, outside the frame's sequence (as `outcome.flagged`; the GM's snapshot holds
    them too). Call after the liquid's own events, in the same transaction."""
    event = LiquidFlagged(type="liquid.flagged", liquid=str(liquid.pk), flags=liquid.flags)
    group_send_on_commit(gm_group(liquid.frame_id), event.wire())


def held_outcome_audiences(outcome: Outcome, *, seats: list[Seat], gm_id: object) -> Audiences:
    """Who reads a held outcome, before the GM releases it: the GM whole (and a seat the GM
    plays); every other seat's player the empty placeholder (`held_outcome_body`); the
    spectators nothing (their sequence skips it)."""
    from .selectors import held_outcome_body, outcome_body

    whole = {"type": "outcome.created", "outcome": outcome_body(outcome)}
    empty = {"type": "outcome.created", "outcome": held_outcome_body(outcome)}
    audiences: Audiences = {gm_group(outcome.frame_id): whole}
    for seat in seats:
        if seat.user_id is not None:
            audiences[seat_group(outcome.frame_id, seat.pk)] = (
                whole if seat.user_id == gm_id else empty
            )
    return audiences


def notify_outcome(
    outcome: Outcome, *, seats: list[Seat] | None = None, gm_id: object = None
) -> None:
    """`outcome.created`: the bones are shared with everyone in the frame (a held outcome:
    see `held_outcome_audiences`; `seats` and the GM's user id, read here if not given);
    then, if the secret guard flagged it, `outcome.flagged` to the GM. Call in the
    transaction that takes `outcome.seq` with `next_seq`."""
    from .selectors import outcome_body

    if outcome.held:
        if seats is None or gm_id is None:
            seats = list(Seat.objects.filter(frame_id=outcome.frame_id).only("id", "user_id"))
            gm_id = Frame.objects.values_list("owner_id", flat=True).get(pk=outcome.frame_id)
        audiences = held_outcome_audiences(outcome, seats=seats, gm_id=gm_id)
        for group, fields in audiences.items():
            group_send_on_commit(group, OutcomeCreated(**fields, seq=outcome.seq).wire())
    else:
        event = OutcomeCreated(
            type="outcome.created", seq=outcome.seq, outcome=outcome_body(outcome)
        ).wire()
        for group in (frame_group(outcome.frame_id), spectator_group(outcome.frame_id)):
            group_send_on_commit(group, event)
    notify_outcome_flags(outcome)


def notify_outcome_flags(outcome: Outcome) -> None:
    """`outcome.flagged` to the GM, if the guard flagged it: the GM's alone, so outside the
    frame's sequence, sent right after the outcome it annotates (the GM's snapshot holds
    it too)."""
    if outcome.flags:
        flagged = OutcomeFlagged(
            type="outcome.flagged", outcome=str(outcome.pk), flags=outcome.flags
        )
        group_send_on_commit(gm_group(outcome.frame_id), flagged.wire())


def notify_outcome_released(outcome: Outcome) -> None:
    """`outcome.released`, numbered: the held outcome, whole, to everyone in the frame and
    the spectators (their first sight of it). Under the frame's lock."""
    from .selectors import outcome_body

    notify_frame(
        outcome.frame_id, OutcomeReleased, type="outcome.released", outcome=outcome_body(outcome)
    )


def notify_outcome_edited(outcome: Outcome) -> None:
    """The GM edited an outcome's text. Released: `outcome.edited`, numbered, to everyone
    (spectators too), then its flags, recomputed, to the GM. Held: to the GM alone,
    unnumbered, with the flags. Under the frame's lock."""
    from .selectors import outcome_body

    if outcome.held:
        event = OutcomeEdited(type="outcome.edited", outcome=outcome_body(outcome, gm=True))
        group_send_on_commit(gm_group(outcome.frame_id), event.wire())
        return
    notify_frame(
        outcome.frame_id, OutcomeEdited, type="outcome.edited", outcome=outcome_body(outcome)
    )
    flagged = OutcomeFlagged(type="outcome.flagged", outcome=str(outcome.pk), flags=outcome.flags)
    group_send_on_commit(gm_group(outcome.frame_id), flagged.wire())


def notify_outcome_discarded(*, frame_id: object, outcome_id: object) -> None:
    """`outcome.discarded`, numbered, to the frame group: the held outcome is gone (the GM
    runs its pass again); players drop its placeholder. Spectators never saw it."""
    notify_frame(frame_id, OutcomeDiscarded, type="outcome.discarded", outcome=str(outcome_id))


def narrative_groups(narrative: Narrative) -> list[str]:
    """Who reads a narrative: its seat's player and the GM; everyone when it is shared."""
    if narrative.shared:
        return [frame_group(narrative.frame_id)]
    return [seat_group(narrative.frame_id, narrative.seat_id), gm_group(narrative.frame_id)]


def notify_narrative_token(narrative: Narrative, *, index: int, delta: str) -> None:
    """A delta of a narrative: to its readers only, at once, unnumbered (unvalidated: one
    per token; tests check it against the model)."""
    event = fast_wire(
        NarrativeToken,
        type="narrative.token",
        solid=str(narrative.pk),
        seat=str(narrative.seat_id),
        shared=narrative.shared,
        index=index,
        delta=delta,
    )
    for group in narrative_groups(narrative):
        group_send(group, event)


def notify_narrative_restarted(narrative: Narrative) -> None:
    """A pass's narrative is written again from the start under a new id (its worker died,
    or the GM retried it), and this one is deleted: to its readers only, after commit, so
    before the new run's first delta; they drop its text."""
    event = NarrativeRestarted(
        type="narrative.restarted",
        solid=str(narrative.pk),
        seat=str(narrative.seat_id),
        shared=narrative.shared,
    ).wire()
    for group in narrative_groups(narrative):
        group_send_on_commit(group, event)


def notify_narrative_done(narrative: Narrative) -> None:
    """The whole narrative, once stored: to its readers only, after commit."""
    from .selectors import narrative_body

    event = NarrativeDone(
        type="narrative.done",
        solid=str(narrative.pk),
        seat=str(narrative.seat_id),
        narrative=narrative_body(narrative),  # the whole stored text: no read after it
    ).wire()
    for group in narrative_groups(narrative):
        group_send_on_commit(group, event)


# What a player reads of their own failed pass: the real reason may name the model's
# endpoint or quote its answer, which are the GM's (the passes list shows them).
PLAYER_PASS_ERROR = "The narrator could not resolve this moment; the GM can retry it."


def pass_failed_audiences(pass_: Pass, *, seats: list[Seat]) -> Audiences:
    """Everyone sees that a character's pass failed (its liquid waits for a retry); the
    GM reads the reason, that seat's player a generic one, the others none."""
    public = {"type": "pass.failed", "pass": _pass_summary(pass_)}

    def saying(error: str) -> dict[str, Any]:
        return {**public, "pass": {**public["pass"], "error": error}}

    audiences: Audiences = {gm_group(pass_.frame_id): saying(pass_.error)}
    for seat in seats:
        if seat.user_id is not None:
            mine = seat.pk == pass_.seat_id
            audiences[seat_group(pass_.frame_id, seat.pk)] = (
                saying(PLAYER_PASS_ERROR) if mine else public
            )
    return audiences


def notify_pass_failed(pass_: Pass, *, seats: list[Seat]) -> None:
    notify_audiences(pass_.frame_id, PassFailed, pass_failed_audiences(pass_, seats=seats))


def _pass_summary(pass_: Pass) -> dict[str, Any]:
    return {
        "id": str(pass_.pk),
        "seat": str(pass_.seat_id) if pass_.seat_id else None,
        "kind": pass_.kind,
        "trigger": pass_.trigger,
        "status": pass_.status,
    }


def notify_state_changed(frame_id: object, seat_ids: list) -> None:
    """`state.changed` for each seat, to its player and the GM, after commit, unnumbered:
    their state drawers re-read it (synthesis/state/selectors.py::seat_state)."""
    for seat in seat_ids:
        event = StateChanged(type="state.changed", seat=str(seat)).wire()
        for group in (seat_group(frame_id, seat), gm_group(frame_id)):
            group_send_on_commit(group, event)

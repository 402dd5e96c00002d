"""Reads of a frame as one user may see it: the GM everything, a player the liquid the
frame's visibility allows, every outcome, and only their own seats' narratives (and a
shared frame's narratives, which are everyone's)."""

from enum import IntEnum
from typing import Any

from django.db.models import Q, QuerySet

from lmix.models import LLMCall
from productions.knowledge import public_name

from .budget import budget_view
from .content import content_recent
from .frame_events import seat_body, spectator_seat_body
from .frame_llm import FrameModels
from .frame_selectors import FrameAccess, seats_load
from .models import (
    Frame,
    Liquid,
    LiquidStatus,
    LiquidVisibility,
    Narrative,
    Outcome,
    Pass,
    TableTalk,
    Window,
    WindowStatus,
)

TALK_KEPT = 200  # the newest table talk a snapshot holds


class Reading(IntEnum):
    """How much of a liquid row a reader may read."""

    NONE = 0  # that it exists and when, not a word of it
    # The intention as written, not the soft pass's words about it (`SOFT_WORDS`): that
    # model read the acting character's own knowledge, secrets too.
    WORDS = 1
    WHOLE = 2  # its own seat's player and the GM


# What the soft pass's model wrote about an intention (and our note on its answer, which
# may quote it): its own seat's player's and the GM's only.
SOFT_WORDS = ("refined", "capable_reason", "analysis_note")


def liquid_reading(access: FrameAccess, liquid: Liquid) -> Reading:
    """How much of the liquid this reader may read: the GM all of it; its seat's player
    all of it (not a previous player's); anyone else its words only where the frame shows
    liquid to all, and never while it is held (an AI's words the guard flagged)."""
    if access.is_gm:
        return Reading.WHOLE
    if liquid.seat_id in access.seat_ids:
        return Reading.NONE if previous_players(liquid, access.user_id) else Reading.WHOLE
    return others_reading(access.frame, liquid)


def others_reading(frame: Frame, liquid: Liquid) -> Reading:
    """What a reader other than the GM and the liquid's own seat may read of it."""
    if frame.liquid_visibility == LiquidVisibility.ALL and not liquid.held:
        return Reading.WORDS
    return Reading.NONE


def previous_players(liquid: Liquid, player_id: object) -> bool:
    """Whether the liquid was written by someone other than `player_id`, the player of its
    seat now: a previous player's intentions (or the GM's for it while an assistant played
    it), which that player never reads, whatever the frame's visibility (docs/security.md,
    "Kicks and new players"). Liquid an assistant wrote has no author and stays the seat's."""
    return liquid.author_id is not None and liquid.author_id != player_id


def liquid_body(liquid: Liquid, reading: Reading = Reading.WHOLE) -> dict[str, Any]:
    """A liquid row as JSON types, as much of it as the reader may read (`Reading`)."""
    body: dict[str, Any] = {
        "id": str(liquid.pk),
        "seat": str(liquid.seat_id) if liquid.seat_id else None,
        "author": liquid.author_id,
        "face": liquid.face,
        "result": liquid.result or None,
        "status": liquid.status,
        "revision": liquid.revision,
        "submitted_at": liquid.submitted_at.isoformat(),
        "committed_at": liquid.committed_at.isoformat() if liquid.committed_at else None,
        "pscale": liquid.pscale,
        "window_seconds": liquid.window_seconds,
        "interruptive": liquid.interruptive,
        "targets": liquid.targets,
        "capable": liquid.capable,
        "analysis_source": liquid.analysis_source,
        "held": liquid.held,
    }
    return read_as(body, liquid, reading)


def read_as(body: dict[str, Any], liquid: Liquid, reading: Reading) -> dict[str, Any]:
    """`body` (a liquid's, without its words) with the words `reading` allows."""
    if reading >= Reading.WORDS:
        body["content"] = liquid.content
    if reading == Reading.WHOLE:  # none of them empty: an empty one says nothing
        body.update((f, getattr(liquid, f)) for f in SOFT_WORDS if getattr(liquid, f))
    elif reading == Reading.NONE and body["result"] and "error" in body["result"]:
        # A face's failure may quote its writing.
        body["result"] = {k: v for k, v in body["result"].items() if k != "error"}
    return body


def outcome_body(outcome: Outcome, *, gm: bool = False) -> dict[str, Any]:
    """An outcome as everyone reads it once released; the GM also reads the secret guard's
    flags. A held one reaches a player only as `held_outcome_body`: see `outcome_for`."""
    body = {
        "id": str(outcome.pk),
        "seq": outcome.seq,
        "seat": str(outcome.seat_id) if outcome.seat_id else None,
        "actions_resolved": outcome.actions_resolved,
        "world_facts": outcome.world_facts,
        "interrupts": outcome.interrupts,
        "witnesses": outcome.witnesses,
        "held": outcome.held,
        "released_at": _stamp(outcome.released_at),
        "edited_at": _stamp(outcome.edited_at),
        "created_at": outcome.created_at.isoformat(),
    }
    if gm:
        body["flags"] = outcome.flags
    return body


def held_outcome_body(outcome: Outcome) -> dict[str, Any]:
    """A held outcome as a player reads it: that a moment is under the GM's review, and
    nothing of it (no action, fact, interrupt, witness, nor whose pass it was). The shape
    of `outcome_body`, empty, so every reader of outcomes reads it safely."""
    return {
        "id": str(outcome.pk),
        "seq": outcome.seq,
        "seat": None,
        "actions_resolved": [],
        "world_facts": [],
        "interrupts": [],
        "witnesses": [],
        "held": True,
        "released_at": None,
        "edited_at": None,
        "created_at": outcome.created_at.isoformat(),
    }


def outcome_for(outcome: Outcome, *, gm: bool) -> dict[str, Any]:
    """An outcome as this reader may read it: a held one is the GM's alone."""
    if outcome.held and not gm:
        return held_outcome_body(outcome)
    return outcome_body(outcome, gm=gm)


def _stamp(at: Any) -> str | None:
    return at.isoformat() if at else None


def narrative_body(narrative: Narrative) -> dict[str, Any]:
    return {
        "id": str(narrative.pk),
        "seat": str(narrative.seat_id),
        "user": narrative.user_id,  # who played the seat when it was written
        "text": narrative.text,
        "token_count": narrative.token_count,
        "outcome_ids": narrative.outcome_ids,
        "liquid_ids": narrative.liquid_ids,
        "trigger": narrative.trigger,
        "pscale": narrative.pscale,
        "shared": narrative.shared,
        "status": narrative.status,
        "created_at": narrative.created_at.isoformat(),
    }


def narrators(narratives: list[Narrative]) -> dict[str, str]:
    """Who played each narrative's seat when it was written, by user id: a seat's new
    player reads its story so far as someone else's (a narrative whose `user` is not the
    seat's player now), by name."""
    return {str(n.user_id): n.user.username for n in narratives if n.user_id is not None}


def window_body(window: Window) -> dict[str, Any]:
    return {
        "id": str(window.pk),
        "seat": str(window.seat_id),
        "status": window.status,
        "pscale": window.pscale,
        "opened_at": window.opened_at.isoformat(),
        "expires_at": window.expires_at.isoformat() if window.expires_at else None,
        "remaining_seconds": window.remaining_seconds,
    }


def talk_body(talk: TableTalk) -> dict[str, Any]:
    return {
        "id": str(talk.pk),
        "kind": talk.kind,
        "seat": str(talk.seat_id) if talk.seat_id else None,
        "author": talk.author.username if talk.author_id else None,
        "gm": talk.by_gm,
        "text": talk.text,
        "created_at": talk.created_at.isoformat(),
    }


def talk_recent(*, frame_id: object) -> list[dict[str, Any]]:
    """The newest TALK_KEPT table-talk messages, oldest first."""
    newest = TableTalk.objects.filter(frame_id=frame_id).select_related("author")
    return [talk_body(t) for t in list(newest.order_by("-created_at", "-id")[:TALK_KEPT])[::-1]]


def liquid_seen(access: FrameAccess) -> QuerySet[Liquid]:
    """The frame's live liquid rows this reader may know of (their text only where
    `liquid_reading`): the GM's every one. A seat's previous players' intentions are not
    its new player's (`previous_players`): not even their rows."""
    live_liquid = Liquid.objects.filter(frame=access.frame).exclude(status=LiquidStatus.WITHDRAWN)
    if access.is_gm:
        return live_liquid
    return live_liquid.exclude(
        Q(seat_id__in=access.seat_ids) & Q(author__isnull=False) & ~Q(author_id=access.user_id)
    )


def narratives_readable(access: FrameAccess) -> QuerySet[Narrative]:
    """The narratives this reader may read, oldest first, with who wrote them: the GM's
    every one; a player's their seats' (a seat's narratives are its character's story, its
    new player's too) and a shared frame's, which are everyone's."""
    narratives = Narrative.objects.filter(frame=access.frame).select_related("user")
    if access.is_gm:
        return narratives
    return narratives.filter(Q(seat_id__in=access.seat_ids) | Q(shared=True))


def frame_view(access: FrameAccess) -> dict[str, Any]:
    """GET /api/frames/{id}: this reader's snapshot. `seq` is read first, so an event after
    it may also be in the snapshot (the client drops it as stale), but none before it can
    be missing."""
    frame = access.frame
    seq = Frame.objects.values_list("seq", flat=True).get(pk=frame.pk)
    frame.refresh_from_db()
    seats = seats_load(frame=frame)
    live_liquid = liquid_seen(access)
    narratives = list(narratives_readable(access))
    windows = Window.objects.filter(
        Q(status__in=[WindowStatus.OPEN, WindowStatus.FIRING, WindowStatus.FAILED]), frame=frame
    )
    view = {
        "id": str(frame.pk),
        "production": str(frame.production_id),
        "name": frame.name,
        "status": frame.status,
        "mode": frame.mode,
        "tempo": frame.tempo,
        "liquid_visibility": frame.liquid_visibility,
        "player_faces": frame.player_faces,
        "leak_guard": frame.leak_guard,
        "second_opinion": frame.second_opinion,
        "seq": seq,
        "is_gm": access.is_gm,
        "my_seats": sorted(str(seat_id) for seat_id in access.seat_ids),
        "invite_code": frame.invite_code if access.is_gm else None,
        "spectator_code": frame.spectator_code if access.is_gm else None,
        # The secret guard's flags on what AI seats wrote, by liquid id (GM only; then
        # `liquid.flagged` events).
        "liquid_flags": {str(x.pk): x.flags for x in live_liquid if x.flags}
        if access.is_gm
        else None,
        "seats": [seat_body(seat) for seat in seats],
        "liquid": [liquid_body(x, liquid_reading(access, x)) for x in live_liquid],
        # A held outcome: the GM's whole, a placeholder for the players (`outcome_for`).
        "outcomes": [outcome_for(o, gm=access.is_gm) for o in Outcome.objects.filter(frame=frame)],
        "narratives": [narrative_body(n) for n in narratives],
        "narrators": narrators(narratives),
        "windows": [window_body(w) for w in windows],
        "talk": talk_recent(frame_id=frame.pk),
        "content": content_recent(frame_id=frame.pk),
    }
    if access.is_gm:  # which model plays each pass: the GM's business only
        view["models"] = FrameModels(frame).view(seats)
        # This minute's model use against the frame's budget (GET .../budget refreshes it).
        view["budget"] = budget_view(frame_id=frame.pk)
        # Who a covert character really is: the GM's to know, never a player's.
        view["gm_names"] = {
            str(seat.pk): seat.persona.name
            for seat in seats
            if public_name(seat.persona) != seat.persona.name
        }
    return view


def spectator_view(frame: Frame) -> dict[str, Any]:
    """GET /api/spectate/{code}: what a spectator sees — the seats, every outcome and the
    live windows; never liquid, a narrative or table talk. `seq` is read first, as in
    `frame_view`; a spectator's events skip the numbers of what it may not see."""
    seq = Frame.objects.values_list("seq", flat=True).get(pk=frame.pk)
    windows = Window.objects.filter(
        frame=frame, status__in=[WindowStatus.OPEN, WindowStatus.FIRING, WindowStatus.FAILED]
    )
    return {
        "id": str(frame.pk),
        "name": frame.name,
        "production_name": frame.production.name,
        "status": frame.status,
        "mode": frame.mode,
        "tempo": frame.tempo,
        "seq": seq,
        "seats": [spectator_seat_body(seat) for seat in seats_load(frame=frame)],
        # Not a held one: a spectator learns of it once released (its number is a hole).
        "outcomes": [outcome_body(o) for o in Outcome.objects.filter(frame=frame, held=False)],
        "windows": [window_body(w) for w in windows],
    }


def pass_list(*, frame: Frame) -> list[dict[str, Any]]:
    """Every pass of the frame for its GM: what woke it, the exact messages sent, each
    structured call's tries (what the provider was sent, the raw answer, why it was
    refused), how it ended, and the LLM calls it made (two queries). Never a player's:
    tries and errors may quote the model's answers and name its endpoint."""
    passes = list(Pass.objects.filter(frame=frame).order_by("created_at"))
    calls: dict[str, list[dict[str, Any]]] = {}
    for call in LLMCall.objects.filter(subject__in=[f"pass:{p.pk}" for p in passes]).order_by(
        "created_at"
    ):
        calls.setdefault(call.subject, []).append(
            {
                "purpose": call.purpose,
                "kind": call.kind,
                "model_id": call.model_id,
                "prompt_tokens": call.prompt_tokens,
                "completion_tokens": call.completion_tokens,
                "latency_ms": call.latency_ms,
                "error": call.error,
                "finished_at": call.finished_at.isoformat() if call.finished_at else None,
            }
        )
    return [
        {
            "id": str(p.pk),
            "seat": str(p.seat_id) if p.seat_id else None,
            "kind": p.kind,
            "trigger": p.trigger,
            "status": p.status,
            "liquid": str(p.liquid_id) if p.liquid_id else None,
            "window": str(p.window_id) if p.window_id else None,
            "interrupt": p.interrupt or None,  # what interrupted it, if anything
            "messages": p.messages,
            "tries": p.tries,
            "error": p.error,
            "attempts": p.attempts,
            "created_at": p.created_at.isoformat(),
            "calls": calls.get(f"pass:{p.pk}", []),
        }
        for p in passes
    ]

"""Writes to frames and seats: create a frame from a production's cast, join with an invite
code, the GM's seat changes (a kick bans its player from the frame until the GM lifts it)
and invite rotation. Liquid, windows and passes are in synthesis/."""

from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from authoring.models import Assistant
from lmix.errors import ApplicationError
from lmix.models import LLMModel
from lmix.realtime.publish import revoke_on_commit
from productions.models import Production
from productions.selectors import cast_load

from .event_types import FrameSettings, FrameUpdated, SeatChanged
from .events import notify_liquid
from .frame_events import (
    frame_group,
    lock_frame,
    notify_audiences,
    notify_frame,
    seat_body,
    spectator_group,
    spectator_seat_body,
)
from .frame_selectors import is_uuid
from .models import (
    EXTRA_FACES,
    AiReacts,
    Frame,
    FrameBan,
    FrameMode,
    FrameStatus,
    LeakGuard,
    Liquid,
    LiquidStatus,
    LiquidVisibility,
    Scene,
    Seat,
    SeatController,
    TalkKind,
    new_invite_code,
)
from .talk import talk_notice

MAX_TEMPO = 100.0
BANNED = (
    "The GM removed you from this frame: you cannot take a seat in it again until they "
    "allow you back."
)


@transaction.atomic
def frame_create(
    *,
    production: Production,
    name: str,
    mode: str = FrameMode.PER_CHARACTER,
    tempo: float = 1.0,
    liquid_visibility: str = LiquidVisibility.ALL,
    leak_guard: str = LeakGuard.HOLD,
    second_opinion: bool = False,
    open_seats: Iterable[object] = (),
    soft_model: LLMModel | None = None,
    medium_model: LLMModel | None = None,
) -> Frame:
    """A frame of `production`, owned by its owner (the GM). Each cast member's persona
    becomes a seat played by its assistant, except the personas in `open_seats`, which wait
    for players.

    Raises:
        ApplicationError: a persona in `open_seats` is not in the cast, or the tempo is out
            of range.
    """
    if not 0 <= tempo <= MAX_TEMPO:
        raise ApplicationError(f"Tempo must be between 0 and {MAX_TEMPO:g}.")
    cast = cast_load(production=production)
    open_ids = {str(persona_id) for persona_id in open_seats}
    in_cast = {str(member.persona_id) for member in cast}
    if open_ids - in_cast:
        raise ApplicationError(
            "Open seats must be personas of the production's cast.",
            details={"open_seats": ["Not in the cast."]},
        )
    frame = Frame.objects.create(
        production=production,
        owner=production.owner,
        name=name,
        mode=mode,
        tempo=tempo,
        liquid_visibility=liquid_visibility,
        leak_guard=leak_guard,
        second_opinion=second_opinion,
        # None until the GM chooses: the passes then follow the cast (frame_llm.py).
        soft_model=soft_model,
        medium_model=medium_model,
    )
    Scene.objects.create(frame=frame, number=1)  # its first scene opens with it (scenes/)
    Seat.objects.bulk_create(
        [
            Seat(frame=frame, persona_id=member.persona_id, position=position)
            if str(member.persona_id) in open_ids
            else Seat(
                frame=frame,
                persona_id=member.persona_id,
                position=position,
                controller=SeatController.AI,
                assistant=member,
            )
            for position, member in enumerate(cast)
        ]
    )
    return frame


# What the GM may change on a running frame (PATCH /api/frames/{id}).
FRAME_SETTINGS = (
    "name",
    "tempo",
    "liquid_visibility",
    "player_faces",
    "leak_guard",
    "second_opinion",
    "soft_model",
    "medium_model",
)


@transaction.atomic
def frame_update(*, frame: Frame, **settings: object) -> Frame:
    """The GM changes a frame's settings: any of `FRAME_SETTINGS` given is stored (a model
    None goes back to the default rule of frame_llm.py). Everyone in the frame is told
    (`frame.updated`). Running passes keep the model they started with; the next one reads
    the new one; open windows keep their time, the next ones take the new tempo.

    Raises:
        ApplicationError: an unknown setting, a tempo out of range, an empty name, or a
            model that is not the GM's own (400 naming the field).
    """
    unknown = set(settings) - set(FRAME_SETTINGS)
    if unknown:
        raise ApplicationError(
            "These cannot be changed on a frame.", details={k: ["Unknown."] for k in unknown}
        )
    if "tempo" in settings and not 0 <= float(settings["tempo"]) <= MAX_TEMPO:
        raise ApplicationError(
            f"Tempo must be between 0 and {MAX_TEMPO:g}.",
            details={"tempo": [f"Between 0 and {MAX_TEMPO:g}."]},
        )
    if "player_faces" in settings:
        faces = list(settings["player_faces"])  # type: ignore[call-overload]
        if any(face not in EXTRA_FACES for face in faces):
            raise ApplicationError(
                "Players may be opened the author and designer faces only.",
                details={"player_faces": ["Use author, designer or both."]},
            )
        # One order whatever the request's: a repeat changes nothing.
        settings["player_faces"] = [face for face in EXTRA_FACES if face in faces]
    if "name" in settings and not str(settings["name"]).strip():
        raise ApplicationError("Give the frame a name.", details={"name": ["Required."]})
    for field in ("soft_model", "medium_model"):
        model = settings.get(field)
        if model is not None and getattr(model, "owner_id", None) != frame.owner_id:
            raise ApplicationError(
                "Choose one of your own models.", details={field: ["Not one of your models."]}
            )
    frame = Frame.objects.select_for_update().get(pk=frame.pk)
    changed = [k for k, v in settings.items() if _stored(frame, k) != _stored_value(v)]
    if not changed:
        return frame
    for field in changed:
        setattr(frame, field, settings[field])
    frame.save(update_fields=[*changed, "updated_at"])
    _frame_changed(frame)
    return frame


@transaction.atomic
def frame_join(*, user: AbstractBaseUser, invite_code: str, seat_id: object) -> Seat:
    """Take an open seat of the frame the invite code belongs to.

    Raises:
        ApplicationError: no frame has that code or no such seat in it (404), the GM
            removed the user from this frame and has not let them back (403), the frame is
            closed, the seat is taken, or the user already plays a seat of this frame (409).
    """
    frame = Frame.objects.select_for_update().filter(invite_code=invite_code).first()
    seat = (
        Seat.objects.select_for_update().filter(frame=frame, pk=seat_id).first()
        if frame is not None and is_uuid(seat_id)
        else None
    )
    if frame is None or seat is None:
        raise ApplicationError("No open seat matches that invite.", status_code=404)
    if FrameBan.objects.filter(frame=frame, user=user).exists():
        raise ApplicationError(BANNED, status_code=403)
    if frame.status == FrameStatus.CLOSED:
        raise ApplicationError("This frame is closed.", status_code=409)
    if Seat.objects.filter(frame=frame, user=user).exists():
        raise ApplicationError("You already play a character in this frame.", status_code=409)
    if seat.controller != SeatController.OPEN:
        raise ApplicationError("That seat has been taken.", status_code=409)
    seat.controller, seat.user = SeatController.HUMAN, user
    seat.save(update_fields=["controller", "user"])
    _seat_changed(seat)
    talk_notice(seat=seat, user_id=user.pk, kind=TalkKind.JOIN)
    return seat


@transaction.atomic
def seat_update(
    *,
    frame: Frame,
    seat: Seat,
    controller: str | None = None,
    assistant: Assistant | None = None,
    ai_reacts: str | None = None,
) -> Seat:
    """The GM opens a seat or gives it to an assistant that plays the seat's persona, and
    says when an AI seat acts on its own (`ai_reacts`; either or both). A player it had
    is kicked: their sockets close at once, the intentions still pending on the seat
    (submitted, not committed) are withdrawn, and they may take no seat of the frame again
    until the GM lifts their ban (`frame_ban_lift`).

    Raises:
        ApplicationError: nothing to change; an assistant missing, not the GM's, or for
            another persona; a request to make the seat human (players join with the
            invite code); an unknown `ai_reacts`.
    """
    if controller is None and ai_reacts is None:
        raise ApplicationError(
            "Nothing to change: send controller or ai_reacts.",
            details={"controller": ["Send controller, ai_reacts or both."]},
        )
    if ai_reacts is not None and ai_reacts not in AiReacts.values:
        raise ApplicationError(
            "Unknown ai_reacts.", details={"ai_reacts": [f"Use one of {', '.join(AiReacts)}."]}
        )
    lock_frame(frame.pk)  # the frame, then its rows: the order liquid writes take them in
    seat = Seat.objects.select_for_update().get(pk=seat.pk, frame=frame)
    previous_user_id = seat.user_id if controller is not None else None
    fields = []
    if controller is not None:
        _seat_control(frame=frame, seat=seat, controller=controller, assistant=assistant)
        fields += ["controller", "user", "assistant"]
    if ai_reacts is not None:
        seat.ai_reacts = ai_reacts
        fields.append("ai_reacts")
    seat.save(update_fields=fields)
    if previous_user_id is not None:
        if previous_user_id != frame.owner_id:  # a GM playing a seat is never banned
            FrameBan.objects.get_or_create(frame=frame, user_id=previous_user_id)
        _withdraw_pending(frame, seat)
        _revoke_player(frame, previous_user_id)
    _seat_changed(seat)
    if previous_user_id is not None:
        # The GM giving up a seat they played leaves it; anyone else is removed.
        gm_left = previous_user_id == frame.owner_id
        kind = TalkKind.LEAVE if gm_left else TalkKind.KICK
        talk_notice(seat=seat, user_id=previous_user_id, kind=kind)
    return seat


def _seat_control(
    *, frame: Frame, seat: Seat, controller: str, assistant: Assistant | None
) -> None:
    """`seat_update`'s new controller on `seat` (not saved)."""
    if controller == SeatController.HUMAN:
        raise ApplicationError(
            "A player takes a seat by joining with the invite code.",
            details={"controller": ["Use open or ai."]},
        )
    if controller == SeatController.AI:
        if assistant is None or assistant.owner_id != frame.owner_id:
            raise ApplicationError(
                "Choose one of your assistants.", details={"assistant": ["Required."]}
            )
        if assistant.persona_id != seat.persona_id:
            raise ApplicationError(
                "That assistant plays another character.",
                details={"assistant": ["It must play this seat's persona."]},
            )
        seat.controller, seat.user, seat.assistant = SeatController.AI, None, assistant
    else:
        seat.controller, seat.user, seat.assistant = SeatController.OPEN, None, None


@transaction.atomic
def seat_leave(*, seat: Seat) -> Seat:
    """A player gives their seat up: it is open again, the intentions still pending on it
    are withdrawn (the next player does not inherit them) and their sockets close."""
    lock_frame(seat.frame_id)
    seat = Seat.objects.select_for_update().get(pk=seat.pk)
    user_id = seat.user_id
    seat.controller, seat.user = SeatController.OPEN, None
    seat.save(update_fields=["controller", "user"])
    if user_id is not None:
        _withdraw_pending(seat.frame, seat)
        _revoke_player(seat.frame, user_id)
    _seat_changed(seat)
    if user_id is not None:
        talk_notice(seat=seat, user_id=user_id, kind=TalkKind.LEAVE)
    return seat


@transaction.atomic
def invite_rotate(*, frame: Frame) -> Frame:
    """A new invite code; the old one joins nothing any more."""
    frame.invite_code = new_invite_code()
    frame.save(update_fields=["invite_code", "updated_at"])
    return frame


@transaction.atomic
def spectators_set(*, frame: Frame, enabled: bool) -> Frame:
    """The GM lets spectators watch (a new link each time) or stops them: every open
    spectator socket closes, and the old link shows nothing any more."""

    frame = Frame.objects.select_for_update().get(pk=frame.pk)
    if frame.spectator_code:
        revoke_on_commit(spectator_group(frame.pk))
    frame.spectator_code = new_invite_code() if enabled else None
    frame.save(update_fields=["spectator_code", "updated_at"])
    return frame


@transaction.atomic
def frame_ban_lift(*, frame: Frame, user_id: object) -> None:
    """The GM lets a removed player back: they may take an open seat again.

    Raises:
        ApplicationError: that user is not banned from this frame (404).
    """
    deleted, _ = FrameBan.objects.filter(frame=frame, user_id=user_id).delete()
    if not deleted:
        raise ApplicationError("That player is not banned from this frame.", status_code=404)


def _withdraw_pending(frame: Frame, seat: Seat) -> None:
    """Withdraw the seat's submitted intentions as their player would, events included: a
    new occupant must not commit (or read) them. Committed ones are already in a window
    and stay there: its medium pass narrates them for the seat."""
    for liquid in Liquid.objects.filter(seat=seat, status=LiquidStatus.SUBMITTED):
        if Liquid.move(liquid.pk, LiquidStatus.WITHDRAWN, only_from=(LiquidStatus.SUBMITTED,)):
            liquid.refresh_from_db()
            notify_liquid("liquid.withdrawn", liquid, frame=frame)


def _revoke_player(frame: Frame, user_id: object) -> None:
    """Once committed, that user's sockets on the frame close (the GM keeps theirs)."""
    if user_id == frame.owner_id:
        return

    revoke_on_commit(frame_group(frame.pk), user_id=user_id)


def _stored(frame: Frame, field: str) -> object:
    return getattr(frame, f"{field}_id" if field.endswith("_model") else field)


def _stored_value(value: object) -> object:
    return value.pk if isinstance(value, LLMModel) else value


def _frame_changed(frame: Frame) -> None:
    """Everyone, spectators too, reads the frame's new settings (its models are the GM's:
    the GM's page reads them again)."""

    settings = FrameSettings(
        name=frame.name,
        tempo=frame.tempo,
        liquid_visibility=frame.liquid_visibility,
        player_faces=frame.player_faces,
    )
    notify_frame(frame.pk, FrameUpdated, type="frame.updated", frame=settings)


def _seat_changed(seat: Seat) -> None:
    """Everyone at the table reads who plays the seat; spectators only that someone does."""
    notify_audiences(
        seat.frame_id,
        SeatChanged,
        {
            frame_group(seat.frame_id): {"type": "seat.changed", "seat": seat_body(seat)},
            spectator_group(seat.frame_id): {
                "type": "seat.changed",
                "seat": spectator_seat_body(seat),
            },
        },
    )

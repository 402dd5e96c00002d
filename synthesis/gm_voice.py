"""The GM's voice in the scene: a narration everyone sees, stored as an outcome no seat
acted (every character witnesses it, so the next passes read it as they read any world
fact), and a private note to one seat, stored as a narrative of that character's (only
its player and the GM read it; its next narratives follow on from it). Both are the GM's
own words: no model is called, but an AI character the narration names answers it, as it
answers any outcome that concerns it (synthesis/ai_seats.py)."""

from django.db import transaction

from lmix.errors import ApplicationError
from lmix.text import has_visible_text

from .ai_seats import ai_react
from .enqueue import scene_check_enqueue, state_pass_enqueue
from .events import notify_narrative_done, notify_outcome
from .frame_events import lock_frame, next_seq
from .frame_selectors import seats_load
from .models import Frame, FrameStatus, Narrative, NarrativeStatus, Outcome, Seat, Trigger


def _writable(frame: Frame, text: str) -> None:
    if frame.status == FrameStatus.CLOSED:
        raise ApplicationError("This frame is closed.", status_code=409)
    if not has_visible_text(text):
        raise ApplicationError(
            "Write something first: the text shows nothing (only spaces or invisible characters).",
            details={"text": ["Empty."]},
        )


@transaction.atomic
def gm_narrate(*, frame: Frame, text: str) -> Outcome:
    """Tell everyone what happens (a world event, a change of scene): an outcome in the
    frame's order that every seat witnesses.

    Raises:
        ApplicationError: the frame is closed (409), or the text shows nothing (400).
    """
    _writable(frame, text)
    lock_frame(frame.pk)
    seats = seats_load(frame=frame)
    outcome = Outcome.objects.create(
        frame=frame,
        seq=next_seq(frame.pk),
        seat=None,
        world_facts=[text],
        witnesses=[str(seat.pk) for seat in seats],
    )
    notify_outcome(outcome)
    ai_react(outcome=outcome, frame=frame, seats=seats)
    state_pass_enqueue(outcome)
    transaction.on_commit(lambda: scene_check_enqueue(outcome.pk))
    return outcome


@transaction.atomic
def gm_note(*, frame: Frame, seat: Seat, text: str) -> Narrative:
    """Tell one character something only it learns: a finished narrative of its own.

    Raises:
        ApplicationError: the frame is closed (409), or the text shows nothing (400).
    """
    _writable(frame, text)
    note = Narrative.objects.create(
        frame=frame,
        seat=seat,
        user_id=seat.user_id,
        text=text,
        trigger=Trigger.GM,
        status=NarrativeStatus.DONE,
    )
    notify_narrative_done(note)
    return note

"""A frame's lifecycle as a table (the GM pauses, resumes and closes it), moved with
`lifecycle_move` like every other status. Kept out of the Frame model's module, which
frames' move into synthesis/ reshapes."""

from lmix.lifecycle import lifecycle_move
from productions.models import Frame, FrameStatus

FRAME_TRANSITIONS: dict[str, set[str]] = {
    FrameStatus.OPEN: {FrameStatus.PAUSED, FrameStatus.CLOSED},
    FrameStatus.PAUSED: {FrameStatus.OPEN, FrameStatus.CLOSED},
    FrameStatus.CLOSED: set(),  # closed for good
}


def frame_move(pk: object, to: str, **kwargs) -> bool:
    """Move frame `pk` to status `to` (see `lifecycle_move`)."""
    return lifecycle_move(Frame, FRAME_TRANSITIONS, pk, to, **kwargs)

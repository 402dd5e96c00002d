"""Which LLM model plays each pass of a frame: the GM's choice for the frame, else the
characters' own models (the cast's), else the GM's default model.

A seat's medium pass: the frame's medium model if the GM chose one; else the model of the
seat's assistant, else of the production's cast member playing that persona (a human seat
narrates with its character's model too); else the cast's most common model; else the
GM's default. The soft pass: the frame's soft model if chosen; else the cast's most common
model; else the GM's default. Reads are fixed in number, whatever the cast's size.
"""

from collections import Counter
from dataclasses import dataclass
from functools import cached_property

from authoring.models import Assistant
from lmix.models import LLMModel
from productions.models import CastMember

from .models import Frame, Seat


class Source:
    """Why a pass plays on its model (shown to the GM)."""

    FRAME = "frame"  # the GM chose it for this frame
    ASSISTANT = "assistant"  # the character's assistant's model
    CAST = "cast"  # the cast's most common model
    DEFAULT = "default"  # the GM's default model


@dataclass(frozen=True)
class Played:
    model: LLMModel
    source: str

    def body(self) -> dict[str, str]:
        """As the GM's frame view shows it (never the endpoint or key)."""
        return {"id": str(self.model.pk), "name": self.model.name, "source": self.source}


class FrameModels:
    """The rule for one frame, reading the cast and the default only when it needs them
    (one query each)."""

    def __init__(self, frame: Frame) -> None:
        self.frame = frame

    @cached_property
    def cast(self) -> list[Assistant]:
        """The production's cast in play order, each with its model (one query)."""
        members = CastMember.objects.filter(production_id=self.frame.production_id).select_related(
            "assistant__model"
        )
        return [member.assistant for member in members]

    @cached_property
    def default(self) -> LLMModel | None:
        return LLMModel.objects.filter(owner_id=self.frame.owner_id, is_default=True).first()

    @cached_property
    def common(self) -> Played | None:
        """The cast's most common model (the first in play order on a tie), else the GM's
        default."""
        counts = Counter(assistant.model_id for assistant in self.cast)
        if counts:
            most = max(counts.values())
            model = next(a.model for a in self.cast if counts[a.model_id] == most)
            return Played(model, Source.CAST)
        return Played(self.default, Source.DEFAULT) if self.default is not None else None

    def soft(self) -> Played | None:
        if self.frame.soft_model_id:
            return Played(self.frame.soft_model, Source.FRAME)
        return self.common

    def medium(self, seat: Seat) -> Played | None:
        if self.frame.medium_model_id:
            return Played(self.frame.medium_model, Source.FRAME)
        own = self._assistant_model(seat)
        return Played(own, Source.ASSISTANT) if own is not None else self.common

    def medium_unseated(self) -> Played | None:
        """The model of a pass that writes for no character (an author's or designer's
        writing): the frame's medium model, else the cast's most common, else the default."""
        if self.frame.medium_model_id:
            return Played(self.frame.medium_model, Source.FRAME)
        return self.common

    def _assistant_model(self, seat: Seat) -> LLMModel | None:
        if seat.assistant_id:
            if Seat.assistant.is_cached(seat) and seat.assistant is not None:
                return seat.assistant.model  # seats_load read it along
            in_cast = next((a for a in self.cast if a.pk == seat.assistant_id), None)
            if in_cast is not None:
                return in_cast.model
            # An assistant the GM gave the seat from outside the cast: one more read.
            return LLMModel.objects.filter(assistants=seat.assistant_id).first()
        return next((a.model for a in self.cast if a.persona_id == seat.persona_id), None)

    def view(self, seats: list[Seat]) -> dict[str, object]:
        """What the GM's frame view says: the stored choices, and the model each pass uses."""
        soft = self.soft()
        medium = {str(seat.pk): self.medium(seat) for seat in seats}
        return {
            "soft_model": str(self.frame.soft_model_id) if self.frame.soft_model_id else None,
            "medium_model": (
                str(self.frame.medium_model_id) if self.frame.medium_model_id else None
            ),
            "soft": soft.body() if soft is not None else None,
            "medium": {seat: p.body() if p is not None else None for seat, p in medium.items()},
        }

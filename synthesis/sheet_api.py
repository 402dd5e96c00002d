"""REST endpoints of a seat's character sheet (synthesis/sheet.py) and character state
(synthesis/state/), and of a production's cast's state (synthesis/state/productions.py)."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lmix.answers import answer
from lmix.errors import ApplicationError
from productions.selectors import production_get

from .answers import CharacterSheet, ProductionStateAnswer, SeatStateAnswer
from .frame_selectors import FrameAccess, frame_access_or_404
from .models import Memory, Seat
from .serializers import MemoryEditSerializer, StateEditSerializer
from .sheet import seat_sheet
from .state.productions import production_state
from .state.selectors import seat_state
from .state.services import memory_edit, state_edit


def _gm_seat(request: Request, frame_id: str, seat_id: str) -> tuple[FrameAccess, Seat]:
    """The GM's access and the seat edited: a player gets 403, an outsider or a seat not in
    the frame 404."""
    access = frame_access_or_404(user=request.user, frame_id=frame_id)
    if not access.is_gm:
        raise ApplicationError("Only the frame's GM can edit a character's state.", status_code=403)
    seat = Seat.objects.filter(frame=access.frame, pk=seat_id).first()
    if seat is None:
        raise ApplicationError("No such seat in this frame.", status_code=404)
    return access, seat


class SeatSheetApi(APIView):
    @extend_schema(request=None, responses={200: CharacterSheet})
    def get(self, request: Request, frame_id: str, seat_id: str) -> Response:
        """The seat's character sheet and scene intro: exactly what its character's prompts
        may know. Its current player's and the GM's; anyone else gets 404."""
        access = frame_access_or_404(user=request.user, frame_id=frame_id)
        return answer(CharacterSheet, seat_sheet(access=access, seat_id=seat_id))


class SeatStateApi(APIView):
    @extend_schema(request=None, responses={200: SeatStateAnswer})
    def get(self, request: Request, frame_id: str, seat_id: str) -> Response:
        """The seat's character state: relationships, mood, learned facts, memories. Its
        current player's and the GM's; anyone else gets 404."""
        access = frame_access_or_404(user=request.user, frame_id=frame_id)
        return answer(SeatStateAnswer, seat_state(access=access, seat_id=seat_id))

    @extend_schema(request=StateEditSerializer, responses={200: SeatStateAnswer})
    def patch(self, request: Request, frame_id: str, seat_id: str) -> Response:
        """GM: set the seat's mood, its intensity, edges (affinity, trust, a fact about the
        other) or add a learned fact. Each change is a delta by you; the seat's player and
        you are told (`state.changed`)."""
        access, seat = _gm_seat(request, frame_id, seat_id)
        data = StateEditSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        state_edit(seat=seat, by=request.user, **data.validated_data)
        return answer(SeatStateAnswer, seat_state(access=access, seat_id=seat.pk))


class SeatMemoryApi(APIView):
    @extend_schema(request=MemoryEditSerializer, responses={200: SeatStateAnswer})
    def patch(self, request: Request, frame_id: str, seat_id: str, memory_id: str) -> Response:
        """GM: pin or unpin a memory, set its significance, rewrite it, or remove it (kept,
        hidden). Audited; the seat's player and you are told (`state.changed`)."""
        access, seat = _gm_seat(request, frame_id, seat_id)
        memory = Memory.objects.filter(seat=seat, pk=memory_id).first()
        if memory is None:
            raise ApplicationError("No such memory of this character.", status_code=404)
        data = MemoryEditSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        memory_edit(memory=memory, by=request.user, **data.validated_data)
        return answer(SeatStateAnswer, seat_state(access=access, seat_id=seat.pk))


class ProductionStateApi(APIView):
    @extend_schema(request=None, responses={200: ProductionStateAnswer})
    def get(self, request: Request, production_id: str) -> Response:
        """The cast's character state at the production's head (rewinding hides what the
        later turns changed). Its owner's; anyone else gets 404."""
        production = production_get(owner=request.user, production_id=production_id)
        return answer(ProductionStateAnswer, production_state(production=production))

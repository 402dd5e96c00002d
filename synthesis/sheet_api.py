"""REST endpoints of a seat's character sheet (synthesis/sheet.py) and character state
(synthesis/state/), and of a production's cast's state (synthesis/state/productions.py)."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lmix.answers import answer
from productions.selectors import production_get

from .answers import CharacterSheet, ProductionStateAnswer, SeatStateAnswer
from .frame_selectors import frame_access_or_404
from .sheet import seat_sheet
from .state.productions import production_state
from .state.selectors import seat_state


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


class ProductionStateApi(APIView):
    @extend_schema(request=None, responses={200: ProductionStateAnswer})
    def get(self, request: Request, production_id: str) -> Response:
        """The cast's character state at the production's head (rewinding hides what the
        later turns changed). Its owner's; anyone else gets 404."""
        production = production_get(owner=request.user, production_id=production_id)
        return answer(ProductionStateAnswer, production_state(production=production))

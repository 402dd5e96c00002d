"""REST endpoint of a frame's model budget, for its GM (synthesis/budget.py)."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lmix.answers import answer

from .answers import FrameBudget
from .budget import budget_view
from .frame_selectors import frame_gm_access_or_404


class FrameBudgetApi(APIView):
    @extend_schema(request=None, responses={200: FrameBudget})
    def get(self, request: Request, frame_id: str) -> Response:
        """GM: the frame's model calls and tokens this minute against its limits, whether
        AI seats are paused, and how many windows wait for the budget. A player gets 403,
        anyone else 404."""
        access = frame_gm_access_or_404(user=request.user, frame_id=frame_id)
        return answer(FrameBudget, budget_view(frame_id=access.frame.pk))

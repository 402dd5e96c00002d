"""REST endpoint of a frame's LLM calls, for its GM (synthesis/diagnostics.py)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lmix.answers import answer
from lmix.errors import ApplicationError

from .answers import FrameCalls
from .diagnostics import frame_calls
from .frame_selectors import frame_gm_access_or_404

BEFORE = OpenApiParameter(
    "before",
    OpenApiTypes.INT,
    description="The page after this one: the `next_before` of the page read last.",
)


def _before(request: Request) -> int | None:
    """`?before=<call id>`, or a 400 on it."""
    raw = request.query_params.get("before")
    if raw in (None, ""):
        return None
    if not raw.isdigit() or len(raw) > 18:
        raise ApplicationError(
            "Not a call id.", details={"before": ["A call id (a positive whole number)."]}
        )
    return int(raw)


class FrameCallsApi(APIView):
    @extend_schema(request=None, parameters=[BEFORE], responses={200: FrameCalls})
    def get(self, request: Request, frame_id: str) -> Response:
        """GM: every LLM call of the frame, newest first, 100 a page —
        purpose, the pass or AI seat it was for, model, tokens, latency, error — and the
        frame's totals. A player gets 403, anyone else 404."""
        access = frame_gm_access_or_404(user=request.user, frame_id=frame_id)
        return answer(FrameCalls, frame_calls(frame=access.frame, before=_before(request)))

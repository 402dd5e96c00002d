"""REST endpoints of a frame's bans: the players its GM kicked, who take no seat of it again
until the GM lets them back (frames.py: `seat_update`, `frame_join`)."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lmix.answers import answer

from . import frames
from .answers import FrameBans
from .frame_selectors import frame_ban_list, frame_gm_access_or_404


class FrameBansApi(APIView):
    @extend_schema(request=None, responses={200: FrameBans})
    def get(self, request: Request, frame_id: str) -> Response:
        """GM: the players you kicked from this frame, who cannot take a seat in it again
        until you allow them back ({user, player, banned_at}, oldest first)."""
        return answer(
            FrameBans,
            frame_ban_list(
                frame=frame_gm_access_or_404(user=request.user, frame_id=frame_id).frame
            ),
        )


class FrameBanDetailApi(APIView):
    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request, frame_id: str, user_id: str) -> Response:
        """GM: allow a kicked player back: they may take an open seat again (404 when they
        are not banned from this frame)."""
        access = frame_gm_access_or_404(user=request.user, frame_id=frame_id)
        frames.frame_ban_lift(frame=access.frame, user_id=int(user_id))
        return Response(status=status.HTTP_204_NO_CONTENT)

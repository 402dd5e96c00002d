"""Scenes' REST routes: the list (`GET /api/frames/{id}/scenes`), the GM's close
(`POST …/scenes/close`) and retry of a failed summary (`POST …/scenes/{number}/retry`)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lmix.answers import answer
from lmix.errors import ApplicationError

from ..frame_selectors import FrameAccess, frame_access_or_404
from ..scene_models import TITLE_MAX, SceneReason
from .answers import TITLE_HELP, SceneClosed, SceneItem, SceneList
from .run import scene_summary_retry
from .selectors import scene_list
from .services import scene_body, scene_close


def _gm_access(request: Request, frame_id: str) -> FrameAccess:
    """The GM's access (a player 403, anyone else 404), as synthesis/apis.py's: scenes do
    not import the frame API (frame_close, there, closes the last scene)."""
    access = frame_access_or_404(user=request.user, frame_id=frame_id)
    if not access.is_gm:
        raise ApplicationError("Only the frame's GM can do that.", status_code=403)
    return access


class SceneCloseSerializer(serializers.Serializer):
    title = serializers.CharField(
        max_length=TITLE_MAX, required=False, allow_blank=True, default="", help_text=TITLE_HELP
    )


class SceneListApi(APIView):
    @extend_schema(request=None, responses={200: SceneList})
    def get(self, request: Request, frame_id: str) -> Response:
        """The frame's scenes, oldest first, with the public summaries and your own
        character's (the GM: every character's)."""
        access = frame_access_or_404(user=request.user, frame_id=frame_id)
        return answer(SceneList, scene_list(access))


class SceneCloseApi(APIView):
    @extend_schema(request=SceneCloseSerializer, responses={200: SceneClosed})
    def post(self, request: Request, frame_id: str) -> Response:
        """GM: close the scene now and open the next (titled `title`, if given); each
        character's summary of it is written in the background (`scene.summarized`)."""
        access = _gm_access(request, frame_id)
        data = SceneCloseSerializer(data=request.data or {})
        data.is_valid(raise_exception=True)
        closed, opened = scene_close(
            frame=access.frame, reason=SceneReason.GM, next_title=data.validated_data["title"]
        )
        return answer(SceneClosed, {"closed": scene_body(closed), "opened": scene_body(opened)})


class SceneRetryApi(APIView):
    @extend_schema(request=None, responses={202: SceneItem})
    def post(self, request: Request, frame_id: str, number: str) -> Response:
        """GM: write a scene's failed summaries again."""
        access = _gm_access(request, frame_id)
        scene = scene_summary_retry(frame=access.frame, number=int(number))
        item = {**scene_body(scene), "summary": scene.summary, "summaries": []}
        return answer(SceneItem, item, status.HTTP_202_ACCEPTED)

"""REST endpoints of a frame's world content: everyone at the table reads it; the GM adds
and edits entries (as the author face)."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lmix.answers import answer
from lmix.errors import ApplicationError

from .answers import ContentList
from .content import content_add, content_body, content_edit, content_recent
from .event_types import ContentBody
from .frame_selectors import frame_access_or_404, frame_gm_access_or_404
from .models import Content
from .serializers import ContentWriteSerializer

GM_CONTENT = "Only the frame's GM adds and edits its content."


class FrameContentApi(APIView):
    @extend_schema(request=None, responses={200: ContentList})
    def get(self, request: Request, frame_id: str) -> Response:
        """The frame's world content, oldest first: everyone at the table reads it."""
        access = frame_access_or_404(user=request.user, frame_id=frame_id)
        return answer(ContentList, content_recent(frame_id=access.frame.pk))

    @extend_schema(request=ContentWriteSerializer, responses={201: ContentBody})
    def post(self, request: Request, frame_id: str) -> Response:
        """GM: add a location, an NPC, an item, an event or lore; everyone is told, and
        the passes that follow gather it."""
        access = frame_gm_access_or_404(user=request.user, frame_id=frame_id, message=GM_CONTENT)
        data = ContentWriteSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        entry = content_add(frame=access.frame, user=request.user, **data.validated_data)
        return answer(ContentBody, content_body(entry), status.HTTP_201_CREATED)


class ContentDetailApi(APIView):
    @extend_schema(request=ContentWriteSerializer(partial=True), responses={200: ContentBody})
    def patch(self, request: Request, frame_id: str, content_id: str) -> Response:
        """GM: change an entry (its type, name, data or pscale); the edit is recorded."""
        access = frame_gm_access_or_404(user=request.user, frame_id=frame_id, message=GM_CONTENT)
        entry = Content.objects.filter(frame=access.frame, pk=content_id).first()
        if entry is None:
            raise ApplicationError("No such content in this frame.", status_code=404)
        data = ContentWriteSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        entry = content_edit(entry=entry, user=request.user, **data.validated_data)
        return answer(ContentBody, content_body(entry))

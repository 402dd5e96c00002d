"""REST routes of character snapshots: export (a seat's player or the GM), import and
reset (the GM), the frame's stored snapshots (the GM), and the published JSON Schema
(anyone)."""

import json

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from authoring.card_format import json_parse, no_nul
from lmix.answers import answer
from lmix.errors import ApplicationError
from lmix.parsers import StrictJSONParser

from ..frame_selectors import frame_access_or_404
from ..models import Seat
from .answers import SeatResetDone, SnapshotImported, SnapshotList
from .schema import JsonSchemaDocument, SnapshotV1, StoredSnapshotFile, json_schema
from .services import (
    frame_snapshot_get,
    frame_snapshots,
    restore_options,
    seat_reset,
    snapshot_export,
    snapshot_filename,
    snapshot_import,
    stored_snapshot,
)

FILE_MAX_BYTES = 8 * 1024 * 1024


def _download(data: dict, filename: str) -> HttpResponse:
    response = HttpResponse(
        json.dumps(data, ensure_ascii=False, indent=2), content_type="application/json"
    )
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class SeatSnapshotApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("at", str, description="An outcome's id: the state as of it.")
        ],
        responses={200: SnapshotV1},
    )
    def get(self, request: Request, frame_id: str, seat_id: str) -> HttpResponse:
        """The seat's character snapshot (`lmix-snapshot` version 1), as a JSON file: its
        persona and its state now or as of the outcome `at`. Its current player's and the
        GM's; anyone else gets 404. Each export is recorded."""
        access = frame_access_or_404(user=request.user, frame_id=frame_id)
        data = snapshot_export(
            access=access, user=request.user, seat_id=seat_id, at=request.query_params.get("at")
        )
        return _download(data, snapshot_filename(data))


class SnapshotImportSerializer(serializers.Serializer):
    seat = serializers.UUIDField(help_text="The seat of this frame to restore into.")
    snapshot = serializers.JSONField(required=False, help_text="A snapshot, as JSON.")
    file = serializers.FileField(required=False, help_text="A snapshot file (multipart).")
    snapshot_id = serializers.UUIDField(
        required=False, help_text="A snapshot this frame keeps (a reset's, say)."
    )
    restore = serializers.JSONField(
        required=False,
        help_text='What to restore: ["affinity", "mood", "facts", "memories"] (all when '
        "absent), or an object of booleans.",
    )
    persona = serializers.BooleanField(
        default=False, help_text="Also recreate the persona in your library (or match one)."
    )


class FrameSnapshotsApi(APIView):
    parser_classes = [MultiPartParser, StrictJSONParser]

    @extend_schema(request=None, responses={200: SnapshotList}, operation_id="frame_snapshots_list")
    def get(self, request: Request, frame_id: str) -> Response:
        """The frame's snapshots, newest first: exports, imports, those taken before a reset
        and the periodic ones (the GM's)."""
        access = frame_access_or_404(user=request.user, frame_id=frame_id)
        return answer(SnapshotList, {"snapshots": frame_snapshots(access=access)})

    @extend_schema(request=SnapshotImportSerializer, responses={201: SnapshotImported})
    def post(self, request: Request, frame_id: str) -> Response:
        """Import a snapshot into a seat (the GM's): JSON `{snapshot, seat, restore}`, a
        multipart `file`, or a `snapshot_id` this frame keeps. All of it or nothing; a
        malformed snapshot gets a 400 naming the problem and where it is."""
        access = frame_access_or_404(user=request.user, frame_id=frame_id)
        if not access.is_gm:
            raise ApplicationError("Only the frame's GM can import a snapshot.", status_code=403)
        data = request.data
        restore = data.get("restore") if isinstance(data, dict) else None
        if request.content_type.startswith("multipart/"):  # `restore` repeated, one name each
            restore = data.getlist("restore") if "restore" in data else None
            data = {key: data[key] for key in data if key != "restore"}
        body = SnapshotImportSerializer(data=data)
        body.is_valid(raise_exception=True)
        given = body.validated_data
        sources = [k for k in ("snapshot", "file", "snapshot_id") if k in given]
        if len(sources) != 1:
            message = "Give one snapshot: `snapshot` (JSON), `file` or `snapshot_id`."
            raise ApplicationError(message, details={"snapshot": [message]})
        if "file" in given:
            upload = given["file"]
            if upload.size > FILE_MAX_BYTES:
                raise ApplicationError(
                    "The file is too large; the limit is 8 MiB.", details={"file": ["Too large."]}
                )
            data = json_parse(upload.read())
        elif "snapshot_id" in given:
            seat = Seat.objects.filter(frame=access.frame, pk=given["seat"]).first()
            if seat is None:
                raise ApplicationError("No such seat in this frame.", status_code=404)
            data = stored_snapshot(frame=access.frame, snapshot_id=given["snapshot_id"], seat=seat)
        else:
            data = given["snapshot"]
        no_nul(data)
        done = snapshot_import(
            access=access,
            user=request.user,
            seat_id=given["seat"],
            data=data,
            restore=restore_options(restore),
            persona=given["persona"],
        )
        return answer(SnapshotImported, done, status=status.HTTP_201_CREATED)


class FrameSnapshotApi(APIView):
    @extend_schema(
        request=None,
        responses={200: StoredSnapshotFile},
        operation_id="frame_snapshot_download",
    )
    def get(self, request: Request, frame_id: str, snapshot_id: str) -> HttpResponse:
        """One stored snapshot, as a JSON file (the GM's): a seat's `lmix-snapshot`, or a
        frame's `lmix-frame-snapshot` holding one per seat."""
        access = frame_access_or_404(user=request.user, frame_id=frame_id)
        data, filename = frame_snapshot_get(access=access, snapshot_id=snapshot_id)
        return _download(data, filename)


class SeatResetSerializer(serializers.Serializer):
    confirm = serializers.CharField(
        allow_blank=True, trim_whitespace=False, help_text="The character's name, typed back."
    )


class SeatResetApi(APIView):
    @extend_schema(request=SeatResetSerializer, responses={200: SeatResetDone})
    def post(self, request: Request, frame_id: str, seat_id: str) -> Response:
        """Reset the character's state (the GM's): a snapshot is taken first, then its
        relationships, mood and facts start over and its memories are cleared. `confirm`
        must be the character's name."""
        access = frame_access_or_404(user=request.user, frame_id=frame_id)
        body = SeatResetSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        done = seat_reset(
            access=access,
            user=request.user,
            seat_id=seat_id,
            confirm=body.validated_data["confirm"],
        )
        return answer(SeatResetDone, done)


class SnapshotSchemaApi(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(request=None, responses={200: JsonSchemaDocument})
    def get(self, request: Request) -> Response:
        """The JSON Schema of a character snapshot, version 1 (public)."""
        return Response(json_schema())

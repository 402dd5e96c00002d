"""REST endpoint of a frame's export: the reader's story to download, as JSON or Markdown
(synthesis/export.py)."""

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lmix.answers import answer
from lmix.errors import ApplicationError

from .answers import FrameExport
from .export import export_filename, frame_export
from .export_markdown import export_markdown
from .frame_selectors import frame_access_or_404

FORMATS = ("json", "md")


class ExportFormatIsTheViews(DefaultContentNegotiation):
    """`?format=` names the export's format, which the view checks (400 for another), not
    one of DRF's renderers (which would answer 404): the JSON export and every error are
    rendered as JSON."""

    def select_renderer(
        self, request: Request, renderers: list[BaseRenderer], format_suffix: Any = None
    ) -> tuple[BaseRenderer, str]:
        return renderers[0], renderers[0].media_type


class FrameExportApi(APIView):
    content_negotiation_class = ExportFormatIsTheViews

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "format",
                OpenApiTypes.STR,
                enum=list(FORMATS),
                default="json",
                description="json (default) or md (Markdown); both are sent as attachments.",
            )
        ],
        responses={
            (200, "application/json"): FrameExport,
            (200, "text/markdown"): OpenApiTypes.STR,
        },
    )
    def get(self, request: Request, frame_id: str) -> Response | HttpResponse:
        """Your story of the frame to keep, as JSON or Markdown: its cast, every outcome
        (numbered 1, 2, 3…) and the narratives you may read, in order, and your intentions.
        The GM's export holds every seat's story and every intention; a player's only their
        own. Anyone else gets 404."""
        access = frame_access_or_404(user=request.user, frame_id=frame_id)
        kind = request.query_params.get("format", "json")
        if kind not in FORMATS:
            raise ApplicationError(
                "Unknown export format: ask for format=json or format=md.",
                details={"format": ["Must be json or md."]},
            )
        export = frame_export(access)
        if kind == "md":
            response: Response | HttpResponse = HttpResponse(
                export_markdown(export), content_type="text/markdown; charset=utf-8"
            )
        else:
            response = answer(FrameExport, export)
        name = export_filename(export, kind)
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response

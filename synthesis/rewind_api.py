"""REST endpoints of rewind and regenerate (synthesis/rewind.py, regenerate.py), the GM's
alone: a player gets 403, anyone else the 404 of a missing frame, outcome or pass."""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lmix.answers import answer
from lmix.errors import ApplicationError

from .answers import OutcomeRegenerated, RewindAnswer, RewindList, RewindPreview
from .frame_selectors import FrameAccess, frame_access_or_404
from .models import Pass
from .regenerate import pass_regenerate
from .rewind import frame_rewind, rewind_body, rewind_list, rewind_preview, rewind_restore
from .rewind_models import Rewind

GM_ONLY = "Only the frame's GM can rewind or regenerate."


def gm_access(request: Request, frame_id: object, not_found: str = "No such frame.") -> FrameAccess:
    """The caller's access to a frame they run: a player 403, anyone else a 404 that says
    nothing of whether `not_found`'s row exists."""
    try:
        access = frame_access_or_404(user=request.user, frame_id=frame_id)
    except Http404:
        raise ApplicationError(not_found, status_code=404) from None
    if not access.is_gm:
        raise ApplicationError(GM_ONLY, status_code=403)
    return access


class FrameRewindSerializer(serializers.Serializer):
    to = serializers.UUIDField(help_text="The outcome to rewind to: everything after it goes.")
    dry_run = serializers.BooleanField(default=False, help_text="Only say what would go.")


class InputSerializer(serializers.Serializer):
    liquid = serializers.UUIDField(help_text="An intention the outcome resolved.")
    content = serializers.CharField(help_text="Its new text.", allow_blank=True)


class RegenerateSerializer(serializers.Serializer):
    dry_run = serializers.BooleanField(
        default=False, help_text="Only say what would go, and the intentions to rewrite."
    )
    inputs = InputSerializer(
        many=True, required=False, help_text="Intentions to rewrite before it runs again."
    )


def regenerate_inputs(request: Request) -> tuple[bool, list[dict] | None]:
    """The body's `dry_run`, and its rewritten intentions (None: none)."""
    data = RegenerateSerializer(data=request.data or {})
    data.is_valid(raise_exception=True)
    inputs = data.validated_data.get("inputs")
    edits = [{"liquid": str(i["liquid"]), "content": i["content"]} for i in inputs or []]
    return data.validated_data["dry_run"], edits or None


def regenerated(result: dict) -> Response:
    body: dict = {"passes": [{"id": str(p.pk), "status": p.status} for p in result["passes"]]}
    if result["rewind"] is not None:  # a held outcome thrown away rewound nothing
        body["rewind"] = result["rewind"]
    return answer(OutcomeRegenerated, body, status.HTTP_202_ACCEPTED)


class FrameRewindApi(APIView):
    @extend_schema(request=FrameRewindSerializer, responses={200: RewindPreview, 201: RewindAnswer})
    def post(self, request: Request, frame_id: str) -> Response:
        """GM: rewind the frame to an outcome. With `dry_run` only what would go (200);
        otherwise everything after it is hidden, kept and restorable, and every page
        re-reads (201)."""
        access = gm_access(request, frame_id)
        data = FrameRewindSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        to = data.validated_data["to"]
        if data.validated_data["dry_run"]:
            return answer(RewindPreview, rewind_preview(frame=access.frame, to=to))
        rewind = frame_rewind(frame=access.frame, to=to, user=request.user)
        return answer(RewindAnswer, rewind_body(rewind, restorable=True), status.HTTP_201_CREATED)


class FrameRewindsApi(APIView):
    @extend_schema(request=None, responses={200: RewindList})
    def get(self, request: Request, frame_id: str) -> Response:
        """GM: the frame's rewinds, newest first."""
        access = gm_access(request, frame_id)
        return answer(RewindList, {"rewinds": rewind_list(frame=access.frame)})


class RewindRestoreApi(APIView):
    @extend_schema(request=None, responses={200: RewindAnswer})
    def post(self, request: Request, frame_id: str, rewind_id: str) -> Response:
        """GM: restore a rewind (the newest standing one): what it hid comes back exactly,
        and what was played since is hidden in turn (a rewind of its own, restorable)."""
        access = gm_access(request, frame_id)
        rewind = Rewind.objects.filter(frame=access.frame, pk=rewind_id).first()
        if rewind is None:
            raise ApplicationError("No such rewind.", status_code=404)
        rewind = rewind_restore(rewind=rewind, user=request.user)
        return answer(RewindAnswer, rewind_body(rewind))


class PassRegenerateApi(APIView):
    @extend_schema(request=RegenerateSerializer, responses={202: OutcomeRegenerated})
    def post(self, request: Request, pass_id: str) -> Response:
        """GM: regenerate any pass: a failed one runs again; a medium pass's outcome is
        regenerated (everything after it rewound first), its intentions optionally
        rewritten."""
        pass_ = Pass.objects.filter(pk=pass_id).first()
        if pass_ is None:
            raise ApplicationError("No such pass.", status_code=404)
        gm_access(request, pass_.frame_id, "No such pass.")
        _, inputs = regenerate_inputs(request)
        return regenerated(pass_regenerate(pass_=pass_, user=request.user, inputs=inputs))

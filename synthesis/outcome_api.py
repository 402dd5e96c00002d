"""REST endpoints of the GM's tools on an outcome (synthesis/outcomes.py): release a held
one, edit the text of any one, regenerate any one."""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lmix.answers import answer
from lmix.errors import ApplicationError

from .answers import OutcomeRegenerated, RegeneratePreview
from .event_types import OutcomeBody
from .frame_selectors import frame_gm_access_or_404
from .models import Outcome
from .outcomes import outcome_edit, outcome_release
from .regenerate import outcome_regenerate_any, regenerate_preview
from .rewind_api import RegenerateSerializer, regenerate_inputs, regenerated
from .selectors import outcome_body
from .serializers import OutcomeEditSerializer

NO_SUCH = "No such outcome."


GM_REVIEWS = "Only the frame's GM reviews its outcomes."


def _outcome_for_gm(request: Request, outcome_id: str) -> Outcome:
    """The outcome, for its frame's GM: a player of the frame gets 403, anyone else the
    404 a missing outcome gets (they cannot tell whether it exists)."""
    outcome = Outcome.objects.filter(pk=outcome_id).first()
    if outcome is None:
        raise ApplicationError(NO_SUCH, status_code=404)
    try:
        frame_gm_access_or_404(user=request.user, frame_id=outcome.frame_id, message=GM_REVIEWS)
    except Http404:
        raise ApplicationError(NO_SUCH, status_code=404) from None
    return outcome


class OutcomeDetailApi(APIView):
    @extend_schema(request=OutcomeEditSerializer, responses={200: OutcomeBody})
    def patch(self, request: Request, outcome_id: str) -> Response:
        """GM: rewrite an outcome's texts (each action, each world fact, each interrupt's
        reason); the edit is recorded with who and when, and the secret guard looks again.
        Everyone is told of a released outcome's edit; a held one stays yours."""
        outcome = _outcome_for_gm(request, outcome_id)
        data = OutcomeEditSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        outcome = outcome_edit(outcome=outcome, user=request.user, **data.validated_data)
        return answer(OutcomeBody, outcome_body(outcome, gm=True))


class OutcomeReleaseApi(APIView):
    @extend_schema(request=None, responses={200: OutcomeBody})
    def post(self, request: Request, outcome_id: str) -> Response:
        """GM: release a held outcome: everyone reads it now, then its interrupts, the AI
        seats' reactions and the narratives that waited for it follow."""
        outcome = outcome_release(outcome=_outcome_for_gm(request, outcome_id), user=request.user)
        return answer(OutcomeBody, outcome_body(outcome, gm=True))


class OutcomeRegenerateApi(APIView):
    @extend_schema(
        request=RegenerateSerializer,
        responses={200: RegeneratePreview, 202: OutcomeRegenerated},
    )
    def post(self, request: Request, outcome_id: str) -> Response:
        """GM: run an outcome's pass again (the model is asked anew). A held one is thrown
        away (the players' placeholder goes); any other is rewound first, it and what
        followed (synthesis/regenerate.py), its intentions optionally rewritten (`inputs`).
        With `dry_run`: what would go, and the intentions to rewrite (200)."""
        outcome = _outcome_for_gm(request, outcome_id)
        dry_run, inputs = regenerate_inputs(request)
        if dry_run:
            return answer(RegeneratePreview, regenerate_preview(outcome=outcome))
        return regenerated(
            outcome_regenerate_any(outcome=outcome, user=request.user, inputs=inputs)
        )

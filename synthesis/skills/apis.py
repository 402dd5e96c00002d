"""REST endpoints of skills: `/api/skills` lists the platform's (read-only) and the
caller's own, and with `?frame=` the frame's skills for its GM; a user writes their own
skills, a GM their frame's."""

from typing import Any

from django.db.models import Q
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lmix.answers import answer
from lmix.errors import ApplicationError

from ..answers import SkillBody, SkillList
from ..frame_selectors import frame_gm_access_or_404, is_uuid
from ..models import Face, Frame, Skill, SkillScope
from ..serializers import SkillWriteSerializer
from .services import skill_create, skill_delete, skill_update

NOT_FOUND = "No such skill."


def _gm_frame(request: Request, frame_id: object) -> Frame:
    message = "Only the frame's GM reads and writes its skills."
    return frame_gm_access_or_404(user=request.user, frame_id=frame_id, message=message).frame


def skill_body(skill: Skill) -> dict[str, Any]:
    return {
        "id": str(skill.pk),
        "scope": skill.scope,
        "face": skill.face,
        "category": skill.category,
        "name": skill.name,
        "text": skill.text,
        "guard": skill.guard,
        "frame": str(skill.frame_id) if skill.frame_id else None,
        "editable": skill.scope != SkillScope.PLATFORM,
        "updated_at": skill.updated_at.isoformat(),
    }


def _readable(user: Any) -> Q:
    """Platform skills, the user's own and those of the frames they run."""
    return (
        Q(scope=SkillScope.PLATFORM)
        | Q(scope=SkillScope.USER, owner=user)
        | Q(scope=SkillScope.FRAME, frame__owner=user)
    )


def _skill_or_404(request: Request, skill_id: str) -> Skill:
    skill = Skill.objects.filter(_readable(request.user), pk=skill_id).first()
    if skill is None:
        raise ApplicationError(NOT_FOUND, status_code=404)
    return skill


class SkillListApi(APIView):
    @extend_schema(
        operation_id="skills_list",
        parameters=[
            OpenApiParameter("face", OpenApiTypes.STR, enum=Face.values, required=False),
            OpenApiParameter(
                "frame",
                OpenApiTypes.UUID,
                required=False,
                description="A frame you run: its skills instead of your own.",
            ),
        ],
        responses={200: SkillList},
    )
    def get(self, request: Request) -> Response:
        """The platform's skills (read-only, guard skills marked) and your own; with
        `frame`, the platform's and that frame's (its GM only)."""
        face = request.query_params.get("face")
        if face is not None and face not in Face.values:
            raise ApplicationError(
                "Unknown face: use player, author or designer.",
                details={"face": ["Must be player, author or designer."]},
            )
        frame_id = request.query_params.get("frame")
        if frame_id is not None:
            if not is_uuid(frame_id):
                raise ApplicationError("No such frame.", status_code=404)
            scope = Q(scope=SkillScope.FRAME, frame=_gm_frame(request, frame_id))
        else:
            scope = Q(scope=SkillScope.USER, owner=request.user)
        skills = Skill.objects.filter(Q(scope=SkillScope.PLATFORM) | scope)
        if face is not None:
            skills = skills.filter(face=face)
        return answer(SkillList, [skill_body(s) for s in skills])

    @extend_schema(request=SkillWriteSerializer, responses={201: SkillBody})
    def post(self, request: Request) -> Response:
        """Write a skill: your own (it shapes the passes of the characters you play), or,
        with `frame`, that frame's (its GM only; it shapes every pass of the frame). One per
        face and category in each place (409); a guard category is the platform's only
        (400)."""
        data = SkillWriteSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        frame_id = fields.pop("frame", None)
        frame = _gm_frame(request, frame_id) if frame_id is not None else None
        skill = skill_create(owner=request.user, frame=frame, **fields)
        return answer(SkillBody, skill_body(skill), status.HTTP_201_CREATED)


class SkillDetailApi(APIView):
    @extend_schema(request=None, responses={200: SkillBody})
    def get(self, request: Request, skill_id: str) -> Response:
        """A skill you may read: the platform's, your own, or one of a frame you run."""
        return answer(SkillBody, skill_body(_skill_or_404(request, skill_id)))

    @extend_schema(request=SkillWriteSerializer(partial=True), responses={200: SkillBody})
    def patch(self, request: Request, skill_id: str) -> Response:
        """Change your skill or your frame's: name, text, face or category. Platform skills
        are read-only here (403)."""
        skill = _skill_or_404(request, skill_id)
        data = SkillWriteSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        changes = {k: v for k, v in data.validated_data.items() if k != "frame"}
        skill = skill_update(skill=skill, **changes)
        return answer(SkillBody, skill_body(skill))

    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request, skill_id: str) -> Response:
        """Delete your skill or your frame's; the platform's ones stay (403)."""
        skill_delete(skill=_skill_or_404(request, skill_id))
        return Response(status=status.HTTP_204_NO_CONTENT)

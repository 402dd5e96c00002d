"""REST endpoints of productions: CRUD, turns (ask, speak as, edit, delete, continue,
stop), impersonation drafts, auto-play."""

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from authoring.models import Assistant
from lmix.errors import ApplicationError
from lmix.urls_router import UUID_PATTERN

from . import drafts, selectors, services, turn_edits
from .models import Production, Turn
from .serializers import (
    AutoplaySerializer,
    AutoplayStateSerializer,
    DraftSerializer,
    HeadSerializer,
    ImpersonateSerializer,
    ProductionDetailSerializer,
    ProductionRewindAnswerSerializer,
    ProductionRewindSerializer,
    ProductionSerializer,
    TurnDeleteSerializer,
    TurnEditSerializer,
    TurnRequestSerializer,
    TurnSerializer,
)

EXCERPT = 120


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT else text[: EXCERPT - 1].rstrip() + "…"


class ProductionViewSet(viewsets.ModelViewSet):
    serializer_class = ProductionSerializer
    lookup_value_regex = UUID_PATTERN

    def get_queryset(self) -> QuerySet[Production]:
        return selectors.production_list(owner=self.request.user)

    def get_serializer_class(self):
        return ProductionDetailSerializer if self.action == "retrieve" else ProductionSerializer

    def retrieve(self, request: Request, *args, **kwargs) -> Response:
        production = self.get_object()
        return Response(self._detail(production))

    def perform_create(self, serializer: ProductionSerializer) -> None:
        serializer.instance = services.production_create(
            owner=self.request.user, **serializer.validated_data
        )

    def perform_update(self, serializer: ProductionSerializer) -> None:
        serializer.instance = services.production_update(
            production=serializer.instance, data=dict(serializer.validated_data)
        )

    def perform_destroy(self, instance: Production) -> None:
        services.production_delete(production=instance)

    def _detail(self, production: Production) -> dict:
        # The sequence first: an event after it may also be in the turns (the client skips
        # it as stale), but none before it can be missing from them.
        production.refresh_from_db(fields=["head", "autoplay_remaining", "event_seq"])
        context = {
            "cast": selectors.cast_load(production=production),
            "turns": selectors.turn_list(production=production),
        }
        return ProductionDetailSerializer(production, context=context).data

    @extend_schema(request=HeadSerializer, responses=HeadSerializer)
    @action(detail=True, methods=["put"], url_path="head")
    def head(self, request: Request, pk: str | None = None) -> Response:
        """Choose the branch being followed (a sibling switch): new turns without a parent,
        auto-play and a reload continue from it."""
        production = self.get_object()
        data = HeadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        turn = self._parent(production, {"parent": data.validated_data["turn"]})
        services.production_head_set(production=production, turn=turn)
        return Response({"turn": str(turn.pk)})

    @extend_schema(request=ProductionRewindSerializer, responses=ProductionRewindAnswerSerializer)
    @action(detail=True, methods=["post"], url_path="rewind")
    def rewind(self, request: Request, pk: str | None = None) -> Response:
        """Go back to an earlier turn of the branch being followed (`dry_run`: only say what
        would be undone). The later turns are kept: `PUT head` with `restore` brings them,
        and the cast's state with them, back."""
        production = self.get_object()
        data = ProductionRewindSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        to = production.turns.filter(pk=values["to"]).first()
        if to is None:
            raise ApplicationError(
                "That turn is not part of this production.",
                details={"to": ["Not a turn of this production."]},
            )
        plan = turn_edits.production_rewind(production=production, to=to, dry_run=values["dry_run"])
        answer = {
            "to": str(to.pk),
            "dry_run": values["dry_run"],
            "head": str(plan.restore if values["dry_run"] else to.pk),
            "restore": str(plan.restore),
            "turns": [
                {"id": str(t.pk), "speaker_name": t.speaker_name, "excerpt": _excerpt(t.content)}
                for t in plan.turns
            ],
            "state_deltas": plan.counts.get("state_deltas", 0),
            "memories": plan.counts.get("memories", 0),
        }
        return Response(ProductionRewindAnswerSerializer(answer).data)

    @extend_schema(
        request=TurnRequestSerializer, responses={202: TurnSerializer, 201: TurnSerializer}
    )
    @action(detail=True, methods=["post"], url_path="turns")
    def turns(self, request: Request, pk: str | None = None) -> Response:
        """Ask an assistant (or the rule) to speak next, add a director turn (`content`), or
        speak as a cast member (`persona` and `content`)."""
        production = self.get_object()
        data = TurnRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        turn = services.turn_request(
            production=production,
            assistant=self._cast_member(production, "assistant", values.get("assistant")),
            parent=self._parent(production, values),
            content=values.get("content"),
            director=request.user,
            speak_as=self._cast_member(production, "persona", values.get("persona")),
        )
        code = status.HTTP_202_ACCEPTED if turn.status == "pending" else status.HTTP_201_CREATED
        return Response(self._turn_data(production, turn), status=code)

    @extend_schema(methods=["patch"], request=TurnEditSerializer, responses=TurnSerializer)
    @extend_schema(methods=["delete"], request=None, parameters=[TurnDeleteSerializer])
    @action(
        detail=True,
        methods=["patch", "delete"],
        url_path=rf"turns/(?P<turn_id>{UUID_PATTERN})",
    )
    def turn(self, request: Request, pk: str | None = None, turn_id: str | None = None) -> Response:
        """Edit a finished turn's text (PATCH), or delete it (DELETE; a turn with later
        turns answers 409 unless `?branch=delete` or `?branch=keep`)."""
        production = self.get_object()
        turn = self._turn(production, turn_id)
        if request.method == "DELETE":
            query = TurnDeleteSerializer(data=request.query_params)
            query.is_valid(raise_exception=True)
            branch = query.validated_data.get("branch")
            turn_edits.turn_delete(
                turn=turn, branch=turn_edits.BranchChoice(branch) if branch else None
            )
            return Response(status=status.HTTP_204_NO_CONTENT)
        data = TurnEditSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        turn = turn_edits.turn_edit(turn=turn, content=data.validated_data["content"])
        return Response(self._turn_data(production, turn))

    @extend_schema(request=None, responses={202: TurnSerializer})
    @action(
        detail=True,
        methods=["post"],
        url_path=rf"turns/(?P<turn_id>{UUID_PATTERN})/continue",
    )
    def continue_turn(
        self, request: Request, pk: str | None = None, turn_id: str | None = None
    ) -> Response:
        """Extend the last turn of a branch: its text streams on from where it ends."""
        production = self.get_object()
        turn = turn_edits.turn_continue(turn=self._turn(production, turn_id))
        return Response(self._turn_data(production, turn), status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=ImpersonateSerializer, responses={202: DraftSerializer})
    @action(detail=True, methods=["post"], url_path="impersonate")
    def impersonate(self, request: Request, pk: str | None = None) -> Response:
        """Draft a cast member's next line for the user to edit and send; it streams on the
        production's socket (`draft.token`, `draft.done`, `draft.failed`) and is not stored."""
        production = self.get_object()
        data = ImpersonateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        parent = self._parent(production, values)
        draft = drafts.draft_request(
            production=production,
            speaker=self._cast_member(production, "persona", values["persona"]),
            parent=production.head if parent is services.HEAD else parent,
            draft_id=values.get("draft"),
        )
        return Response({"draft": draft}, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses=TurnSerializer)
    @action(
        detail=True,
        methods=["post"],
        url_path=rf"turns/(?P<turn_id>{UUID_PATTERN})/stop",
    )
    def stop(self, request: Request, pk: str | None = None, turn_id: str | None = None) -> Response:
        """Stop a streaming turn; its partial text is kept."""
        production = self.get_object()
        turn = services.turn_stop(turn=self._turn(production, turn_id))
        return Response(self._turn_data(production, turn))

    @extend_schema(
        methods=["post"], request=AutoplaySerializer, responses={202: AutoplayStateSerializer}
    )
    @extend_schema(methods=["delete"], request=None, responses=AutoplayStateSerializer)
    @action(detail=True, methods=["post", "delete"], url_path="autoplay")
    def autoplay(self, request: Request, pk: str | None = None) -> Response:
        """Start (POST, `count` turns in a row) or stop (DELETE) auto-play."""
        production = self.get_object()
        if request.method == "DELETE":
            production = services.autoplay_stop(production=production)
            return Response({"autoplay_remaining": production.autoplay_remaining})
        data = AutoplaySerializer(data=request.data)
        data.is_valid(raise_exception=True)
        production = services.autoplay_start(
            production=production,
            count=data.validated_data["count"],
            parent=self._parent(production, data.validated_data),
        )
        return Response(
            {"autoplay_remaining": production.autoplay_remaining}, status=status.HTTP_202_ACCEPTED
        )

    @staticmethod
    def _cast_member(production: Production, field: str, wanted: object) -> Assistant | None:
        """The cast member that is `wanted` (an assistant id, or its persona's id)."""
        if not wanted:
            return None
        for member in selectors.cast_load(production=production):
            if (member.persona_id if field == "persona" else member.pk) == wanted:
                return member
        raise ApplicationError(
            f"That {field} is not in this production's cast.",
            details={field: ["Not in this production's cast."]},
        )

    @staticmethod
    def _turn(production: Production, turn_id: object) -> Turn:
        turn = production.turns.filter(pk=turn_id).first()
        if turn is None:
            raise NotFound("No such turn.")
        return turn

    @staticmethod
    def _parent(production: Production, values: dict) -> Turn | None | object:
        if "parent" not in values:
            return services.HEAD
        if values["parent"] is None:
            return None
        parent = production.turns.filter(pk=values["parent"]).first()
        if parent is None:
            raise ApplicationError(
                "That parent turn is not part of this production.",
                details={"parent": ["Not a turn of this production."]},
            )
        return parent

    @staticmethod
    def _turn_data(production: Production, turn: Turn) -> dict:
        return TurnSerializer(turn, context={"show_directive": production.show_directive}).data

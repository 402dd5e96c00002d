"""REST endpoints of productions: CRUD, turns (ask, stop), auto-play."""

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from lmix.apis import UUID_PATTERN
from lmix.errors import ApplicationError

from . import selectors, services
from .models import Production, Turn
from .serializers import (
    AutoplaySerializer,
    AutoplayStateSerializer,
    HeadSerializer,
    ProductionDetailSerializer,
    ProductionSerializer,
    TurnRequestSerializer,
    TurnSerializer,
)


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

    @extend_schema(
        request=TurnRequestSerializer, responses={202: TurnSerializer, 201: TurnSerializer}
    )
    @action(detail=True, methods=["post"], url_path="turns")
    def turns(self, request: Request, pk: str | None = None) -> Response:
        """Ask an assistant (or the rule) to speak next, or add a director turn (`content`)."""
        production = self.get_object()
        data = TurnRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        assistant = None
        if values.get("assistant"):
            assistant = next(
                (
                    a
                    for a in selectors.cast_load(production=production)
                    if a.pk == values["assistant"]
                ),
                None,
            )
            if assistant is None:
                raise ApplicationError(
                    "That assistant is not in this production's cast.",
                    details={"assistant": ["Not in this production's cast."]},
                )
        turn = services.turn_request(
            production=production,
            assistant=assistant,
            parent=self._parent(production, values),
            content=values.get("content"),
            director=request.user,
        )
        code = status.HTTP_202_ACCEPTED if turn.status == "pending" else status.HTTP_201_CREATED
        return Response(self._turn_data(production, turn), status=code)

    @extend_schema(request=None, responses=TurnSerializer)
    @action(
        detail=True,
        methods=["post"],
        url_path=rf"turns/(?P<turn_id>{UUID_PATTERN})/stop",
    )
    def stop(self, request: Request, pk: str | None = None, turn_id: str | None = None) -> Response:
        """Stop a streaming turn; its partial text is kept."""
        production = self.get_object()
        turn = production.turns.filter(pk=turn_id).first()
        if turn is None:
            return Response({"detail": "No such turn."}, status=status.HTTP_404_NOT_FOUND)
        return Response(self._turn_data(production, services.turn_stop(turn=turn)))

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

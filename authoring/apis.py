"""REST endpoints for the authoring data: each user sees and changes only their own objects."""

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lmix import services as llm_models
from lmix.llm.params import SAMPLER_PRESETS
from lmix.models import LLMModel
from lmix.parsers import StrictJSONParser
from lmix.serializers import LLMModelSerializer, ModelTestResultSerializer, ModelTestSerializer
from lmix.urls_router import UUID_PATTERN

from . import card_services, services
from .lore_services import lore_entry_save
from .models import Affiliation, Assistant, LoreEntry, Persona, Scenario, World
from .prompt_template import PLACEHOLDERS, default_template
from .serializers import (
    AffiliationSerializer,
    AssistantSerializer,
    AvatarUploadSerializer,
    CardQuerySerializer,
    CardSerializer,
    CardUploadSerializer,
    LoreEntrySerializer,
    PersonaSerializer,
    PromptControlsSerializer,
    ScenarioSerializer,
    WorldSerializer,
)
from .usage import Authored


def _errors_per_item(errors: list | dict, count: int) -> list[dict]:
    """One error dict per submitted item, `{}` for the good ones, in request order."""
    if isinstance(errors, list):
        return [
            dict(item) if isinstance(item, dict) else {"non_field_errors": item} if item else {}
            for item in errors
        ] or [{}] * count
    if all(str(key).isdigit() for key in errors):
        items = [errors.get(str(i), errors.get(i, {})) for i in range(count)]
        return [item if isinstance(item, dict) else {"non_field_errors": item} for item in items]
    return [dict(errors)] * count


class QueryFormatIgnored(DefaultContentNegotiation):
    """Content negotiation that leaves `?format=` to the view (a card's json or png), where
    DRF would look for a renderer of that name."""

    class settings:  # noqa: N801 - stands in for DRF's api_settings
        URL_FORMAT_OVERRIDE = None


class OwnedViewSet(viewsets.ModelViewSet):
    """CRUD over the requesting user's own objects; anyone else's are a 404."""

    lookup_value_regex = UUID_PATTERN

    def get_queryset(self):
        return self.queryset.filter(owner=self.request.user)

    def perform_create(self, serializer: serializers.BaseSerializer) -> None:
        serializer.save(owner=self.request.user)

    def perform_destroy(self, instance: Authored) -> None:
        # Refused (409, naming them) while a production or frame uses it.
        services.authored_delete(obj=instance)


class WorldViewSet(OwnedViewSet):
    queryset = World.objects.all()
    serializer_class = WorldSerializer


class LoreEntryViewSet(viewsets.ModelViewSet):
    """A world's lorebook, under /api/worlds/{world}/lore: only the world's owner sees it
    (anyone else, and any other world's entry, is a 404)."""

    serializer_class = LoreEntrySerializer
    lookup_value_regex = UUID_PATTERN

    def world(self) -> World:
        if not hasattr(self, "_world"):
            self._world = get_object_or_404(
                World, pk=self.kwargs["world_pk"], owner=self.request.user
            )
        return self._world

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator has no world
            return LoreEntry.objects.none()
        return LoreEntry.objects.filter(world=self.world(), owner=self.request.user).order_by(
            "-priority", "created_at"
        )

    def perform_create(self, serializer: LoreEntrySerializer) -> None:
        entry = LoreEntry(owner=self.request.user, world=self.world())
        serializer.instance = lore_entry_save(entry=entry, data=dict(serializer.validated_data))

    def perform_update(self, serializer: LoreEntrySerializer) -> None:
        serializer.instance = lore_entry_save(
            entry=serializer.instance, data=dict(serializer.validated_data)
        )


class PromptControlsApi(APIView):
    """What the assistant and model forms offer: the sampler presets, the default system
    prompt template and its placeholders."""

    @extend_schema(responses=PromptControlsSerializer)
    def get(self, request: Request) -> Response:
        return Response(
            PromptControlsSerializer(
                {
                    "presets": [
                        {"name": name, "params": params} for name, params in SAMPLER_PRESETS.items()
                    ],
                    "default_template": default_template(),
                    "placeholders": [
                        {"name": name, "description": description}
                        for name, description in PLACEHOLDERS.items()
                    ],
                }
            ).data
        )


class ScenarioViewSet(OwnedViewSet):
    queryset = Scenario.objects.all()
    serializer_class = ScenarioSerializer


class AffiliationViewSet(OwnedViewSet):
    queryset = Affiliation.objects.all()
    serializer_class = AffiliationSerializer


class PersonaViewSet(OwnedViewSet):
    queryset = Persona.objects.prefetch_related("affiliations", "memberships")
    serializer_class = PersonaSerializer

    def perform_create(self, serializer: PersonaSerializer) -> None:
        self._save(serializer, Persona(owner=self.request.user))

    def perform_update(self, serializer: PersonaSerializer) -> None:
        self._save(serializer, serializer.instance)

    def _save(self, serializer: PersonaSerializer, persona: Persona) -> None:
        data = dict(serializer.validated_data)
        affiliations = data.pop("affiliations", None)
        covert_affiliations = data.pop("covert_affiliations", None)
        for attr, value in data.items():
            setattr(persona, attr, value)
        serializer.instance = services.persona_save(
            persona=persona, affiliations=affiliations, covert_affiliations=covert_affiliations
        )

    @extend_schema(
        request={"multipart/form-data": AvatarUploadSerializer}, responses=PersonaSerializer
    )
    @action(detail=True, methods=["post"], url_path="avatar", parser_classes=[MultiPartParser])
    def avatar(self, request: Request, pk: str | None = None) -> Response:
        """Upload its avatar image; `avatar_url` then points to the stored copy."""
        persona = self.get_object()
        # Judged before the body is read: a huge upload is refused without being stored
        # (with room for the multipart framing around the file).
        length = request.META.get("CONTENT_LENGTH") or "0"
        if length.isdigit() and int(length) > services.AVATAR_MAX_BYTES + 64 * 1024:
            services.avatar_size_check(size=int(length))
        data = AvatarUploadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        persona = services.persona_avatar_set(persona=persona, upload=data.validated_data["avatar"])
        return Response(PersonaSerializer(persona, context=self.get_serializer_context()).data)

    @extend_schema(
        request={
            "multipart/form-data": CardUploadSerializer,
            "application/json": OpenApiTypes.OBJECT,
        },
        responses={201: PersonaSerializer},
        description="Create a persona from a character card V2 or V3 (JSON, or a PNG with "
        "the card embedded, whose image becomes its avatar) or a LuminoraCore template: "
        "multipart with `file`, or the card or template itself as the JSON body. A "
        "malformed one is a 400 naming the problem, and nothing is created.",
    )
    @action(
        detail=False,
        methods=["post"],
        url_path="import",
        parser_classes=[MultiPartParser, StrictJSONParser],
    )
    def import_card(self, request: Request) -> Response:
        if request.content_type.startswith("multipart/"):
            # Judged before the body is read (room for the multipart framing).
            length = request.META.get("CONTENT_LENGTH") or "0"
            if length.isdigit() and int(length) > card_services.CARD_MAX_BYTES + 64 * 1024:
                card_services.import_size_check(size=int(length))
            data = CardUploadSerializer(data=request.data)
            data.is_valid(raise_exception=True)
            upload = data.validated_data["file"]
            card_services.import_size_check(size=upload.size)
            draft = card_services.draft_from_file(upload.read())
        else:
            draft = card_services.draft_from_data(request.data)
        persona = card_services.persona_import(owner=request.user, draft=draft)
        return Response(
            PersonaSerializer(persona, context=self.get_serializer_context()).data,
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(
        parameters=[CardQuerySerializer],
        responses={
            (200, "application/json"): CardSerializer,
            (200, "image/png"): OpenApiTypes.BINARY,
        },
        description="The persona as a character card (V3 unless `spec=v2`), as a JSON file "
        "or a PNG with the card embedded (`chara` chunk for V2, `ccv3` for V3), sent as an "
        "attachment.",
    )
    @action(
        detail=True,
        methods=["get"],
        url_path="card",
        content_negotiation_class=QueryFormatIgnored,
    )
    def card(self, request: Request, pk: str | None = None) -> HttpResponse:
        persona = self.get_object()
        query = CardQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        content, content_type, filename = card_services.persona_card(
            persona=persona, spec=query.validated_data["spec"], fmt=query.validated_data["format"]
        )
        response = HttpResponse(content, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


class AssistantViewSet(OwnedViewSet):
    queryset = Assistant.objects.select_related("persona", "model")
    serializer_class = AssistantSerializer


class LLMModelViewSet(OwnedViewSet):
    queryset = LLMModel.objects.all()
    serializer_class = LLMModelSerializer

    @extend_schema(
        request=LLMModelSerializer,
        responses={201: LLMModelSerializer},
        description="Add one model, or an array of models (all or nothing, errors per item). "
        "An array refuses a model its owner already has (same endpoint, model id and key), "
        "naming it; one at a time, the same model may be added again under another name. "
        "A model whose config sets no `context_size` gets the one its server reports.",
    )
    def create(self, request: Request, *args, **kwargs) -> Response:
        many = isinstance(request.data, list)
        if many and not request.data:
            raise ValidationError({"non_field_errors": ["Send at least one model."]})
        serializer = self.get_serializer(data=request.data, many=many)
        if many and not serializer.is_valid():
            raise ValidationError(_errors_per_item(serializer.errors, len(request.data)))
        serializer.is_valid(raise_exception=True)
        items = serializer.validated_data if many else [serializer.validated_data]
        created = llm_models.models_create(owner=request.user, items=items, refuse_duplicates=many)
        output = LLMModelSerializer(created if many else created[0], many=many)
        return Response(output.data, status=status.HTTP_201_CREATED)

    def perform_update(self, serializer: LLMModelSerializer) -> None:
        serializer.instance = llm_models.model_update(
            model=serializer.instance, data=dict(serializer.validated_data)
        )

    @extend_schema(request=None, responses=LLMModelSerializer)
    @action(detail=True, methods=["patch"], url_path="default")
    def default(self, request: Request, pk: str | None = None) -> Response:
        model = llm_models.model_set_default(model=self.get_object())
        return Response(LLMModelSerializer(model).data)

    @extend_schema(request=ModelTestSerializer, responses=ModelTestResultSerializer)
    @action(detail=False, methods=["post"], url_path="test")
    def test(self, request: Request) -> Response:
        """A real round trip to the provider (list models, or a one-token completion), and
        the model's context size as its server reports it (a saved model keeps it unless
        its owner typed one). An endpoint outside LMIX_LLM_ALLOWED_NETWORKS is a 400 that
        says why."""
        data = ModelTestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        params = dict(data.validated_data)
        model = None
        if params.get("id"):
            model = self.get_queryset().filter(pk=params["id"]).first()
            if model is None:
                return Response({"detail": "No such model."}, status=status.HTTP_404_NOT_FOUND)
        result = llm_models.model_test(
            owner=request.user,
            model=model,
            api_endpoint=params.get("api_endpoint", ""),
            api_key=params.get("api_key", ""),
            model_id=params.get("model_id", ""),
            provider=params.get("provider", ""),
        )
        return Response(ModelTestResultSerializer(result).data)

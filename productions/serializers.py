"""Input validation and output shapes of the productions API."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from authoring.models import Assistant, Scenario, World
from lmix.realtime.wire import object_of_strings
from lmix.serializers import OwnedRelatedField

from .models import TURN_TEXT_MAX, Production, Turn


class CastSerializer(serializers.ModelSerializer):
    display_name = serializers.CharField(read_only=True)
    persona = serializers.UUIDField(source="persona_id", read_only=True)
    persona_name = serializers.CharField(source="persona.name", read_only=True)
    avatar_url = serializers.CharField(source="persona.avatar_url", read_only=True)
    model_name = serializers.CharField(source="model.name", read_only=True)
    model_id = serializers.CharField(source="model.model_id", read_only=True)
    provider = serializers.CharField(source="model.provider", read_only=True)

    class Meta:
        model = Assistant
        fields = [
            "id",
            "display_name",
            "persona",
            "persona_name",
            "avatar_url",
            "model_name",
            "model_id",
            "provider",
        ]


DIRECTIVE = {"type": "array", "items": object_of_strings("role", "content")}


@extend_schema_field(DIRECTIVE)
class DirectiveField(serializers.JSONField):
    """Exactly the messages a turn's model was sent."""


class TurnSerializer(serializers.ModelSerializer):
    avatar_url = serializers.SerializerMethodField()
    directive = DirectiveField(read_only=True)  # while the production shows directives

    class Meta:
        model = Turn
        fields = [
            "id",
            "parent",
            "depth",
            "speaker_kind",
            "assistant",
            "speaker_name",
            "avatar_url",
            "content",
            "token_count",
            "attempts",
            "status",
            "error",
            "model_id",
            "prompt_tokens",
            "completion_tokens",
            "latency_ms",
            "created_at",
            "edited_at",
            "directive",
        ]
        read_only_fields = fields
        answer_may_omit = ("directive",)  # config/openapi.py

    def get_avatar_url(self, turn: Turn) -> str:
        assistant = turn.assistant
        return assistant.persona.avatar_url if assistant is not None else ""

    def to_representation(self, turn: Turn) -> dict:
        data = super().to_representation(turn)
        if not self.context.get("show_directive"):
            data.pop("directive")
        return data


class ProductionSerializer(serializers.ModelSerializer):
    world = OwnedRelatedField(queryset=World.objects.all())
    scenario = OwnedRelatedField(queryset=Scenario.objects.all())
    assistants = OwnedRelatedField(many=True, queryset=Assistant.objects.all())
    world_name = serializers.CharField(source="world.name", read_only=True)
    scenario_name = serializers.CharField(source="scenario.name", read_only=True)
    turn_count = serializers.IntegerField(read_only=True, default=0)

    class Meta:
        model = Production
        fields = [
            "id",
            "name",
            "world",
            "scenario",
            "world_name",
            "scenario_name",
            "assistants",
            "show_directive",
            "auto_reply",
            "turn_count",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "created_at", "updated_at"]

    def to_representation(self, production: Production) -> dict:
        data = super().to_representation(production)
        data["assistants"] = [str(member.assistant_id) for member in production.cast.all()]
        return data


class ProductionDetailSerializer(ProductionSerializer):
    cast = serializers.SerializerMethodField()
    turns = serializers.SerializerMethodField()
    head = serializers.UUIDField(source="head_id", read_only=True, allow_null=True)

    class Meta(ProductionSerializer.Meta):
        fields = [
            *ProductionSerializer.Meta.fields,
            "cast",
            "turns",
            "head",
            "autoplay_remaining",
            "event_seq",
        ]
        read_only_fields = [
            *ProductionSerializer.Meta.read_only_fields,
            "autoplay_remaining",
            "event_seq",
        ]

    @extend_schema_field(CastSerializer(many=True))
    def get_cast(self, production: Production) -> list[dict]:
        return CastSerializer(self.context["cast"], many=True).data

    @extend_schema_field(TurnSerializer(many=True))
    def get_turns(self, production: Production) -> list[dict]:
        context = {"show_directive": production.show_directive}
        return TurnSerializer(self.context["turns"], many=True, context=context).data


class HeadSerializer(serializers.Serializer):
    turn = serializers.UUIDField(help_text="The leaf of the branch to continue from.")


class TurnRequestSerializer(serializers.Serializer):
    assistant = serializers.UUIDField(required=False, allow_null=True)
    persona = serializers.UUIDField(
        required=False,
        allow_null=True,
        help_text="Speak as this cast member's persona: `content` is written in its voice.",
    )
    parent = serializers.UUIDField(required=False, allow_null=True)
    content = serializers.CharField(
        required=False,
        max_length=TURN_TEXT_MAX,
        help_text="Written words: a director's note, or a persona's line with `persona`.",
    )

    def validate(self, attrs: dict) -> dict:
        if attrs.get("content") is not None and attrs.get("assistant"):
            raise serializers.ValidationError(
                {"content": ["Written words have no assistant: send one or the other."]}
            )
        if attrs.get("persona") and attrs.get("content") is None:
            raise serializers.ValidationError(
                {"content": ["Write the line to say as this character."]}
            )
        return attrs


class TurnEditSerializer(serializers.Serializer):
    content = serializers.CharField(max_length=TURN_TEXT_MAX)


class TurnDeleteSerializer(serializers.Serializer):
    branch = serializers.ChoiceField(
        choices=["delete", "keep"],
        required=False,
        help_text="For a turn with later turns: delete them too, or keep them.",
    )


class ImpersonateSerializer(serializers.Serializer):
    persona = serializers.UUIDField(help_text="The cast member's persona to draft a line for.")
    parent = serializers.UUIDField(required=False, allow_null=True)
    draft = serializers.UUIDField(
        required=False, help_text="The id its events carry (chosen by the client, or new)."
    )


class DraftSerializer(serializers.Serializer):
    draft = serializers.UUIDField(help_text="Its `draft.token|done|failed` events carry it.")


class AutoplaySerializer(serializers.Serializer):
    count = serializers.IntegerField(min_value=1, max_value=20)
    parent = serializers.UUIDField(required=False, allow_null=True)


class AutoplayStateSerializer(serializers.Serializer):
    autoplay_remaining = serializers.IntegerField()


class ProductionRewindSerializer(serializers.Serializer):
    to = serializers.UUIDField(help_text="The turn of the followed branch to go back to.")
    dry_run = serializers.BooleanField(
        default=False, help_text="Only say what would be undone; change nothing."
    )


class RewoundTurnSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    speaker_name = serializers.CharField()
    excerpt = serializers.CharField(help_text="The start of its text.")


class ProductionRewindAnswerSerializer(serializers.Serializer):
    to = serializers.UUIDField()
    dry_run = serializers.BooleanField()
    head = serializers.UUIDField(help_text="The head now (unchanged by a dry run).")
    restore = serializers.UUIDField(
        help_text="The head before the rewind: `PUT head` with it restores everything."
    )
    turns = RewoundTurnSerializer(many=True, help_text="The turns undone (kept, hidden).")
    state_deltas = serializers.IntegerField(help_text="The cast's state changes they made.")
    memories = serializers.IntegerField(help_text="The cast's memories of them.")

"""Input validation and output shapes of the authoring API."""

import json
from typing import Any
from urllib.parse import urlsplit

import pydantic
from rest_framework import serializers
from rest_framework.relations import PKOnlyObject

from .llm.params import validate_params
from .models import URL_MAX, Affiliation, Assistant, LLMModel, Persona, Provider, Scenario, World

OWNED_READ_ONLY = ("id", "created_at", "updated_at")


def validate_json_object(value: Any) -> dict:
    """A JSON object without NUL characters (PostgreSQL's jsonb refuses them)."""
    if not isinstance(value, dict):
        raise serializers.ValidationError("Must be a JSON object.")
    if "\\u0000" in json.dumps(value):
        raise serializers.ValidationError("Must not contain NUL characters.")
    return value


def validate_model_params(value: Any) -> dict:
    """LLM parameters (temperature, max_tokens, ...) checked before they reach a provider."""
    validate_json_object(value)
    try:
        return validate_params(value)
    except pydantic.ValidationError as error:
        raise serializers.ValidationError(
            [f"{'.'.join(map(str, e['loc'])) or 'config'}: {e['msg']}" for e in error.errors()]
        ) from None


class OwnedRelatedField(serializers.PrimaryKeyRelatedField):
    """A related object's id, resolvable only among the requesting user's own objects."""

    def get_queryset(self):
        request = self.context["request"]
        return super().get_queryset().filter(owner=request.user)


class LLMModelSerializer(serializers.ModelSerializer):
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    provider = serializers.ChoiceField(choices=Provider.choices, required=False)
    api_key = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=1000,
        trim_whitespace=True,
        help_text="Write-only. Omitted or empty keeps the stored key; null clears it.",
    )
    has_api_key = serializers.BooleanField(
        read_only=True, help_text="A key is stored (readable or not)."
    )
    key_unreadable = serializers.BooleanField(
        read_only=True,
        help_text="The stored key no longer decrypts (the server's encryption key changed): "
        "calls fail until the key is entered again.",
    )
    config = serializers.JSONField(required=False, validators=[validate_model_params])

    class Meta:
        model = LLMModel
        fields = [
            "id",
            "name",
            "provider",
            "api_endpoint",
            "api_key",
            "has_api_key",
            "key_unreadable",
            "model_id",
            "config",
            "is_default",
            "created_at",
            "updated_at",
        ]
        read_only_fields = OWNED_READ_ONLY
        validators: list = []  # duplicates are the service's rule, reported per item

    def validate_api_endpoint(self, value: str) -> str:
        value = value.strip()
        if value.startswith("offline://"):
            return value
        try:
            parts = urlsplit(value)
        except ValueError:  # e.g. an unclosed IPv6 bracket
            parts = None
        if parts is None or parts.scheme not in {"http", "https"} or not parts.netloc:
            raise serializers.ValidationError(
                "Enter an http(s) URL such as https://api.openai.com/v1 or http://localhost:11434."
            )
        return value

    def validate_model_id(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("This field may not be blank.")
        return value.strip()


class ModelTestSerializer(serializers.Serializer):
    id = serializers.UUIDField(required=False)
    api_endpoint = serializers.CharField(max_length=URL_MAX, required=False)
    api_key = serializers.CharField(
        max_length=1000, required=False, allow_blank=True, write_only=True
    )
    model_id = serializers.CharField(max_length=200, required=False, allow_blank=True)
    provider = serializers.ChoiceField(choices=Provider.choices, required=False)

    def validate(self, attrs: dict) -> dict:
        if not attrs.get("id") and not attrs.get("api_endpoint"):
            raise serializers.ValidationError(
                {"api_endpoint": ["Give an api_endpoint to test, or the id of a saved model."]}
            )
        if attrs.get("api_endpoint"):
            LLMModelSerializer().validate_api_endpoint(attrs["api_endpoint"])
        return attrs


class ModelTestResultSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    latency_ms = serializers.IntegerField()
    models = serializers.ListField(child=serializers.CharField(), required=False)
    error = serializers.CharField(required=False)


class WorldSerializer(serializers.ModelSerializer):
    class Meta:
        model = World
        fields = ["id", "name", "description", "created_at", "updated_at"]
        read_only_fields = OWNED_READ_ONLY


class ScenarioSerializer(serializers.ModelSerializer):
    class Meta:
        model = Scenario
        fields = ["id", "name", "description", "created_at", "updated_at"]
        read_only_fields = OWNED_READ_ONLY


TRUTH_FIELDS = ["universal_truth", "internal_truth", "external_truth"]


class AffiliationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Affiliation
        fields = ["id", "name", *TRUTH_FIELDS, "created_at", "updated_at"]
        read_only_fields = OWNED_READ_ONLY


class CovertAffiliationsField(serializers.ManyRelatedField):
    """The ids of the groups a persona belongs to covertly, read from its memberships."""

    def get_attribute(self, instance: Persona) -> list[PKOnlyObject]:
        return [PKOnlyObject(m.affiliation_id) for m in instance.memberships.all() if m.covert]


class PersonaSerializer(serializers.ModelSerializer):
    affiliations = OwnedRelatedField(many=True, queryset=Affiliation.objects.all(), required=False)
    covert_affiliations = CovertAffiliationsField(
        child_relation=OwnedRelatedField(queryset=Affiliation.objects.all()),
        required=False,
        help_text="Among `affiliations`: memberships only fellow members of the group see. "
        "Omitted keeps the flags of the memberships that stay.",
    )

    class Meta:
        model = Persona
        fields = [
            "id",
            "name",
            "known_as",
            "avatar_url",
            "style",
            *TRUTH_FIELDS,
            "affiliations",
            "covert_affiliations",
            "created_at",
            "updated_at",
        ]
        read_only_fields = OWNED_READ_ONLY
        extra_kwargs = {
            "known_as": {
                "help_text": "The name other characters know it by; empty: its name. Its real "
                "name only it and fellow members of its covert groups see."
            }
        }


class AssistantSerializer(serializers.ModelSerializer):
    persona = OwnedRelatedField(queryset=Persona.objects.all())
    model = OwnedRelatedField(queryset=LLMModel.objects.all())
    config_override = serializers.JSONField(required=False, validators=[validate_model_params])
    display_name = serializers.CharField(read_only=True)
    persona_name = serializers.CharField(source="persona.name", read_only=True)
    avatar_url = serializers.CharField(source="persona.avatar_url", read_only=True)
    model_name = serializers.CharField(source="model.name", read_only=True)

    class Meta:
        model = Assistant
        fields = [
            "id",
            "persona",
            "model",
            "name",
            "config_override",
            "display_name",
            "persona_name",
            "avatar_url",
            "model_name",
            "created_at",
            "updated_at",
        ]
        read_only_fields = OWNED_READ_ONLY
        validators: list = []

    def validate(self, attrs: dict) -> dict:
        persona = attrs.get("persona", getattr(self.instance, "persona", None))
        model = attrs.get("model", getattr(self.instance, "model", None))
        taken = Assistant.objects.filter(persona=persona, model=model)
        if self.instance is not None:
            taken = taken.exclude(pk=self.instance.pk)
        if taken.exists():
            raise serializers.ValidationError(
                {"model": ["An assistant already pairs this persona with this model."]}
            )
        return attrs


class UserSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    username = serializers.CharField(read_only=True)
    email = serializers.EmailField(read_only=True)

"""Serializers the core's APIs share: JSON and model-parameter validation, related fields
limited to the caller's own rows, LLM models and their connection test, the user."""

import json
from typing import Any
from urllib.parse import urlsplit

import pydantic
from rest_framework import serializers

from .llm.discovery import context_size_unknown
from .llm.params import validate_params
from .models import URL_MAX, LLMModel, Provider

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
        # Per setting ({"temperature": [...]}), so a form shows each beside its field.
        problems: dict[str, list[str]] = {}
        for e in error.errors():
            field = ".".join(map(str, e["loc"])) or "non_field_errors"
            problems.setdefault(field, []).append(f"{e['msg']}.")
        raise serializers.ValidationError(problems) from None


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
    context_size_unknown = serializers.SerializerMethodField(
        help_text="A local server that did not report the model's context size, and none "
        "is set: enter it as config.context_size (prompts otherwise assume 8,192 tokens)."
    )

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
            "context_size_unknown",
            "is_default",
            "created_at",
            "updated_at",
        ]
        read_only_fields = OWNED_READ_ONLY
        validators: list = []  # duplicates are the service's rule, reported per item

    def get_context_size_unknown(self, model: LLMModel) -> bool:
        config = model.config if isinstance(model.config, dict) else {}
        return context_size_unknown(model.provider) and not config.get("context_size")

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
    context_size = serializers.IntegerField(
        allow_null=True,
        help_text="The model's context size as its server reports it (or a hosted model's "
        "known one); null when unknown.",
    )
    context_size_hint = serializers.CharField(
        required=False,
        help_text="Present when a local server was reached but did not report its context "
        "size: the form asks for it.",
    )


class UserSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    username = serializers.CharField(read_only=True)
    email = serializers.EmailField(read_only=True)

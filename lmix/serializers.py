"""Input validation and output shapes of the authoring API."""

import json
from typing import Any
from urllib.parse import urlsplit

import pydantic
from rest_framework import serializers
from rest_framework.relations import PKOnlyObject

from productions.prompt_template import TEMPLATE_MAX, template_problems

from .llm.discovery import context_size_unknown
from .llm.params import validate_params
from .models import (
    TEXT_MAX,
    URL_MAX,
    Affiliation,
    Assistant,
    LLMModel,
    LoreEntry,
    LoreLayer,
    Persona,
    Provider,
    Scenario,
    World,
)
from .services import avatar_is_uploaded

OWNED_READ_ONLY = ("id", "created_at", "updated_at")
LORE_SCAN_DEPTH_MAX = 50
LORE_BUDGET_MAX = 20_000
LORE_KEY_MAX = 100
LORE_KEYS_MAX = 30


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


def validate_prompt_template(value: str) -> str:
    """A system prompt template whose placeholders are all known, each enforced one once."""
    problems = template_problems(value)
    if problems:
        raise serializers.ValidationError(problems)
    return value


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


class WorldSerializer(serializers.ModelSerializer):
    lore_scan_depth = serializers.IntegerField(
        min_value=0,
        max_value=LORE_SCAN_DEPTH_MAX,
        required=False,
        help_text="How many recent turns are searched for lore keys (0: the lorebook is off).",
    )
    lore_budget = serializers.IntegerField(
        min_value=0,
        max_value=LORE_BUDGET_MAX,
        required=False,
        help_text="The most tokens of triggered lore entries one prompt may hold.",
    )

    class Meta:
        model = World
        fields = [
            "id",
            "name",
            "description",
            "lore_scan_depth",
            "lore_budget",
            "created_at",
            "updated_at",
        ]
        read_only_fields = OWNED_READ_ONLY


class LoreEntrySerializer(serializers.ModelSerializer):
    keys = serializers.ListField(
        child=serializers.CharField(max_length=LORE_KEY_MAX, allow_blank=True),
        min_length=1,
        max_length=LORE_KEYS_MAX,
        help_text="Words or phrases; the entry is called up when one is mentioned (whole "
        "word, any case).",
    )
    content = serializers.CharField(max_length=TEXT_MAX)
    layer = serializers.ChoiceField(choices=LoreLayer.choices, required=False)
    affiliation = OwnedRelatedField(
        queryset=Affiliation.objects.all(),
        required=False,
        allow_null=True,
        help_text="For the affiliation layer: the group whose members (covert ones too) know it.",
    )
    persona = OwnedRelatedField(
        queryset=Persona.objects.all(),
        required=False,
        allow_null=True,
        help_text="For the persona layer: the one persona who knows it.",
    )
    priority = serializers.IntegerField(min_value=-100, max_value=100, required=False)

    class Meta:
        model = LoreEntry
        fields = [
            "id",
            "world",
            "keys",
            "content",
            "enabled",
            "layer",
            "affiliation",
            "persona",
            "priority",
            "created_at",
            "updated_at",
        ]
        read_only_fields = (*OWNED_READ_ONLY, "world")

    def validate_keys(self, value: list[str]) -> list[str]:
        keys: dict[str, str] = {}
        for key in value:
            key = " ".join(key.split())
            if key:
                keys.setdefault(key.lower(), key)  # one of each, whatever its case
        if not keys:
            raise serializers.ValidationError("Give at least one keyword.")
        return list(keys.values())


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


TAG_MAX = 40
TAGS_MAX = 20


class PersonaSerializer(serializers.ModelSerializer):
    avatar_url = serializers.CharField(
        max_length=URL_MAX,
        required=False,
        allow_blank=True,
        help_text="An http(s) image URL, or the address `POST /api/personas/{id}/avatar` "
        "gave an uploaded image.",
    )
    tags = serializers.ListField(
        child=serializers.CharField(max_length=TAG_MAX, allow_blank=True),
        max_length=TAGS_MAX,
        required=False,
        help_text=f"Short labels for finding it (at most {TAGS_MAX}, {TAG_MAX} characters "
        "each); blanks and repeats (in any case) are dropped.",
    )
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
            "greeting",
            "example_dialogue",
            "tags",
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
            },
            "greeting": {
                "help_text": "Its first message: the opening turn of a production it starts "
                "(regenerating that turn asks its model instead)."
            },
            "example_dialogue": {
                "help_text": "Sample exchanges showing its voice; only its own prompt reads them."
            },
        }

    def validate_avatar_url(self, value: str) -> str:
        value = value.strip()
        if not value or avatar_is_uploaded(value):
            return value
        try:
            parts = urlsplit(value)
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in {"http", "https"} or not parts.netloc:
            raise serializers.ValidationError(
                "Enter an http(s) image URL, or upload an image instead."
            )
        return value

    def validate_tags(self, value: list[str]) -> list[str]:
        tags: dict[str, str] = {}
        for tag in value:
            tag = " ".join(tag.split())  # one space between words, none around
            if tag:
                tags.setdefault(tag.casefold(), tag)
        return list(tags.values())


class AssistantSerializer(serializers.ModelSerializer):
    persona = OwnedRelatedField(queryset=Persona.objects.all())
    model = OwnedRelatedField(queryset=LLMModel.objects.all())
    config_override = serializers.JSONField(required=False, validators=[validate_model_params])
    system_prompt_template = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=TEMPLATE_MAX,
        validators=[validate_prompt_template],
        help_text="Its system prompt with {{char}}, {{user}}, {{world}}, {{scenario}}, "
        "{{knowledge}} and {{lore}}; empty: the default. The knowledge and lore are always "
        "included, once.",
    )
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
            "system_prompt_template",
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


class SamplerPresetSerializer(serializers.Serializer):
    name = serializers.CharField()
    params = serializers.DictField(child=serializers.FloatField())


class PlaceholderSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()


class PromptControlsSerializer(serializers.Serializer):
    presets = SamplerPresetSerializer(many=True)
    default_template = serializers.CharField()
    placeholders = PlaceholderSerializer(many=True)


class UserSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    username = serializers.CharField(read_only=True)
    email = serializers.EmailField(read_only=True)


class AvatarUploadSerializer(serializers.Serializer):
    avatar = serializers.FileField(
        help_text="A PNG, JPEG, WebP or GIF image of at most 2 MiB (multipart/form-data)."
    )

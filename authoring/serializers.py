"""Input validation and output shapes of the authoring API."""

from urllib.parse import urlsplit

from rest_framework import serializers
from rest_framework.relations import PKOnlyObject

from lmix.models import TEXT_MAX, URL_MAX, LLMModel
from lmix.serializers import OWNED_READ_ONLY, OwnedRelatedField, validate_model_params

from .models import Affiliation, Assistant, LoreEntry, LoreLayer, Persona, Scenario, World
from .prompt_template import TEMPLATE_MAX, template_problems
from .services import avatar_is_uploaded

LORE_SCAN_DEPTH_MAX = 50
LORE_BUDGET_MAX = 20_000
LORE_KEY_MAX = 100
LORE_KEYS_MAX = 30


def validate_prompt_template(value: str) -> str:
    """A system prompt template whose placeholders are all known, each enforced one once."""
    problems = template_problems(value)
    if problems:
        raise serializers.ValidationError(problems)
    return value


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
            "imported",
            "created_at",
            "updated_at",
        ]
        read_only_fields = (*OWNED_READ_ONLY, "imported")
        extra_kwargs = {
            "imported": {
                "help_text": "What an imported character card or LuminoraCore template held "
                "that no other field does (`card`: system prompt, creator notes, alternate "
                "greetings, character book, extensions…; `luminoracore`: the template's "
                "traits, rules…), given back on export. Empty for a persona made here."
            },
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


class AvatarUploadSerializer(serializers.Serializer):
    avatar = serializers.FileField(
        help_text="A PNG, JPEG, WebP or GIF image of at most 2 MiB (multipart/form-data)."
    )


class CardUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="A character card V2 or V3 (.json, or .png with the card in its `chara` or "
        "`ccv3` chunk), or a LuminoraCore template (.json); at most 8 MiB."
    )


class CardQuerySerializer(serializers.Serializer):
    spec = serializers.ChoiceField(choices=[("v2", "V2"), ("v3", "V3")], default="v3")
    format = serializers.ChoiceField(
        choices=[("json", "JSON"), ("png", "PNG")],
        default="json",
        help_text="png: the avatar (a stored PNG, else a plain image) with the card embedded.",
    )


class CardSerializer(serializers.Serializer):
    """A character card as exported (its `data` follows the spec it names)."""

    spec = serializers.ChoiceField(choices=[("chara_card_v2", "V2"), ("chara_card_v3", "V3")])
    spec_version = serializers.CharField()
    data = serializers.DictField(help_text="The card's fields, as its spec defines them.")

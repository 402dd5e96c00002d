"""Input validation of the frames API (outputs are built in selectors.py)."""

from rest_framework import serializers

from authoring.models import Assistant
from lmix.models import LLMModel
from lmix.serializers import OwnedRelatedField

from .frames import MAX_TEMPO
from .models import (
    CATEGORY_MAX,
    CONTENT_FIELD_MAX,
    CONTENT_FIELDS_MAX,
    GM_TEXT_MAX,
    LIQUID_MAX,
    SKILL_TEXT_MAX,
    TALK_MAX,
    AiReacts,
    ContentType,
    Face,
    FrameMode,
    LeakGuard,
    LiquidVisibility,
    SeatController,
)

SECOND_OPINION = (
    "A structured call on the frame's model backs the secret guard's word test (one more "
    "call for an outcome while characters' secrets are left unflagged)."
)


class FrameCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    mode = serializers.ChoiceField(choices=FrameMode.choices, default=FrameMode.PER_CHARACTER)
    tempo = serializers.FloatField(min_value=0, max_value=MAX_TEMPO, default=1.0)
    liquid_visibility = serializers.ChoiceField(
        choices=LiquidVisibility.choices, default=LiquidVisibility.ALL
    )
    leak_guard = serializers.ChoiceField(choices=LeakGuard.choices, default=LeakGuard.HOLD)
    second_opinion = serializers.BooleanField(default=False, help_text=SECOND_OPINION)
    open_seats = serializers.ListField(
        child=serializers.UUIDField(), required=False, default=list, max_length=100
    )
    soft_model = OwnedRelatedField(queryset=LLMModel.objects.all(), required=False, allow_null=True)
    medium_model = OwnedRelatedField(
        queryset=LLMModel.objects.all(), required=False, allow_null=True
    )


class FrameUpdateSerializer(serializers.Serializer):
    """PATCH /api/frames/{id}: any of these; a model null goes back to the default rule."""

    name = serializers.CharField(max_length=200, required=False)
    tempo = serializers.FloatField(min_value=0, max_value=MAX_TEMPO, required=False)
    liquid_visibility = serializers.ChoiceField(choices=LiquidVisibility.choices, required=False)
    player_faces = serializers.ListField(
        child=serializers.ChoiceField(choices=[Face.AUTHOR, Face.DESIGNER]),
        required=False,
        max_length=2,
        help_text="The faces besides player that players may write in (the GM: every one).",
    )
    leak_guard = serializers.ChoiceField(choices=LeakGuard.choices, required=False)
    second_opinion = serializers.BooleanField(required=False, help_text=SECOND_OPINION)
    soft_model = OwnedRelatedField(queryset=LLMModel.objects.all(), required=False, allow_null=True)
    medium_model = OwnedRelatedField(
        queryset=LLMModel.objects.all(), required=False, allow_null=True
    )


class FrameCloseSerializer(serializers.Serializer):
    epilogue = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Write each player's character an epilogue once the scene is closed.",
    )


class FrameJoinSerializer(serializers.Serializer):
    invite_code = serializers.CharField(max_length=64)
    seat = serializers.UUIDField()


class SeatLeaveSerializer(serializers.Serializer):
    seat = serializers.UUIDField()


class SeatUpdateSerializer(serializers.Serializer):
    controller = serializers.ChoiceField(choices=SeatController.choices, required=False)
    assistant = OwnedRelatedField(queryset=Assistant.objects.all(), required=False, allow_null=True)
    ai_reacts = serializers.ChoiceField(
        choices=AiReacts.choices,
        required=False,
        error_messages={
            "invalid_choice": "Use always (anything it witnesses), addressed (when named or "
            "addressed) or gm (only when you advance the frame)."
        },
    )


class LiquidSubmitSerializer(serializers.Serializer):
    seat = serializers.UUIDField(
        required=False,
        allow_null=True,
        help_text="The character it is for: needed for the player face, ignored for the others.",
    )
    content = serializers.CharField(max_length=LIQUID_MAX)
    face = serializers.ChoiceField(choices=Face.choices, default=Face.PLAYER)

    def validate(self, attrs: dict) -> dict:
        if attrs["face"] == Face.PLAYER and not attrs.get("seat"):
            raise serializers.ValidationError({"seat": ["Which character is it for?"]})
        return attrs


class LiquidEditSerializer(serializers.Serializer):
    content = serializers.CharField(max_length=LIQUID_MAX)


class TalkSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=TALK_MAX)


class GmNarrationSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=GM_TEXT_MAX)


class GmNoteSerializer(serializers.Serializer):
    seat = serializers.UUIDField(help_text="The seat whose character alone learns it.")
    text = serializers.CharField(max_length=GM_TEXT_MAX)


class SpectatorsSerializer(serializers.Serializer):
    enabled = serializers.BooleanField()


class SkillWriteSerializer(serializers.Serializer):
    """POST /api/skills (a user's own skill, or with `frame` a frame's, by its GM) and
    PATCH /api/skills/{id} (any of name, text, face, category)."""

    frame = serializers.UUIDField(required=False, allow_null=True)
    face = serializers.ChoiceField(choices=Face.choices)
    category = serializers.SlugField(
        max_length=CATEGORY_MAX,
        error_messages={"invalid": "Use lowercase letters, digits and hyphens, such as 'tone'."},
    )
    name = serializers.CharField(max_length=200)
    text = serializers.CharField(max_length=SKILL_TEXT_MAX)

    def validate_category(self, value: str) -> str:
        return value.lower()


class ContentWriteSerializer(serializers.Serializer):
    """POST /api/frames/{id}/content (the GM adds an entry); PATCH changes any of it."""

    type = serializers.ChoiceField(choices=ContentType.choices)
    name = serializers.CharField(max_length=200)
    data = serializers.DictField(
        child=serializers.CharField(max_length=CONTENT_FIELD_MAX, allow_blank=True),
        help_text="Its details by field (`description` is needed), as text.",
    )
    pscale = serializers.IntegerField(min_value=-3, max_value=2, default=0)

    def validate_data(self, value: dict[str, str]) -> dict[str, str]:
        if len(value) > CONTENT_FIELDS_MAX:
            raise serializers.ValidationError(f"At most {CONTENT_FIELDS_MAX} fields.")
        if any(not key.strip() or len(key) > 40 for key in value):
            raise serializers.ValidationError("Field names are 1 to 40 characters.")
        return value


# An outcome's text as the GM edits it: a little room over the bones' own bound
# (synthesis/outcomes.py says when a text is too long).
def _outcome_text() -> serializers.CharField:
    return serializers.CharField(max_length=2000, allow_blank=True, trim_whitespace=False)


class OutcomeEditSerializer(serializers.Serializer):
    """PATCH /api/outcomes/{id}: any of the outcome's texts, in order."""

    actions = serializers.ListField(
        child=_outcome_text(),
        required=False,
        max_length=50,
        help_text="Each resolved action's text (`actions_resolved[].action`), as many as it has.",
    )
    world_facts = serializers.ListField(
        child=_outcome_text(), required=False, max_length=50, help_text="Its world facts."
    )
    interrupts = serializers.ListField(
        child=_outcome_text(),
        required=False,
        max_length=50,
        help_text="Each interrupt's reason (`interrupts[].reason`), as many as it has.",
    )


class EdgeEditSerializer(serializers.Serializer):
    target = serializers.UUIDField(help_text="The other character's seat.")
    affinity = serializers.IntegerField(min_value=0, max_value=100, required=False)
    trust = serializers.IntegerField(min_value=0, max_value=100, required=False)
    knowledge = serializers.CharField(
        max_length=300, required=False, help_text="A fact it now knows about the other."
    )


class StateEditSerializer(serializers.Serializer):
    """The GM's edit of a seat's state: new values (each change stored as a delta)."""

    mood = serializers.CharField(max_length=20, required=False, help_text="A mood's name.")
    intensity = serializers.FloatField(min_value=0.0, max_value=1.0, required=False)
    fact = serializers.CharField(max_length=300, required=False, help_text="A fact it learned.")
    edges = EdgeEditSerializer(many=True, required=False, max_length=24)

    def validate(self, attrs: dict) -> dict:
        if not attrs:
            raise serializers.ValidationError("Nothing to change.")
        return attrs


class MemoryEditSerializer(serializers.Serializer):
    """The GM's edit of a memory (audited): pin, significance, text, or removal (kept,
    hidden from its character's prompts and the state drawer)."""

    pinned = serializers.BooleanField(required=False)
    significance = serializers.IntegerField(min_value=0, max_value=3, required=False)
    text = serializers.CharField(max_length=600, required=False)
    removed = serializers.BooleanField(required=False)

    def validate(self, attrs: dict) -> dict:
        if not attrs:
            raise serializers.ValidationError("Nothing to change.")
        return attrs

"""Authoring data: LLM models, worlds, scenarios, affiliations, personas, assistants, LLM calls."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from . import crypto

NAME_MAX = 200
TEXT_MAX = 20_000
URL_MAX = 2_000

OFFLINE_ENDPOINT = "offline://narrator"


class Provider(models.TextChoices):
    OPENAI = "openai", "OpenAI"
    OPENAI_COMPATIBLE = "openai_compatible", "OpenAI-compatible"
    OLLAMA = "ollama", "Ollama"
    ANTHROPIC = "anthropic", "Anthropic"
    OFFLINE = "offline", "Offline narrator"


class Owned(models.Model):
    """Every authoring object belongs to one user, who alone may see it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
        ordering = ["-created_at"]


class LLMModel(Owned):
    """An LLM configuration: where to call, with which key, which model id and defaults."""

    name = models.CharField(max_length=NAME_MAX)
    provider = models.CharField(max_length=32, choices=Provider.choices)
    api_endpoint = models.CharField(max_length=URL_MAX)
    api_key_encrypted = models.TextField(blank=True, default="")
    model_id = models.CharField(max_length=NAME_MAX)
    config = models.JSONField(default=dict, blank=True)
    is_default = models.BooleanField(default=False)

    class Meta(Owned.Meta):
        verbose_name = "LLM model"
        constraints = [
            models.UniqueConstraint(
                fields=["owner"], condition=Q(is_default=True), name="one_default_model_per_user"
            ),
            # One endpoint and model id may be added many times (other parameters), told
            # apart by name.
            models.UniqueConstraint(fields=["owner", "name"], name="unique_model_name"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def api_key(self) -> str:
        """The decrypted key; "" when none is stored.

        Raises:
            crypto.UnreadableSecret: a key is stored but no longer decrypts (the server's
                encryption key changed); its owner has to enter it again.
        """
        return crypto.decrypt(self.api_key_encrypted)

    @api_key.setter
    def api_key(self, value: str) -> None:
        self.api_key_encrypted = crypto.encrypt(value or "")

    @property
    def has_api_key(self) -> bool:
        """Whether a key is stored, readable or not."""
        return bool(self.api_key_encrypted)

    @property
    def key_unreadable(self) -> bool:
        """Whether a key is stored that no longer decrypts."""
        return not crypto.is_readable(self.api_key_encrypted)


class World(Owned):
    """Immutable laws and setting, shared by every character."""

    name = models.CharField(max_length=NAME_MAX)
    description = models.TextField(max_length=TEXT_MAX)
    # The lorebook: how many recent turns are searched for its keys, and how many tokens of
    # triggered entries one prompt may hold.
    lore_scan_depth = models.PositiveSmallIntegerField(default=4)
    lore_budget = models.PositiveIntegerField(default=500)

    def __str__(self) -> str:
        return self.name


class Scenario(Owned):
    """The public starting situation; never holds secrets."""

    name = models.CharField(max_length=NAME_MAX)
    description = models.TextField(max_length=TEXT_MAX)

    def __str__(self) -> str:
        return self.name


class Truths(Owned):
    """Three layers of truth: public, insiders only, and how outsiders see it."""

    name = models.CharField(max_length=NAME_MAX)
    universal_truth = models.TextField(max_length=TEXT_MAX, blank=True, default="")
    internal_truth = models.TextField(max_length=TEXT_MAX, blank=True, default="")
    external_truth = models.TextField(max_length=TEXT_MAX, blank=True, default="")

    class Meta(Owned.Meta):
        abstract = True

    def __str__(self) -> str:
        return self.name


class Affiliation(Truths):
    """A group; members share its internal truth."""


class Persona(Truths):
    """A character template: truths, avatar, affiliations and optional style traits."""

    # The name other characters know it by; its real `name` only itself and fellow members
    # of a covert group it belongs to see (DESIGN.md §3). Empty: everyone sees `name`.
    known_as = models.CharField(max_length=NAME_MAX, blank=True, default="")
    avatar_url = models.URLField(max_length=URL_MAX, blank=True, default="")
    style = models.TextField(max_length=TEXT_MAX, blank=True, default="")
    # The character's first message, offered as its opening turn.
    greeting = models.TextField(max_length=TEXT_MAX, blank=True, default="")
    # Sample exchanges showing its voice; only its own prompt ever reads them.
    example_dialogue = models.TextField(max_length=TEXT_MAX, blank=True, default="")
    # Short labels for finding it in the list ("villain", "noir"), each once in any case.
    tags = models.JSONField(default=list, blank=True)
    affiliations = models.ManyToManyField(
        Affiliation, through="Membership", related_name="members", blank=True
    )


class Membership(models.Model):
    """A persona's membership in an affiliation; a covert one only fellow members see."""

    persona = models.ForeignKey(Persona, on_delete=models.CASCADE, related_name="memberships")
    affiliation = models.ForeignKey(
        Affiliation, on_delete=models.CASCADE, related_name="memberships"
    )
    covert = models.BooleanField(default=False)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["joined_at"]
        constraints = [
            models.UniqueConstraint(fields=["persona", "affiliation"], name="unique_membership")
        ]

    def __str__(self) -> str:
        return f"{self.persona} in {self.affiliation}"


class Assistant(Owned):
    """A persona paired with a model (plus parameter overrides): an AI that plays the persona."""

    persona = models.ForeignKey(Persona, on_delete=models.CASCADE, related_name="assistants")
    model = models.ForeignKey(LLMModel, on_delete=models.CASCADE, related_name="assistants")
    name = models.CharField(max_length=NAME_MAX, blank=True, default="")
    config_override = models.JSONField(default=dict, blank=True)
    # Its system prompt, with placeholders (productions/prompt_template.py); "" the default.
    system_prompt_template = models.TextField(max_length=TEXT_MAX, blank=True, default="")

    class Meta(Owned.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "persona", "model"], name="one_assistant_per_persona_model"
            )
        ]

    def __str__(self) -> str:
        return self.display_name

    @property
    def display_name(self) -> str:
        return self.name or self.persona.name


class LoreLayer(models.TextChoices):
    """Who may know a lore entry (DESIGN.md §3)."""

    UNIVERSAL = "universal", "Everyone"
    AFFILIATION = "affiliation", "Members of one affiliation"
    PERSONA = "persona", "One persona"


class LoreEntry(Owned):
    """A world entry added to a prompt when the recent conversation mentions one of its
    keys, and only to a speaker who may know it."""

    world = models.ForeignKey(World, on_delete=models.CASCADE, related_name="lore")
    keys = models.JSONField(default=list)  # words or phrases, matched whole, any case
    content = models.TextField(max_length=TEXT_MAX)
    enabled = models.BooleanField(default=True)
    layer = models.CharField(max_length=16, choices=LoreLayer.choices, default="universal")
    # Deleting the group or persona deletes the entry: left without it, it would be public.
    affiliation = models.ForeignKey(
        Affiliation, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    persona = models.ForeignKey(
        Persona, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # Higher first when the budget cannot hold every triggered entry.
    priority = models.SmallIntegerField(default=0)

    class Meta(Owned.Meta):
        verbose_name = "lore entry"
        verbose_name_plural = "lore entries"
        ordering = ["-priority", "created_at"]
        constraints = [
            # The layer names exactly the one group or persona it is restricted to.
            models.CheckConstraint(
                condition=(
                    Q(layer="universal", affiliation__isnull=True, persona__isnull=True)
                    | Q(layer="affiliation", affiliation__isnull=False, persona__isnull=True)
                    | Q(layer="persona", affiliation__isnull=True, persona__isnull=False)
                ),
                name="lore_layer_matches_restriction",
            )
        ]

    def __str__(self) -> str:
        return ", ".join(self.keys) or "(no keys)"


class LLMCall(models.Model):
    """One recorded provider call, for cost and failure diagnostics."""

    id = models.BigAutoField(primary_key=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    llm_model = models.ForeignKey(
        LLMModel, null=True, blank=True, on_delete=models.SET_NULL, related_name="calls"
    )
    provider = models.CharField(max_length=32)
    model_id = models.CharField(max_length=NAME_MAX)
    purpose = models.CharField(max_length=64)
    # What the call was for, when it belongs to a record: "pass:<id>" for a frame's pass.
    subject = models.CharField(max_length=64, blank=True, default="", db_index=True)
    kind = models.CharField(max_length=16)  # complete / stream / structured / list_models
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    # The parameters the call was made with (validated, before a provider drops any).
    params = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Empty while the call runs (and forever for a call cut off by a dead worker).
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "LLM call"

    def __str__(self) -> str:
        return f"{self.purpose} on {self.model_id}"

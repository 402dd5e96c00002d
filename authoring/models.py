"""Authoring data: worlds and their lore, scenarios, affiliations, personas and their
memberships, assistants (a persona played by a model). Born in lmix/ (its tables keep
their names; authoring/migrations/0001 moved them)."""

from django.db import models
from django.db.models import Q

from lmix.models import NAME_MAX, TEXT_MAX, URL_MAX, LLMModel, Owned


class World(Owned):
    """Immutable laws and setting, shared by every character."""

    name = models.CharField(max_length=NAME_MAX)
    description = models.TextField(max_length=TEXT_MAX)
    # The lorebook: how many recent turns are searched for its keys, and how many tokens of
    # triggered entries one prompt may hold.
    lore_scan_depth = models.PositiveSmallIntegerField(default=4)
    lore_budget = models.PositiveIntegerField(default=500)

    class Meta(Owned.Meta):
        db_table = "lmix_world"

    def __str__(self) -> str:
        return self.name


class Scenario(Owned):
    """The public starting situation; never holds secrets."""

    name = models.CharField(max_length=NAME_MAX)
    description = models.TextField(max_length=TEXT_MAX)

    class Meta(Owned.Meta):
        db_table = "lmix_scenario"

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

    class Meta(Truths.Meta):
        db_table = "lmix_affiliation"


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
    # What an imported character card or LuminoraCore template holds that no column does
    # (its system prompt, alternate greetings, character book, extensions, behavioural
    # rules…), kept so that exporting gives it back and the prompt can use its instructions
    # (authoring/cards.py, authoring/luminora.py).
    imported = models.JSONField(default=dict, blank=True)
    affiliations = models.ManyToManyField(
        Affiliation, through="Membership", related_name="members", blank=True
    )

    class Meta(Truths.Meta):
        db_table = "lmix_persona"


class Membership(models.Model):
    """A persona's membership in an affiliation; a covert one only fellow members see."""

    persona = models.ForeignKey(Persona, on_delete=models.CASCADE, related_name="memberships")
    affiliation = models.ForeignKey(
        Affiliation, on_delete=models.CASCADE, related_name="memberships"
    )
    covert = models.BooleanField(default=False)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "lmix_membership"
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
        db_table = "lmix_assistant"
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
        db_table = "lmix_loreentry"
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

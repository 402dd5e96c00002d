"""Django admin for authoring: search, filters, and the membership inline on personas."""

from django.contrib import admin

from .models import Affiliation, Assistant, LoreEntry, Membership, Persona, Scenario, World

OWNED_FILTERS = ("owner", "created_at")


@admin.register(World, Scenario)
class DescribedAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "created_at")
    list_filter = OWNED_FILTERS
    search_fields = ("name", "description", "owner__username")


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ("affiliation",)
    readonly_fields = ("joined_at",)


@admin.register(Affiliation)
class AffiliationAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "created_at")
    list_filter = OWNED_FILTERS
    search_fields = ("name", "universal_truth", "external_truth", "owner__username")


@admin.register(Persona)
class PersonaAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "created_at")
    list_filter = ("affiliations", *OWNED_FILTERS)
    search_fields = ("name", "universal_truth", "external_truth", "owner__username")
    inlines = [MembershipInline]


@admin.register(Assistant)
class AssistantAdmin(admin.ModelAdmin):
    list_display = ("display_name", "persona", "model", "owner")
    list_filter = ("model__provider", *OWNED_FILTERS)
    search_fields = ("name", "persona__name", "model__name", "owner__username")
    autocomplete_fields = ("persona", "model")
    list_select_related = ("persona", "model")


@admin.register(LoreEntry)
class LoreEntryAdmin(admin.ModelAdmin):
    """The database refuses an entry whose layer and group or persona disagree."""

    list_display = ("__str__", "world", "layer", "enabled", "priority", "owner")
    list_filter = ("layer", "enabled", *OWNED_FILTERS)
    search_fields = ("content", "world__name", "owner__username")
    autocomplete_fields = ("affiliation", "persona")
    list_select_related = ("world",)

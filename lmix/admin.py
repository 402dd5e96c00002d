"""Django admin for authoring: search, filters, and the membership inline on personas."""

from django import forms
from django.contrib import admin

from .models import (
    Affiliation,
    Assistant,
    LLMCall,
    LLMModel,
    LoreEntry,
    Membership,
    Persona,
    Scenario,
    World,
)

OWNED_FILTERS = ("owner", "created_at")


class LLMModelForm(forms.ModelForm):
    """The key is write-only here too: typing one replaces it, leaving it empty keeps it."""

    api_key = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="Write-only. Leave empty to keep the stored key.",
    )
    clear_api_key = forms.BooleanField(required=False)

    class Meta:
        model = LLMModel
        fields = ["owner", "name", "provider", "api_endpoint", "model_id", "config", "is_default"]

    def save(self, commit: bool = True) -> LLMModel:
        model = super().save(commit=False)
        if self.cleaned_data.get("clear_api_key"):
            model.api_key = ""
        elif self.cleaned_data.get("api_key"):
            model.api_key = self.cleaned_data["api_key"]
        if commit:
            model.save()
        return model


@admin.register(LLMModel)
class LLMModelAdmin(admin.ModelAdmin):
    form = LLMModelForm
    list_display = (
        "name",
        "provider",
        "model_id",
        "api_endpoint",
        "has_api_key",
        "is_default",
        "owner",
    )
    list_filter = ("provider", "is_default", *OWNED_FILTERS)
    search_fields = ("name", "model_id", "api_endpoint", "owner__username")

    @admin.display(boolean=True)
    def has_api_key(self, obj: LLMModel) -> bool:
        return obj.has_api_key


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


class ViewOnly:
    """For a ModelAdmin or an inline of rows that only their services may change (they keep
    lifecycles, leases and sockets in step): an administrator reads them, changes nothing."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(LLMCall)
class LLMCallAdmin(admin.ModelAdmin):
    list_display = (
        "created_at",
        "purpose",
        "kind",
        "model_id",
        "prompt_tokens",
        "completion_tokens",
        "latency_ms",
        "error",
    )
    list_filter = ("purpose", "kind", "provider")
    search_fields = ("model_id", "purpose", "error")
    readonly_fields = [f.name for f in LLMCall._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

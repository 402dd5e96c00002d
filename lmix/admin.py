"""Django admin for LLM models (keys write-only) and the record of LLM calls; `ViewOnly` for
rows only their services may change."""

from django import forms
from django.contrib import admin

from .models import LLMCall, LLMModel

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

"""Django admin for productions and their turns."""

from django.contrib import admin

from .models import CastMember, Production, Turn


class CastInline(admin.TabularInline):
    model = CastMember
    extra = 1
    autocomplete_fields = ("assistant",)


@admin.register(Production)
class ProductionAdmin(admin.ModelAdmin):
    list_display = ("name", "world", "scenario", "show_directive", "owner", "created_at")
    list_filter = ("show_directive", "owner")
    search_fields = ("name", "world__name", "scenario__name", "owner__username")
    inlines = [CastInline]
    readonly_fields = ("head", "event_seq", "autoplay_remaining")


@admin.register(Turn)
class TurnAdmin(admin.ModelAdmin):
    list_display = ("speaker_name", "production", "status", "depth", "model_id", "created_at")
    list_filter = ("status", "speaker_kind")
    search_fields = ("content", "speaker_name", "production__name")
    raw_id_fields = ("parent", "production", "assistant")

"""Django admin for productions and their turns, and (to read) frames and their seats."""

from django.contrib import admin

from lmix.admin import ViewOnly

from .models import CastMember, Frame, Production, Seat, Turn


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


class SeatInline(ViewOnly, admin.TabularInline):
    model = Seat
    fields = ("position", "persona", "controller", "user", "assistant")
    extra = 0


@admin.register(Frame)
class FrameAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ("name", "production", "owner", "status", "mode", "tempo", "seq", "created_at")
    list_filter = ("status", "mode")
    search_fields = ("name", "production__name", "owner__username")
    list_select_related = ("production", "owner")
    exclude = ("invite_code", "spectator_code")  # keys to the table, not for reading here
    inlines = [SeatInline]

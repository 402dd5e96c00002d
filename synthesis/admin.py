"""Django admin for frames, their seats and what happens in them: read only, as their
services alone keep windows, passes, outcomes and sockets in step (a change here would
reach no player). Skills are the exception: an administrator edits the platform skills'
text here (a later sync of the shipped files keeps the edit)."""

from django.contrib import admin

from lmix.admin import ViewOnly

from .models import (
    Frame,
    Liquid,
    Narrative,
    Outcome,
    Pass,
    Rewind,
    Seat,
    Skill,
    SkillScope,
    TableTalk,
    Window,
)


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


@admin.register(Liquid)
class LiquidAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ("content", "frame", "seat", "status", "pscale", "submitted_at", "committed_at")
    list_filter = ("status", "analysis_source")
    search_fields = ("content", "frame__name")
    list_select_related = ("frame", "seat__persona", "seat__frame")


@admin.register(Window)
class WindowAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ("frame", "seat", "status", "pscale", "trigger", "opened_at", "expires_at")
    list_filter = ("status", "trigger")
    search_fields = ("frame__name",)
    list_select_related = ("frame", "seat__persona", "seat__frame")


@admin.register(Pass)
class PassAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ("frame", "seat", "kind", "trigger", "status", "attempts", "error", "created_at")
    list_filter = ("kind", "status", "trigger")
    search_fields = ("frame__name", "error", "lease_owner")
    list_select_related = ("frame", "seat__persona", "seat__frame")


@admin.register(Outcome)
class OutcomeAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ("seq", "frame", "seat", "created_at")
    search_fields = ("frame__name",)
    list_select_related = ("frame", "seat__persona", "seat__frame")


@admin.register(Rewind)
class RewindAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ("frame", "kind", "to_seq", "by", "created_at", "restored_at")
    list_filter = ("kind",)
    search_fields = ("frame__name",)
    list_select_related = ("frame", "by")


@admin.register(Narrative)
class NarrativeAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ("frame", "seat", "status", "trigger", "pscale", "shared", "created_at")
    list_filter = ("status", "trigger", "shared")
    search_fields = ("text", "frame__name")
    list_select_related = ("frame", "seat__persona", "seat__frame")


@admin.register(TableTalk)
class TableTalkAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ("text", "kind", "frame", "author", "by_gm", "created_at")
    list_filter = ("kind",)
    search_fields = ("text", "frame__name")
    list_select_related = ("frame", "author")


@admin.register(Skill)
class SkillAdmin(admin.ModelAdmin):
    """Platform skills: their text is editable; face, category and guard follow the shipped
    file. Frame and user skills belong to their GM and player: read only here."""

    list_display = ("name", "scope", "face", "category", "guard", "updated_at")
    list_filter = ("scope", "face", "guard")
    search_fields = ("name", "category", "text")
    fields = ("name", "scope", "face", "category", "guard", "text", "shipped")
    readonly_fields = ("name", "scope", "face", "category", "guard", "shipped")

    def has_add_permission(self, request) -> bool:
        return False  # platform skills come from files, the others from their owners

    def has_delete_permission(self, request, obj: Skill | None = None) -> bool:
        return False

    def has_change_permission(self, request, obj: Skill | None = None) -> bool:
        return obj is None or obj.scope == SkillScope.PLATFORM

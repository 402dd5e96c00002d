"""REST routes of frames, liquid and passes."""

from django.urls import re_path

from lmix.urls_router import UUID_PATTERN

from . import (
    apis,
    ban_apis,
    budget_api,
    content_api,
    diagnostics_api,
    export_api,
    outcome_api,
    rewind_api,
    sheet_api,
)
from .scenes import apis as scene_apis
from .skills import apis as skill_apis
from .snapshots import apis as snapshot_apis


def uuid_arg(name: str) -> str:
    return f"(?P<{name}>{UUID_PATTERN})"


FRAME = uuid_arg("frame_id")
LIQUID = uuid_arg("liquid_id")
PASS = uuid_arg("pass_id")
WINDOW = uuid_arg("window_id")
OUTCOME = uuid_arg("outcome_id")

urlpatterns = [
    re_path(
        rf"^productions/{uuid_arg('production_id')}/frames/?$",
        apis.ProductionFramesApi.as_view(),
        name="production-frames",
    ),
    re_path(
        rf"^productions/{uuid_arg('production_id')}/state/?$",
        sheet_api.ProductionStateApi.as_view(),
        name="production-state",
    ),
    re_path(r"^frames/?$", apis.FrameListApi.as_view(), name="frame-list"),
    re_path(r"^frames/join/?$", apis.FrameJoinApi.as_view(), name="frame-join"),
    re_path(
        r"^frames/invite/(?P<invite_code>[A-Za-z0-9_-]{1,64})/?$",
        apis.InvitePreviewApi.as_view(),
        name="frame-invite-preview",
    ),
    re_path(rf"^frames/{FRAME}/leave/?$", apis.FrameLeaveApi.as_view(), name="frame-leave"),
    re_path(rf"^frames/{FRAME}/?$", apis.FrameDetailApi.as_view(), name="frame-detail"),
    re_path(
        rf"^frames/{FRAME}/seats/{uuid_arg('seat_id')}/?$",
        apis.SeatDetailApi.as_view(),
        name="seat-detail",
    ),
    re_path(
        rf"^frames/{FRAME}/seats/{uuid_arg('seat_id')}/sheet/?$",
        sheet_api.SeatSheetApi.as_view(),
        name="seat-sheet",
    ),
    re_path(
        rf"^frames/{FRAME}/seats/{uuid_arg('seat_id')}/state/?$",
        sheet_api.SeatStateApi.as_view(),
        name="seat-state",
    ),
    re_path(
        rf"^frames/{FRAME}/seats/{uuid_arg('seat_id')}/state/memories/{uuid_arg('memory_id')}/?$",
        sheet_api.SeatMemoryApi.as_view(),
        name="seat-memory",
    ),
    re_path(
        rf"^frames/{FRAME}/seats/{uuid_arg('seat_id')}/snapshot/?$",
        snapshot_apis.SeatSnapshotApi.as_view(),
        name="seat-snapshot",
    ),
    re_path(
        rf"^frames/{FRAME}/seats/{uuid_arg('seat_id')}/reset/?$",
        snapshot_apis.SeatResetApi.as_view(),
        name="seat-reset",
    ),
    re_path(
        rf"^frames/{FRAME}/snapshots/?$",
        snapshot_apis.FrameSnapshotsApi.as_view(),
        name="frame-snapshots",
    ),
    re_path(
        rf"^frames/{FRAME}/snapshots/{uuid_arg('snapshot_id')}/?$",
        snapshot_apis.FrameSnapshotApi.as_view(),
        name="frame-snapshot",
    ),
    re_path(
        r"^schemas/snapshot-v1\.json$",
        snapshot_apis.SnapshotSchemaApi.as_view(),
        name="snapshot-schema",
    ),
    re_path(rf"^frames/{FRAME}/invite/?$", apis.FrameInviteApi.as_view(), name="frame-invite"),
    *[
        re_path(
            rf"^frames/{FRAME}/{action}/?$",
            apis.FrameControlApi.as_view(target=status),
            name=f"frame-{action}",
        )
        for action, status in [("pause", "paused"), ("resume", "open")]
    ],
    re_path(rf"^frames/{FRAME}/close/?$", apis.FrameCloseApi.as_view(), name="frame-close"),
    re_path(rf"^frames/{FRAME}/scenes/?$", scene_apis.SceneListApi.as_view(), name="frame-scenes"),
    re_path(
        rf"^frames/{FRAME}/scenes/close/?$",
        scene_apis.SceneCloseApi.as_view(),
        name="frame-scene-close",
    ),
    re_path(
        rf"^frames/{FRAME}/scenes/(?P<number>[0-9]{{1,6}})/retry/?$",
        scene_apis.SceneRetryApi.as_view(),
        name="frame-scene-retry",
    ),
    re_path(
        rf"^frames/{FRAME}/epilogue/?$", apis.FrameEpilogueApi.as_view(), name="frame-epilogue"
    ),
    re_path(rf"^frames/{FRAME}/advance/?$", apis.FrameAdvanceApi.as_view(), name="frame-advance"),
    re_path(rf"^frames/{FRAME}/passes/?$", apis.FramePassesApi.as_view(), name="frame-passes"),
    re_path(
        rf"^frames/{FRAME}/budget/?$", budget_api.FrameBudgetApi.as_view(), name="frame-budget"
    ),
    re_path(
        rf"^frames/{FRAME}/calls/?$", diagnostics_api.FrameCallsApi.as_view(), name="frame-calls"
    ),
    re_path(
        rf"^frames/{FRAME}/export/?$", export_api.FrameExportApi.as_view(), name="frame-export"
    ),
    re_path(rf"^frames/{FRAME}/liquid/?$", apis.FrameLiquidApi.as_view(), name="frame-liquid"),
    re_path(rf"^frames/{FRAME}/talk/?$", apis.FrameTalkApi.as_view(), name="frame-talk"),
    re_path(
        rf"^frames/{FRAME}/narration/?$", apis.FrameNarrationApi.as_view(), name="frame-narration"
    ),
    re_path(rf"^frames/{FRAME}/notes/?$", apis.FrameNoteApi.as_view(), name="frame-notes"),
    re_path(rf"^frames/{FRAME}/bans/?$", ban_apis.FrameBansApi.as_view(), name="frame-bans"),
    re_path(
        rf"^frames/{FRAME}/bans/(?P<user_id>[0-9]{{1,18}})/?$",
        ban_apis.FrameBanDetailApi.as_view(),
        name="frame-ban-detail",
    ),
    re_path(
        rf"^frames/{FRAME}/spectators/?$",
        apis.FrameSpectatorsApi.as_view(),
        name="frame-spectators",
    ),
    re_path(
        r"^spectate/(?P<code>[A-Za-z0-9_-]{1,64})/?$", apis.SpectateApi.as_view(), name="spectate"
    ),
    re_path(rf"^liquid/{LIQUID}/?$", apis.LiquidDetailApi.as_view(), name="liquid-detail"),
    re_path(rf"^windows/{WINDOW}/fire/?$", apis.WindowFireApi.as_view(), name="window-fire"),
    re_path(rf"^windows/{WINDOW}/cancel/?$", apis.WindowCancelApi.as_view(), name="window-cancel"),
    re_path(
        rf"^outcomes/{OUTCOME}/?$", outcome_api.OutcomeDetailApi.as_view(), name="outcome-detail"
    ),
    re_path(
        rf"^outcomes/{OUTCOME}/release/?$",
        outcome_api.OutcomeReleaseApi.as_view(),
        name="outcome-release",
    ),
    re_path(
        rf"^outcomes/{OUTCOME}/regenerate/?$",
        outcome_api.OutcomeRegenerateApi.as_view(),
        name="outcome-regenerate",
    ),
    re_path(rf"^passes/{PASS}/retry/?$", apis.PassRetryApi.as_view(), name="pass-retry"),
    re_path(
        rf"^passes/{PASS}/regenerate/?$",
        rewind_api.PassRegenerateApi.as_view(),
        name="pass-regenerate",
    ),
    re_path(
        rf"^frames/{FRAME}/rewind/?$", rewind_api.FrameRewindApi.as_view(), name="frame-rewind"
    ),
    re_path(
        rf"^frames/{FRAME}/rewinds/?$", rewind_api.FrameRewindsApi.as_view(), name="frame-rewinds"
    ),
    re_path(
        rf"^frames/{FRAME}/rewinds/(?P<rewind_id>[0-9]{{1,18}})/restore/?$",
        rewind_api.RewindRestoreApi.as_view(),
        name="rewind-restore",
    ),
    re_path(rf"^liquid/{LIQUID}/commit/?$", apis.LiquidCommitApi.as_view(), name="liquid-commit"),
    re_path(
        rf"^liquid/{LIQUID}/regenerate/?$",
        apis.LiquidRegenerateApi.as_view(),
        name="liquid-regenerate",
    ),
    re_path(
        rf"^frames/{FRAME}/content/?$", content_api.FrameContentApi.as_view(), name="frame-content"
    ),
    re_path(
        rf"^frames/{FRAME}/content/{uuid_arg('content_id')}/?$",
        content_api.ContentDetailApi.as_view(),
        name="content-detail",
    ),
    re_path(r"^skills/?$", skill_apis.SkillListApi.as_view(), name="skill-list"),
    re_path(
        rf"^skills/{uuid_arg('skill_id')}/?$",
        skill_apis.SkillDetailApi.as_view(),
        name="skill-detail",
    ),
]

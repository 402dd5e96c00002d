"""Reads of scenes: the list a reader may see (`GET /api/frames/{id}/scenes`)."""

from typing import Any

from ..frame_selectors import FrameAccess, seats_for_prompts
from ..medium.context import seat_labels
from ..scene_models import Scene, SceneSummary
from .services import scene_body, scene_current


def scene_list(access: FrameAccess) -> dict[str, Any]:
    """Every scene of the frame, oldest first, with the public summary and the characters'
    own summaries this reader may read: the GM every one, a player only their own seats'.
    Three reads, whatever the number of scenes."""
    frame = access.frame
    scene_current(frame=frame)  # a frame made before scenes gets its first one
    scenes = list(Scene.objects.filter(frame=frame).order_by("number"))
    summaries = SceneSummary.objects.filter(frame=frame).order_by("number", "seat__position")
    if not access.is_gm:
        summaries = summaries.filter(seat_id__in=access.seat_ids)
    labels = seat_labels(seats_for_prompts(frame=frame)) if summaries else {}
    by_scene: dict[Any, list[dict[str, Any]]] = {}
    for row in summaries:
        by_scene.setdefault(row.scene_id, []).append(
            {"seat": str(row.seat_id), "name": labels.get(row.seat_id, ""), "text": row.text}
        )
    items = []
    for scene in scenes:
        item = {
            **scene_body(scene),
            "summary": scene.summary,
            "summaries": by_scene.get(scene.pk, []),
        }
        if access.is_gm:
            item["summary_error"] = scene.summary_error
        items.append(item)
    return {"scenes": items}

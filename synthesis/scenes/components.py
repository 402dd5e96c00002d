"""The older scenes in prompts, as named components of the medium pass
(synthesis/medium/components.py): instead of their outcomes (gather keeps outcomes and
narratives of the open scene only: context.py), a character's own prompt carries its own
summaries of the newest closed scenes (`scene_summaries`, private: what it witnessed), and
the public prompts (bones, a shared frame's prose) their public summaries
(`earlier_scenes`). At most LMIX_SCENE_SUMMARIES_CONTEXT scenes, each capped: the prompt
stays the same size however long the play."""

from django.conf import settings

from lmix.prepared import Param, Prepared

from ..medium.components import Component, component_register, loaded
from ..medium.context import MediumContext, flat
from ..scene_models import Scene, SceneSummary, SummaryStatus
from .schema import SUMMARY_MAX

OWN_SUMMARIES = Prepared(
    lambda: (
        SceneSummary.objects.filter(seat=Param(SceneSummary, "seat"))
        .select_related("scene")
        .order_by("-number")[: max(settings.LMIX_SCENE_SUMMARIES_CONTEXT, 1)]
    )
)
PUBLIC_SUMMARIES = Prepared(
    lambda: Scene.objects.filter(
        frame=Param(Scene, "frame"), summary_status=SummaryStatus.DONE
    ).order_by("-number")[: max(settings.LMIX_SCENE_SUMMARIES_CONTEXT, 1)]
)


def scene_line(scene: Scene, text: str) -> str:
    title = f" — {flat(scene.title, 120)}" if scene.title else ""
    return f"- Scene {scene.number}{title}: {flat(text, SUMMARY_MAX)}"


def _own(ctx: MediumContext, _outcome: object) -> list[str]:
    rows = sorted(loaded(ctx, "scene_summaries"), key=lambda s: s.number)
    return [scene_line(s.scene, s.text) for s in rows]


def _public(ctx: MediumContext, _outcome: object) -> list[str]:
    rows = sorted(loaded(ctx, "earlier_scenes"), key=lambda s: s.number)
    return [scene_line(s, s.summary) for s in rows if s.summary]


for _component in (
    Component(
        "scene_summaries",
        _own,
        items_max=10,
        item_max=SUMMARY_MAX + 160,
        private=True,
        read=lambda pass_: OWN_SUMMARIES.read(seat=pass_.seat_id),
    ),
    Component(
        "earlier_scenes",
        _public,
        items_max=10,
        item_max=SUMMARY_MAX + 160,
        read=lambda pass_: PUBLIC_SUMMARIES.read(frame=pass_.frame_id),
    ),
):
    component_register(_component)

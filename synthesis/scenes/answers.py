"""The scenes API's answers (validated on the way out: lmix/answers.py)."""

from pydantic import Field

from lmix.realtime.wire import Body, Uuid, optional

from ..event_types import SceneBody
from ..scene_models import TITLE_MAX


class SceneSummaryBody(Body):
    seat: Uuid
    name: str = Field(description="The character, by the name everyone knows.")
    text: str


class SceneItem(SceneBody):
    """A scene, with the summaries the caller may read: the public one (everyone's), and
    the characters' own (a player: their own character's; the GM: every one)."""

    summary: str = Field(description="The public summary, once written; else empty.")
    summaries: list[SceneSummaryBody]
    summary_error: str = optional()  # the GM's alone: a provider's error may name its endpoint


class SceneList(Body):
    scenes: list[SceneItem]


class SceneClosed(Body):
    closed: SceneBody
    opened: SceneBody


TITLE_HELP = f"The next scene's title (at most {TITLE_MAX} characters), if any."

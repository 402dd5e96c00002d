"""The medium pass's prompts as named components: each gives the items of one labelled
section (its title in templates/synthesis/sections.txt), and a pass kind declares which
sections its user message holds, in which order, and which are dropped first when the
prompt must shrink to fit the model's window (prompts.py).

A component may declare one read (a prepared statement, lmix/prepared.py) that `gather`
sends in its batch (`together`) for the kinds that use it: the character's state plugs in
here (synthesis/state/components.py registers memories, relationships and mood) without
`gather` growing, and without a query per cast member. Components only the character may
know are `private`: a shared frame's prompt is public, so its kind may not list them.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lmix.prepared import Statement

if TYPE_CHECKING:
    from ..models import Outcome, Pass

# A component reads the pass's context (context.py's `MediumContext`, which imports this
# module: named here only as a string, to keep the import one way).
MediumContext = Any

TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "synthesis"
Items = Callable[[MediumContext, "Outcome | None"], list[str]]


@dataclass(frozen=True)
class Component:
    """One named section. `items` are its lines, oldest or least important first (those
    go first when the prompt must shrink); at most `items_max` of them, each cut at
    `item_max` characters, so no section can grow without bound."""

    name: str
    items: Items
    items_max: int
    item_max: int
    private: bool = False  # the character's own state: never in a public prompt
    read: Callable[["Pass"], Statement] | None = None  # its one batched read, if any

    def lines(self, ctx: MediumContext, outcome: "Outcome | None") -> list[str]:
        return [item[: self.item_max] for item in self.items(ctx, outcome)][-self.items_max :]


REGISTRY: dict[str, Component] = {}


def component_register(component: Component) -> Component:
    """Add (or replace, for a test) a component by its name."""
    REGISTRY[component.name] = component
    return component


@dataclass(frozen=True)
class PassKind:
    """A prompt's shape: its template and the components of its user message, in order;
    `drop_order` names the droppable ones, the first dropped first (oldest item first)."""

    name: str
    template: str
    components: tuple[str, ...]
    drop_order: tuple[str, ...]
    public: bool  # read by everyone (bones, a shared frame's prose): no private component

    def parts(self, ctx: MediumContext, outcome: "Outcome | None") -> dict[str, list[str]]:
        parts: dict[str, list[str]] = {}
        for name in self.components:
            component = REGISTRY[name]
            if self.public and component.private:
                raise ValueError(f"{name} is private: the {self.name} prompt is public.")
            parts[name] = component.lines(ctx, outcome)
        return parts

    def reads(self) -> list[Component]:
        """The components whose reads gather sends for this kind."""
        return [REGISTRY[n] for n in self.components if n in REGISTRY and REGISTRY[n].read]

    def sections(self) -> str:
        """The user message's sections as a template: each title, then its items."""
        titles = section_titles()
        return "\n\n".join(f"{titles[name]}\n{{{name}}}" for name in self.components)


@cache
def section_titles() -> dict[str, str]:
    """Each component's section title (sections.txt: `name: TITLE` lines; a title may use
    the prompt's fixed fields, `{name}` the character)."""
    titles: dict[str, str] = {}
    for line in (TEMPLATES / "sections.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, title = line.partition(":")
            titles[name.strip()] = title.strip()
    return titles


BONES = PassKind(
    "bones",
    "bones.txt",
    ("skills", "world", "earlier_scenes", "earlier_outcomes", "under_way"),
    ("earlier_scenes", "earlier_outcomes", "under_way", "world"),
    public=True,
)
FLESH = PassKind(
    "flesh",
    "flesh.txt",
    (
        "own_skills",
        "world",
        "scene_summaries",
        "recent",
        "memories",
        "relationships",
        "mood",
        "outcomes",
        "pending",
    ),
    (
        "scene_summaries",
        "recent",
        "memories",
        "pending",
        "world",
        "outcomes",
        "relationships",
        "mood",
    ),
    public=False,
)
FLESH_SHARED = PassKind(
    "flesh_shared",
    "flesh_shared.txt",
    ("narrative_skills", "world", "earlier_scenes", "story", "outcomes", "pending"),
    ("earlier_scenes", "story", "pending", "world", "outcomes"),
    public=True,
)


def flesh_kind(*, shared: bool) -> PassKind:
    return FLESH_SHARED if shared else FLESH


def loaded(ctx: MediumContext, name: str) -> list[Any]:
    """The rows a component's read brought (empty when gather did not send it)."""
    return ctx.loaded.get(name, [])

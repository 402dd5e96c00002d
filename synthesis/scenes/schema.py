"""What a scene's summary calls answer (validated with pydantic), and the offline
narrator's deterministic answers: a character's summary of what it witnessed and a line
for each other character it saw; the public summary of the public outcomes."""

from dataclasses import dataclass
from typing import Self

from pydantic import BaseModel, ConfigDict, Field

from lmix.llm.offline import Act

SUMMARY_MAX = 800  # stored and shown: a scene's summary, whoever's
EDGE_SUMMARY_MAX = 300


class EdgeSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    toward: str = Field(description="The other character's name, exactly as written.")
    summary: str = Field(description="One sentence: how this character now sees them.")


class CharacterSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    summary: str = Field(description="A few sentences: the scene as this character lived it.")
    relationships: list[EdgeSummary] = Field(default_factory=list)

    @classmethod
    def offline_answer(cls, scene: "SummaryScene", variant: int = 0) -> Self:
        """From the witnessed outcomes only: what was done and the facts, and for each
        other character what it was last seen doing."""
        last: dict[str, str] = {}
        for act in scene.acts:
            if act.who != scene.character and act.who in scene.others:
                last[act.who] = f"{act.who} was last seen: {act.text} ({act.result})."
        return cls(
            summary=scene.told(),
            relationships=[EdgeSummary(toward=who, summary=line) for who, line in last.items()],
        )


class PublicSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    summary: str = Field(description="A few sentences: what happened, as anyone present saw it.")

    @classmethod
    def offline_answer(cls, scene: "SummaryScene", variant: int = 0) -> Self:
        return cls(summary=scene.told())


@dataclass(frozen=True)
class SummaryScene:
    """What a summary prompt was compiled from (the offline narrator's context): the scene,
    whose point of view ("" for the public one), the resolved actions and facts of the
    outcomes it may use, and the other characters by the names everyone knows."""

    number: int
    title: str
    character: str
    acts: tuple[Act, ...]
    facts: tuple[str, ...]
    others: tuple[str, ...] = ()

    def told(self) -> str:
        done = "; ".join(f"{a.who}: {a.text} ({a.result})" for a in self.acts)
        text = " ".join(x for x in (done + "." if done else "", *self.facts) if x)
        return (text or "Nothing happened.")[:SUMMARY_MAX]

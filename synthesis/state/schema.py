"""What a state pass's model answers (validated with pydantic), and what the offline
narrator answers instead: for each character who witnessed an outcome, its changed
feelings toward the others, its mood, what it learned, and its memory of the moment.
Permissive on numbers (the rules clamp them: services.py), strict on keys."""

import re
from dataclasses import dataclass
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, field_validator

from lmix.llm.offline import Act

from .levels import MOOD_NAMES, MoodName


def _whole(value: object) -> object:
    """A number a model wrote as 2.5 or "3": rounded (the rules clamp it later)."""
    try:
        return round(float(value)) if isinstance(value, float | str) else value
    except ValueError:
        return value


class EdgeChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    toward: str = Field(description="The other character's name, exactly as written.")
    affinity: int = Field(default=0, description="How much more (or less) they like them: -10…10.")
    trust: int = Field(default=0, description="How much more (or less) they trust them: -10…10.")
    fact: str = Field(default="", description="Something they now know about them, if any.")

    _numbers = field_validator("affinity", "trust", mode="before")(lambda v: _whole(v))


class CharacterChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    character: str = Field(description="The witnessing character's name, exactly as written.")
    relationships: list[EdgeChange] = Field(default_factory=list)
    mood: MoodName | None = Field(default=None, description="Their mood now, if it changed.")
    mood_intensity: float = Field(default=0.0, description="Change of its intensity: -1…1.")
    learned: list[str] = Field(default_factory=list, description="Facts they learned.")
    memory: str = Field(default="", description="One or two sentences, from their view.")
    significance: int = Field(default=1, description="0 trivial … 3 unforgettable.")

    _significance = field_validator("significance", mode="before")(lambda v: _whole(v))

    @field_validator("mood", mode="before")
    @classmethod
    def _known_mood(cls, value: object) -> object:
        """A mood written "Happy", or one we have no name for: the known one, or none (the
        mood stays) rather than a refused answer."""
        if not isinstance(value, str):
            return value
        name = value.strip().lower()
        return name if name in MOOD_NAMES else None


class Telling(BaseModel):
    """One character telling another, in this outcome, about something it remembers."""

    model_config = ConfigDict(extra="forbid")

    teller: str = Field(description="Who tells, by name exactly as written.")
    listener: str = Field(description="Who is told, by name exactly as written.")
    about: str = Field(description="What the teller tells of, in a few words.")


# "I tell Bob about the brass key" in a resolved action: the offline narrator's telling.
_TELLS = re.compile(r"\btells?\s+(.+?)\s+about\s+(.+)", re.IGNORECASE)


class StateProposal(BaseModel):
    model_config = ConfigDict(extra="forbid")

    characters: list[CharacterChange]
    told: list[Telling] = Field(
        default_factory=list,
        description="Where a character tells another about an earlier event, if anyone does.",
    )

    @classmethod
    def offline_answer(cls, scene: "StateScene", variant: int = 0) -> Self:
        """Deterministic, from the outcome only: each witness remembers what was done and
        the facts; likes and trusts a little more whoever succeeded before its eyes (less
        on a failure); is pleased by its own success and uneasy at its failure."""
        told = "; ".join(f"{a.who}: {a.text} ({a.result})" for a in scene.acts)
        memory = " ".join(x for x in (told, *scene.facts) if x)
        changes = []
        for name in scene.witnesses:
            own = [a for a in scene.acts if a.who == name]
            good = any(a.result in ("success", "partial") for a in own)
            changes.append(
                CharacterChange(
                    character=name,
                    relationships=[
                        EdgeChange(
                            toward=a.who,
                            affinity=2 if a.result in ("success", "partial") else -1,
                            trust=1 if a.result == "success" else -1,
                        )
                        for a in scene.acts
                        if a.who != name and a.who in scene.witnesses
                    ],
                    mood=("happy" if good else "anxious") if own else None,
                    mood_intensity=0.1 if own else 0.0,
                    learned=list(scene.facts[:2]),
                    memory=memory,
                    significance=2 if own or name in scene.aimed_at else 1,
                )
            )
        told = []
        for act in scene.acts:
            found = _TELLS.search(act.text) if act.result in ("success", "partial") else None
            listener = next(
                (w for w in scene.witnesses if found and found.group(1).startswith(w)), None
            )
            if found and listener and listener != act.who:
                told.append(Telling(teller=act.who, listener=listener, about=found.group(2)))
        return cls(characters=changes, told=told)


@dataclass(frozen=True)
class StateScene:
    """What a state prompt was compiled from (the offline narrator's context): the
    witnesses by the names everyone knows, the outcome's resolved actions, its facts, and
    who its interrupts aim at. Public, like the outcome."""

    witnesses: tuple[str, ...]
    acts: tuple[Act, ...]
    facts: tuple[str, ...]
    aimed_at: tuple[str, ...] = ()

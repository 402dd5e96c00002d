"""Relationship levels and moods, after the personality-snapshot seed: a level from the
affinity (stranger 0–20 … soulmate 81–100), moods with modifiers of the personality
parameters, and the parameters they compile to (clamped 0–1)."""

from typing import Literal

# The highest affinity of each level, in order.
LEVELS: tuple[tuple[int, str], ...] = (
    (20, "stranger"),
    (40, "acquaintance"),
    (60, "friend"),
    (80, "close friend"),
    (100, "soulmate"),
)
PARAMETERS = ("empathy", "formality", "verbosity", "humor", "creativity", "directness")
PARAMETER_BASE = 0.5
MoodName = Literal[
    "neutral", "happy", "sad", "angry", "anxious", "shy", "excited", "suspicious", "calm"
]
MOOD_NAMES: tuple[str, ...] = MoodName.__args__  # type: ignore[attr-defined]
# What a mood does to the parameters at full intensity (scaled by the intensity).
MOOD_MODIFIERS: dict[str, dict[str, float]] = {
    "neutral": {},
    "happy": {"humor": 0.2, "empathy": 0.1, "verbosity": 0.1},
    "sad": {"humor": -0.3, "verbosity": -0.2, "empathy": 0.1},
    "angry": {"directness": 0.3, "empathy": -0.3, "formality": -0.1},
    "anxious": {"directness": -0.2, "verbosity": 0.1, "creativity": -0.1},
    "shy": {"formality": 0.2, "verbosity": -0.1, "directness": -0.3},
    "excited": {"humor": 0.2, "creativity": 0.2, "verbosity": 0.2, "formality": -0.2},
    "suspicious": {"directness": 0.1, "empathy": -0.2, "formality": 0.1},
    "calm": {"directness": -0.1, "verbosity": -0.1, "empathy": 0.1},
}
# What how well the character likes someone does to how it speaks to them.
LEVEL_MODIFIERS: dict[str, dict[str, float]] = {
    "stranger": {"formality": 0.2},
    "acquaintance": {"formality": 0.1},
    "friend": {"empathy": 0.2, "formality": -0.1},
    "close friend": {"empathy": 0.25, "formality": -0.2, "humor": 0.1},
    "soulmate": {"empathy": 0.3, "formality": -0.3, "humor": 0.2},
}


def level(affinity: int) -> str:
    """The relationship level of an affinity (0–100)."""
    return next((name for top, name in LEVELS if affinity <= top), LEVELS[-1][1])


def clamp(value: float, low: float, high: float) -> float:
    return max(low, min(high, value))


def compiled_parameters(*, mood: str, intensity: float, level_name: str = "") -> dict[str, float]:
    """The personality parameters with the level's and the mood's modifiers applied, each
    clamped to 0–1 (the seed's `compiled_parameters`)."""
    mood_mods = MOOD_MODIFIERS.get(mood, {})
    level_mods = LEVEL_MODIFIERS.get(level_name, {})
    return {
        name: round(
            clamp(
                PARAMETER_BASE + level_mods.get(name, 0.0) + mood_mods.get(name, 0.0) * intensity,
                0.0,
                1.0,
            ),
            2,
        )
        for name in PARAMETERS
    }

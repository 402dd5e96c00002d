"""The per-character medium pass: one character's actions resolved into a shared outcome
(bones) and that character's personal narrative (flesh), in a fixed order of small steps:
gather (context.py) → compile (prompts.py) → bones → route bones (bones.py) → flesh →
route flesh (flesh.py), run under a lease with its failure, retry and sweep (run.py)."""

from .bones import Bones, bones_apply
from .context import MediumContext, gather
from .prompts import compile_bones, compile_flesh, word_budget
from .run import (
    medium_flesh_run,
    medium_model,
    medium_pass_retry,
    medium_pass_run,
    pass_lease_lapsed,
    passes_sweep,
)

__all__ = [
    "Bones",
    "MediumContext",
    "bones_apply",
    "compile_bones",
    "compile_flesh",
    "gather",
    "medium_flesh_run",
    "medium_model",
    "medium_pass_retry",
    "medium_pass_run",
    "pass_lease_lapsed",
    "passes_sweep",
    "word_budget",
]

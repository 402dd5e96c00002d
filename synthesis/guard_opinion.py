"""The secret guard's second opinion (docs/synthesis.md, "The secret guard"): after the
word-overlap test (`guard.secret_flags`), one structured call asks the frame's model
whether the outcome reveals any secret the words left unflagged — a paraphrase, a secret
told in other words, which no run of shared words catches.

It only adds flags, never clears one: a word flag is a secret's own words in a text
everyone will read, which no model's "it does not reveal it" makes safe; a false flag
costs the GM one look, a cleared true one a leak nobody can take back.

Runs when the frame asks for it (`Frame.second_opinion`, the GM's setting; off by default:
it is one more call, and its latency, before an outcome with secrets reaches anyone) and
some secret of the seated characters is left unflagged. Bounded: at most SECRETS_MAX
secrets of SECRET_CHARS each, the outcome's text within TEXT_CHARS. Pure: the caller
(`medium/bones.py::_second_opinion`) makes the call and records it.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Self

from pydantic import BaseModel, ConfigDict, Field

from lmix.llm.base import Message

from .guard import _STOP, Secret, _words, secret_flag

SECRETS_MAX = 12
SECRET_CHARS = 300
TEXT_CHARS = 4000
EXCERPT_CHARS = 200
# The offline narrator's own test: a secret's distinctive words, in any order.
OFFLINE_WORD = 6  # letters
OFFLINE_SHARED = 3  # of its distinctive words (all of them when it has fewer)
SOURCE = "second_opinion"

SYSTEM = (
    "You check a story's outcome, which every player will read, for leaked secrets. For each "
    "secret listed, say whether the outcome reveals it — in its own words or in others: a "
    "paraphrase, or a hint that makes it plain to a reader. What the acting players "
    "themselves wrote is theirs to reveal: it is no leak. Quote the outcome's words that "
    "reveal a secret as the excerpt (empty when it does not). Answer every secret by its id."
)


class Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    secret: str = Field(description="The secret's id, as listed (s1, s2…).")
    reveals: bool
    excerpt: str = Field(default="", description="The outcome's words that reveal it.")


class SecondOpinion(BaseModel):
    """The model's answer: one verdict per secret it was asked about."""

    model_config = ConfigDict(extra="forbid")

    verdicts: list[Verdict]

    @classmethod
    def offline_answer(cls, context: "OpinionContext", variant: int = 0) -> Self:
        """The offline narrator's deterministic verdicts: a secret is revealed when the
        outcome holds OFFLINE_SHARED of its distinctive words (OFFLINE_WORD letters or
        more, no stop word) in any order, and the actors' own words did not say them all —
        a reordered or reworded secret the word runs of `secret_flags` miss."""
        said, revealed = set(_words(context.said)), set(_words(context.revealed))
        verdicts = []
        for key, secret in context.secrets:
            rare = {w for w in _words(secret.text) if len(w) >= OFFLINE_WORD and w not in _STOP}
            shared = rare & said
            enough = len(shared) >= min(OFFLINE_SHARED, len(rare)) and bool(shared)
            reveals = enough and not shared <= revealed
            excerpt = " ".join(sorted(shared)) if reveals else ""
            verdicts.append(Verdict(secret=key, reveals=reveals, excerpt=excerpt))
        return cls(verdicts=verdicts)


@dataclass(frozen=True)
class OpinionContext:
    """What the call's prompt is compiled from (and the offline narrator answers from)."""

    said: str
    revealed: str
    secrets: tuple[tuple[str, Secret], ...]  # (id, secret)


def opinion_context(
    *, said: Sequence[str], revealed: Sequence[str], secrets: Sequence[Secret], flags: list[dict]
) -> OpinionContext | None:
    """The second opinion's question, or None when there is nothing to ask: every secret
    is flagged already (or there is none), or the outcome says nothing."""
    flagged = {(f["kind"], f["owner"]) for f in flags}
    left = [s for s in secrets if (s.kind, s.owner) not in flagged][:SECRETS_MAX]
    text = _cut(" ".join(t for t in said if t), TEXT_CHARS)
    if not left or not text:
        return None
    return OpinionContext(
        said=text,
        revealed=_cut(" ".join(t for t in revealed if t), TEXT_CHARS),
        secrets=tuple((f"s{i}", s) for i, s in enumerate(left, 1)),
    )


def opinion_messages(context: OpinionContext) -> list[Message]:
    lines = [
        f"{key} ({secret.kind.replace('_', ' ')} of {_cut(secret.owner, 80)}): "
        f"{_cut(secret.text, SECRET_CHARS)}"
        for key, secret in context.secrets
    ]
    user = "\n\n".join(
        [
            f"THE OUTCOME:\n{context.said}",
            f"WHAT THE ACTING PLAYERS WROTE:\n{context.revealed or '(nothing)'}",
            "THE SECRETS:\n" + "\n".join(lines),
        ]
    )
    return [Message("system", SYSTEM), Message("user", user)]


def opinion_max_tokens(context: OpinionContext) -> int:
    return 60 + 80 * len(context.secrets)


def opinion_flags(context: OpinionContext, answer: SecondOpinion) -> list[dict[str, str]]:
    """The flags the answer adds, in the guard's one shape: each secret it says is
    revealed, once; an id it was not asked about is ignored."""
    by_id = dict(context.secrets)
    flags: dict[str, dict[str, str]] = {}
    for verdict in answer.verdicts:
        secret = by_id.get(verdict.secret.strip())
        if secret is None or not verdict.reveals or verdict.secret in flags:
            continue
        excerpt = _cut(verdict.excerpt, EXCERPT_CHARS) or "(in other words)"
        flags[verdict.secret] = secret_flag(secret, excerpt, SOURCE)
    return list(flags.values())


def _cut(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"

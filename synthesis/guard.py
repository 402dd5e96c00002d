"""The secret guard: an outcome is public, so one that repeats a secret the resolved
actions did not reveal is flagged to the GM (DESIGN.md §4). The bones prompt holds no
secret, so a flag means the model guessed, or a player wrote it into an outcome through
someone else's action; the GM decides. An intention an AI seat wrote is checked when it is
stored (`intention_flags`): its model read its character's secrets, and what it intends
becomes an outcome everyone reads. Pure: it reads only what its caller loaded.

A secret counts as repeated when the outcome holds a run of SHINGLE_WORDS of its words
(carrying at least two content words, so "in the middle of" never counts), or the whole of
a shorter secret, or a character's real name hidden behind its public one.
"""

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .models import Seat

SHINGLE_WORDS = 4
CONTENT_WORD = 4  # letters a word needs to carry meaning here
_WORD = re.compile(r"[\w'-]+")
_STOP_WORDS = """
about after again also been before being could every from have into just more most
much only other over same some such than that their them then there these they this
those through very were what when where which while will with would your
"""
_STOP = frozenset(_STOP_WORDS.split())


@dataclass(frozen=True)
class Secret:
    """One thing only some may know, and whose it is (for the GM's flag)."""

    kind: str  # "internal_truth", "affiliation_internal_truth", "real_name"
    owner: str  # the persona or affiliation, by name
    text: str


def secret_flag(secret: Secret, excerpt: str, source: str = "words") -> dict[str, str]:
    """A flag for the GM, the one shape every guard flag has (`event_types.FLAG_SCHEMA`):
    what kind of secret, whose, the words that repeat it, and which test found it
    (`words`: the word overlap here; `second_opinion`: guard_opinion.py)."""
    return {"kind": secret.kind, "owner": secret.owner, "excerpt": excerpt, "source": source}


def seat_secrets(seats: Iterable["Seat"]) -> list[Secret]:
    """The secrets of the characters seated: their internal truths, the internal truths of
    their groups, and real names behind a public one (memberships prefetched)."""
    secrets: list[Secret] = []
    groups: dict[object, Secret] = {}
    for seat in seats:
        persona = seat.persona
        if persona.internal_truth.strip():
            secrets.append(Secret("internal_truth", persona.name, persona.internal_truth))
        if persona.known_as.strip() and _words(persona.name) != _words(persona.known_as):
            secrets.append(Secret("real_name", persona.known_as.strip(), persona.name))
        for membership in persona.memberships.all():
            group = membership.affiliation
            if group.internal_truth.strip():
                groups.setdefault(
                    group.pk,
                    Secret("affiliation_internal_truth", group.name, group.internal_truth),
                )
    return secrets + list(groups.values())


def secret_flags(
    *, said: Iterable[str], revealed: Iterable[str], secrets: Iterable[Secret]
) -> list[dict[str, str]]:
    """The secrets that `said` (the outcome's texts) repeats and `revealed` (the resolved
    actions as their players wrote them) did not.

    Returns:
        [{kind, owner, excerpt, source}] for the GM, one per secret (`secret_flag`).
    """
    said_grams, revealed_grams = _Grams(" ".join(said)), _Grams(" ".join(revealed))
    flags = []
    for secret in secrets:
        for phrase in _phrases(secret):
            if phrase in said_grams and phrase not in revealed_grams:
                flags.append(secret_flag(secret, " ".join(phrase)))
                break
    return flags


def intention_flags(*, content: str, seats: Iterable["Seat"]) -> list[dict[str, str]]:
    """The secrets an AI-written intention repeats (its character's real name among them):
    nothing it says counts as revealed, since no player chose to say it.

    Args:
        content: the intention as it is stored.
        seats: the frame's seats, personas' memberships prefetched.
    Returns:
        [{kind, owner, excerpt, source}] for the GM, as `secret_flags`.
    """
    return secret_flags(said=[content], revealed=[], secrets=seat_secrets(seats))


class _Grams:
    """A text's runs of words, by length, built once per length asked for."""

    def __init__(self, text: str) -> None:
        self.words = _words(text)
        self.by_size: dict[int, set[tuple[str, ...]]] = {}

    def __contains__(self, phrase: tuple[str, ...]) -> bool:
        size = len(phrase)
        if size not in self.by_size:
            words = self.words
            self.by_size[size] = {words[i : i + size] for i in range(len(words) - size + 1)}
        return phrase in self.by_size[size]


def _phrases(secret: Secret) -> Iterator[tuple[str, ...]]:
    words = _words(secret.text)
    if secret.kind == "real_name" or len(words) < SHINGLE_WORDS:
        if words:
            yield words
        return
    for start in range(len(words) - SHINGLE_WORDS + 1):
        shingle = words[start : start + SHINGLE_WORDS]
        if sum(len(w) >= CONTENT_WORD and w not in _STOP for w in shingle) >= 2:
            yield shingle


def _words(text: str) -> tuple[str, ...]:
    return tuple(word.casefold() for word in _WORD.findall(text))

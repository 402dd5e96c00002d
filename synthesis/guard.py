"""The secret guard: an outcome is public, so one that repeats a secret the resolved
actions did not reveal is flagged to the GM (DESIGN.md §4). The bones prompt holds no
secret, so a flag means the model guessed, or a player wrote it into an outcome through
someone else's action; the GM decides. An intention an AI seat wrote is checked when it is
stored (`intention_flags`): its model read its character's secrets, and what it intends
becomes an outcome everyone reads. Pure: it reads only what its caller loaded.

A secret counts as repeated when the outcome holds a run of SHINGLE_WORDS of its words
(carrying at least two content words, so "in the middle of" never counts), or the whole of
a shorter secret, or a character's real name hidden behind its public one, or one telling
word of it: a rare word (`rare`) that nothing everyone knows holds (`public_words`), "oars"
out of "Oskar hid the spare oars", a planted marker — a model that read the secret lets one
word of it slip where no person chose to.
"""

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from lmix.llm.tokens import count_tokens

if TYPE_CHECKING:
    from productions.models import Production

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


def public_words(seats: Iterable["Seat"], production: "Production") -> frozenset[str]:
    """The words everyone at the table knows (every prompt holds them): the world's and
    the scenario's names and descriptions, the seated characters' public names, and their
    and their open groups' universal and external truths (world and scenario loaded)."""
    world, scenario = production.world, production.scenario
    known = [world.name, world.description, scenario.name, scenario.description]
    for seat in seats:
        persona = seat.persona
        known += [persona.known_as or persona.name, persona.universal_truth]
        known.append(persona.external_truth)
        for membership in persona.memberships.all():
            if not membership.covert:
                group = membership.affiliation
                known += [group.name, group.universal_truth, group.external_truth]
    return frozenset(_words(" ".join(known)))


def secret_flags(
    *,
    said: Iterable[str],
    revealed: Iterable[str],
    secrets: Iterable[Secret],
    public: frozenset[str],
) -> list[dict[str, str]]:
    """The secrets that `said` (a model's text: an outcome's, an AI seat's intention)
    repeats and `revealed` (the resolved actions as their players wrote them) did not; one
    telling word of a secret is enough, a rare word in nothing everyone knows (`public`,
    `public_words`).

    Returns:
        [{kind, owner, excerpt, source}] for the GM, one per secret (`secret_flag`).
    """
    said_grams, revealed_grams = _Grams(" ".join(said)), _Grams(" ".join(revealed))
    flags = []
    for secret in secrets:
        excerpt = next(
            (" ".join(p) for p in _phrases(secret) if p in said_grams and p not in revealed_grams),
            None,
        )
        if excerpt is None:
            excerpt = next(
                (
                    word
                    for word in telling_words(secret, public)
                    if (word,) in said_grams and (word,) not in revealed_grams
                ),
                None,
            )
        if excerpt is not None:
            flags.append(secret_flag(secret, excerpt))
    return flags


def telling_words(secret: Secret, public: frozenset[str]) -> list[str]:
    """The words of a secret that give it away on their own: content words, rare, that
    nothing everyone knows holds (`public`)."""
    return [
        word
        for word in dict.fromkeys(_words(secret.text))
        if len(word) >= CONTENT_WORD and word not in _STOP and word not in public and rare(word)
    ]


@cache
def rare(word: str) -> bool:
    """Whether a word is rare in English: the tokenizer's vocabulary, built from a great
    deal of English, spells every common word (after a space) in one token; a rarer word,
    a made-up one or a hyphenated run takes several."""
    return count_tokens(f" {word}") > 1


def intention_flags(
    *, content: str, seats: Iterable["Seat"], public: frozenset[str]
) -> list[dict[str, str]]:
    """The secrets an AI-written intention repeats (its character's real name among them),
    a telling word of one enough: nothing it says counts as revealed, since no player
    chose to say it.

    Args:
        content: the intention as it is stored.
        seats: the frame's seats, personas' memberships prefetched.
        public: what everyone at the table knows (`public_words`).
    Returns:
        [{kind, owner, excerpt, source}] for the GM, as `secret_flags`.
    """
    return secret_flags(said=[content], revealed=[], secrets=seat_secrets(seats), public=public)


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

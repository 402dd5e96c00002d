"""A player's first-person action told about their character, in plain English: "I draw
my sword and say "Halt!"" → "Ann draws their sword and says "Halt!"" (the pronoun that says
no gender). Quoted dialogue is always kept as written. The offline narrator's scenes."""

import re
from collections.abc import Callable

_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I'll|I've|I'd|me|my|myself)\b")
_I_VERB = re.compile(
    r"\bI(?P<c>'m|'ll|'ve|'d)?(?P<adverb>\s+[a-z]+ly)?(?:\s+(?P<verb>[a-z][a-z']*))?\b"
)
_CONTRACTIONS = {"'m": "is", "'ll": "will", "'ve": "has", "'d": "would"}
# fmt: off
_IRREGULAR = {
    "am": "is", "have": "has", "do": "does", "go": "goes", "was": "was", "don't": "doesn't",
}
_MODALS = frozenset({
    "can", "could", "will", "would", "shall", "should", "may", "might", "must", "also",
    "then", "just", "still", "never", "always", "can't", "won't", "cannot",
})
# fmt: on
_OBJECTS = {"me": "them", "my": "their", "mine": "theirs", "myself": "themselves"}


def _objects(text: str) -> str:
    """ "my" → "their", "me" → "them" (keeping a capital)."""

    def swap(match: re.Match) -> str:
        word = _OBJECTS[match[1].lower()]
        return capital(word) if match[1][0].isupper() else word

    return re.sub(r"\b(me|my|mine|myself)\b", swap, text, flags=re.IGNORECASE)


# Verbs a second action of the same sentence often starts with ("… and say", "… then nod").
# fmt: off
_COMMON_VERBS = frozenset({
    "say", "shout", "whisper", "ask", "nod", "smile", "laugh", "wave", "turn", "walk", "look",
    "add", "reply", "answer", "leave", "sit", "stand", "wait", "watch", "point", "step",
    "grin", "sigh", "shrug", "run", "reach", "take", "put", "pull", "push", "open", "close",
})
# fmt: on


def _and_verbs(text: str, *, conjugate: bool) -> str:
    """ "… and say" → "… and says" after a first-person action (`conjugate`), or left in the
    infinitive after "tries to"."""
    if not conjugate:
        return text
    return re.sub(
        r"\b(and|then|and then)\s+([a-z]+)\b",
        lambda m: f"{m[1]} {_conjugate(m[2]) if m[2] in _COMMON_VERBS else m[2]}",
        text,
    )


def _conjugate(verb: str) -> str:
    """The third person singular of a verb in the first person ("trip" → "trips")."""
    lower = verb.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if lower in _MODALS:
        return verb
    if re.search(r"(s|sh|ch|x|z|o)$", lower):
        return f"{verb}es"
    if re.search(r"[^aeiou]y$", lower):
        return f"{verb[:-1]}ies"
    return f"{verb}s"


def _outside_quotes(text: str, change: Callable[[str], str]) -> str:
    """`change` applied to the narration only: quoted dialogue stays as written."""
    parts = re.split(r'("[^"]*"|“[^”]*”)', text)
    return "".join(part if i % 2 else change(part) for i, part in enumerate(parts))


def third_person(who: str, text: str) -> str:
    """A player's first-person action told about their character: "I draw my sword and say
    "Halt!"" → "Ann draws their sword and says "Halt!"" (the pronoun that says no gender).
    Quoted dialogue is kept as written; text not in the first person is kept as it is, but
    for its roleplay marks: prose tells an *action* without them."""

    def change(part: str) -> str:
        def subject(match: re.Match) -> str:
            contraction, adverb, verb = match["c"], match["adverb"] or "", match["verb"]
            if contraction:
                words = [who, _CONTRACTIONS[contraction], adverb.strip(), verb or ""]
            elif verb:
                words = [who, adverb.strip(), _conjugate(verb)]
            else:
                return who
            return " ".join(word for word in words if word)

        part = part.replace("*", "")
        return _objects(_and_verbs(_I_VERB.sub(subject, part), conjugate=True))

    return capital(_outside_quotes(text.strip(), change).strip())


def attempt(who: str, text: str) -> str | None:
    """ "I trip Ben" → "Ann tries to trip Ben"; None when the text is not "I <verb> …"."""
    match = re.match(r"^\s*I\s+([a-z]+)\b(.*)$", text.strip().strip("*"), re.DOTALL)
    if match is None or match[1] in _MODALS or match[1] in _IRREGULAR:
        return None
    if match[1] in ("try", "attempt") and match[2].startswith(" to "):
        return f"{who} tries{_outside_quotes(match[2], _objects)}"
    rest = _outside_quotes(match[2], lambda part: _objects(_and_verbs(part, conjugate=False)))
    return f"{who} tries to {match[1]}{rest}"


def in_first_person(text: str) -> bool:
    return bool(_FIRST_PERSON.search(text))


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def sentence(text: str) -> str:
    """The text as a sentence: a capital first, a full stop last unless it has an end."""
    text = text.strip()
    if not text:
        return text
    text = capital(text)
    return text if text[-1] in ".!?…\"”'" else f"{text}."


def told(line: str) -> str:
    """A "Who: what they did" line (a fact, an interrupt) as a sentence about them."""
    who, sep, what = line.partition(": ")
    if sep and 0 < len(who) <= 80 and in_first_person(what):
        return sentence(third_person(who.strip(), what))
    return sentence(line)

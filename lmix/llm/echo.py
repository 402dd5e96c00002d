"""Whether a model's answer echoes its prompt (its headings, its labels, its own text word
for word) instead of answering it. Pure: no database, no call.

A small model often begins its "prose" by copying the prompt's scaffolding
("SCENARIO: The missing ferry … YOU ARE: Oskar Brand - Universal: …"). Such an answer is
a failed one, and for a character's narrative it would also hand the player the prompt,
secrets included, as if it were the story. Prose that reuses a name, a place or a short
phrase of the prompt is not an echo: the evidence is the prompt's layout (a heading or a
labelled line reproduced) or long verbatim runs of its instructions and knowledge.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .base import Message

# A heading line of a prompt: ALL-CAPS words (at least this many letters in all) ending
# in a colon, a parenthesis or the line's end: "YOU ARE: Oskar", "END OF SCENE",
# "RECENT EXPERIENCE (Oskar's own, oldest first)".
HEADING_LETTERS_MIN = 4
_HEADING = re.compile(r"^[ \t]*([A-Z][A-Z'’]*(?:[ \t]+[A-Z][A-Z'’]*)*)(?=[ \t]*(?::|\(|$))", re.M)
# A labelled list line: "- Universal: …", "- Internal (only you know this): …", "- Fact: …".
_LABEL = re.compile(r"^[ \t]*-[ \t]+([A-Z][\w'’ ]{1,40}?(?:[ \t]*\([^\n()]{0,80}\))?)[ \t]*:", re.M)
# How many words of its line after a marker make its echo certain ("SCENARIO: The missing").
LEAD_WORDS = 2
# Verbatim runs: answer words inside a run of this many words also found in the prompt's
# system text (its instructions and the knowledge it gives).
SHINGLE_WORDS = 8
# An echo when that covers at least this share of the answer and this many words…
COPIED_SHARE = 0.5
COPIED_WORDS_MIN = 16
# …or when one unbroken verbatim run is this long: no prose copies that much of its brief.
COPIED_RUN = 24
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


@dataclass(frozen=True)
class Marker:
    """A heading or a label of the prompt (`name`, as the GM is told it), how it shows in
    an answer (`pattern`), and the starts of the prompt lines it heads (`leads`, whitespace
    collapsed)."""

    name: str
    pattern: re.Pattern[str]
    leads: tuple[str, ...]


@dataclass(frozen=True)
class PromptEcho:
    """What of a prompt an answer may not repeat: its markers (headings and labels) and the
    word runs of its system text. Built once per prompt (`of`), asked per answer (`why`)."""

    markers: tuple[Marker, ...]
    shingles: frozenset[tuple[str, ...]]

    @classmethod
    def of(cls, messages: Sequence[Message], quoted: Sequence[str] = ()) -> "PromptEcho":
        """The prompt's markers and its system text's runs. `quoted`: story texts the
        prompt quotes whole (a character's own narratives), which an answer may well take
        up: a heading-like line of theirs is no evidence."""
        whole = "\n".join(m.content for m in messages)
        system = "\n".join(m.content for m in messages if m.role == "system")
        return cls(
            markers=prompt_markers(whole, quoted), shingles=frozenset(shingles(words(system)))
        )

    def why(self, answer: str) -> str | None:
        """Why `answer` is the prompt echoed rather than an answer, for the GM (it names
        the prompt's headings, never quotes its content), or None when it is not."""
        return self._marked(answer) or self._copied(answer)

    def _marked(self, answer: str) -> str | None:
        """An echo by layout: a marker that opens the answer, one reproduced with its
        line's own next words, or two different markers."""
        flat = " ".join(answer.split())
        found: list[str] = []
        for marker in self.markers:
            hit = marker.pattern.search(answer)
            if hit is None:
                continue
            opens = not answer[: hit.start()].strip()
            if opens or any(lead in flat for lead in marker.leads):
                return f"it repeats the prompt's heading {marker.name}"
            found.append(marker.name)
        if len(found) >= 2:
            return f"it repeats the prompt's headings {found[0]} and {found[1]}"
        return None

    def _copied(self, answer: str) -> str | None:
        """An echo by text: most of the answer, or one long run, copied word for word."""
        said = words(answer)
        covered = copied_positions(said, self.shingles)
        if not covered:
            return None
        share = len(covered) / len(said)
        if len(covered) >= COPIED_WORDS_MIN and share >= COPIED_SHARE:
            return f"{share:.0%} of it is the prompt's own text, word for word"
        if longest_run(covered) >= COPIED_RUN:
            return f"it copies {longest_run(covered)} words of the prompt's own text in a row"
        return None


def prompt_markers(prompt: str, quoted: Sequence[str] = ()) -> tuple[Marker, ...]:
    """The headings and labels that lay the prompt out, in order. One its content also uses
    (away from a line's start, or in a `quoted` text) is no evidence and left out: a player
    who wrote "WORLD:" in an action, which an outcome repeats, has not made it an echo."""
    leads: dict[tuple[bool, str], list[str]] = {}  # (a heading?, name): its lines' leads
    for hit in _HEADING.finditer(prompt):
        name = " ".join(hit.group(1).split())
        if sum(c.isalpha() for c in name) >= HEADING_LETTERS_MIN:
            leads.setdefault((True, name), []).append(_lead(prompt, hit))
    for hit in _LABEL.finditer(prompt):
        leads.setdefault((False, " ".join(hit.group(1).split())), []).append(_lead(prompt, hit))
    markers = []
    for (heading, name), found in leads.items():
        pattern = _heading_pattern(name) if heading else _label_pattern(name)
        if not _used_in_content(pattern, prompt) and not any(map(pattern.search, quoted)):
            shown = f'"{name}"' if heading else f'"- {name}:"'
            markers.append(Marker(shown, pattern, tuple(dict.fromkeys(x for x in found if x))))
    return tuple(markers)


def _heading_pattern(name: str) -> re.Pattern[str]:
    # Case-sensitive: "You are" in prose is not "YOU ARE:". A one-word heading counts only
    # with its colon ("WORLD:"), a longer one also before a parenthesis or a line's end.
    ending = r"[ \t]*:" if " " not in name else r"[ \t]*(?::|\(|$)"
    spaced = r"[ \t]+".join(re.escape(w) for w in name.split())
    return re.compile(rf"(?<![\w'’-]){spaced}(?={ending})", re.M)


def _label_pattern(name: str) -> re.Pattern[str]:
    spaced = r"\s+".join(re.escape(w) for w in name.split())
    return re.compile(rf"(?:^|(?<=\s))-[ \t]*{spaced}[ \t]*:", re.M)


def _used_in_content(pattern: re.Pattern[str], prompt: str) -> bool:
    """Whether the prompt holds the marker somewhere other than at a line's start."""
    for hit in pattern.finditer(prompt):
        line_start = prompt.rfind("\n", 0, hit.start()) + 1
        if prompt[line_start : hit.start()].strip():
            return True
    return False


def _lead(prompt: str, hit: re.Match[str]) -> str:
    """The marker with the next words of its line (up to LEAD_WORDS), whitespace collapsed;
    "" when no word follows it on its line (a bare heading is evidence only in company)."""
    end = prompt.find("\n", hit.start())
    line = prompt[hit.start() : len(prompt) if end == -1 else end].split()
    own = len(hit.group(0).split())
    if len(line) <= own or line[own] in {":", "("}:
        return ""
    return " ".join(line[: own + LEAD_WORDS])


def words(text: str) -> list[str]:
    """The text's words, case-folded, punctuation dropped: what verbatim runs compare."""
    return [w.casefold().replace("’", "'") for w in _WORD.findall(text)]


def shingles(said: Sequence[str], size: int = SHINGLE_WORDS) -> set[tuple[str, ...]]:
    """Every run of `size` consecutive words."""
    return {tuple(said[i : i + size]) for i in range(len(said) - size + 1)}


def copied_positions(said: Sequence[str], known: frozenset[tuple[str, ...]]) -> set[int]:
    """The positions of the answer's words that lie in a run of SHINGLE_WORDS words the
    prompt holds too."""
    covered: set[int] = set()
    for i in range(len(said) - SHINGLE_WORDS + 1):
        if tuple(said[i : i + SHINGLE_WORDS]) in known:
            covered.update(range(i, i + SHINGLE_WORDS))
    return covered


def longest_run(positions: set[int]) -> int:
    """The longest stretch of consecutive positions."""
    best = run = 0
    for position in sorted(positions):
        run = run + 1 if position - 1 in positions else 1
        best = max(best, run)
    return best


def echo_reason(answer: str, messages: Sequence[Message], quoted: Sequence[str] = ()) -> str | None:
    """Why `answer` echoes `messages` (`PromptEcho.why`), or None."""
    return PromptEcho.of(messages, quoted).why(answer)

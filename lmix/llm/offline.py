"""The offline narrator: deterministic prose and schema-valid data built from the prompt.

Two hooks let a caller get answers that fit its prompt rather than generic ones:
- a pydantic schema with a classmethod `offline_answer(messages, variant)` answers
  structured calls itself (from the compiled prompt); the generic builder is the fallback;
- a prompt whose last user message holds a `SCENE TO NARRATE:` … `END OF SCENE` block of
  `- Key: value` lines (Character, Intention, Interrupt, Result, Fact, Words) is narrated
  from that block: what the character did, how it turned out, the facts, within Words.
"""

import hashlib
import json
import math
import re
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from pydantic import BaseModel, ValidationError

from .base import CallConfig, Completion, LLMInvalidOutput, Message, StructuredMode, T, Usage
from .tokens import estimate_usage

X = TypeVar("X")
MODEL_ID = "narrator"
FALLBACK_SPEAKER = "The narrator"
_SPEAKER = re.compile(r"^\s*YOU ARE:\s*(.+?)\s*$", re.MULTILINE | re.IGNORECASE)
_QUOTE = re.compile(r'"([^"\n]+)"|“([^”\n]+)”')
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")
# fmt: off
_STOPWORDS = frozenset({
    "this", "that", "with", "from", "have", "what", "when", "where", "which", "will", "would",
    "could", "should", "there", "their", "they", "them", "then", "than", "your", "yours",
    "about", "into", "over", "just", "like", "very", "been", "were", "said", "says", "tell",
    "told", "here", "some", "more", "most", "much", "such", "only", "also", "each", "other",
})
# fmt: on
MAX_QUOTES = 2
# Recursive schemas stop here (with null or an empty list where the schema allows it).
MAX_DEPTH = 6

# A chat turn reads as a small scene (lmix/llm/offline.py's `Prompt.prose`): an action in
# *asterisks*, perhaps the other speaker's words taken up, a line of dialogue in quotes,
# perhaps a closing action. Sentences never hold pronouns: nobody's gender is known.
_OPENING_BEATS = (
    "{Name} looks around, taking in every face",
    "{Name} straightens up as the moment begins",
    "{Name} takes a slow breath before speaking",
    "{Name} lets the quiet settle for a moment",
    "{Name} steps forward, choosing each word with care",
)
_REPLY_BEATS = (
    "{Name} glances at {Other}, weighing the words",
    "{Name} meets {Other}'s eyes and holds them a moment too long",
    "{Name} leans back, considering {Other} carefully",
    "{Name} taps two fingers on the table, thinking it over",
    "{Name} lets out a short breath that is almost a laugh",
    "{Name} looks away for a moment, then back at {Other}",
)
_DIRECTED_BEATS = (
    "{Name} shifts, sensing the mood change",
    "Something in the air changes, and {Name} notices it first",
    "{Name} pauses, as if remembering something important",
    "{Name} squares up to whatever comes next",
)
_SETTINGS = (
    "Outside, {world} goes on with its own business.",
    "Beyond these walls, {world} carries on as if nothing were happening.",
)
_ECHOES = (
    "“{quote}” {short} repeats quietly.",
    "{short} turns the words over: “{quote}”",
    "“{quote}” The words hang in the air for a moment.",
)
_OPENING_LINES = (
    "Well. I suppose someone has to go first.",
    "So. Shall we begin?",
    "I was not sure anyone else would come.",
    "Let's not pretend this is an ordinary day.",
    "Before anyone asks: yes, I meant to be here.",
)
_ANSWERS = (
    "That's a fair question, {other}. I'm not sure you'll like the answer.",
    "You really want to know? Then listen, {other}, because I'll only say it once.",
    "Ask me again when we're alone, {other}.",
    "Why does everyone keep asking me that?",
    "I could tell you, {other}. The question is whether you're ready to hear it.",
    # Answers to a question nobody is named as asking (an outcome read out, say).
    "That depends on who is asking, and why.",
    "Not here. Not with everyone listening.",
    "I've asked myself the same thing all night.",
    "The honest answer? I don't know yet.",
)
_REPLIES = (
    "I hear you, {other}. I'm just not sure I believe you.",
    "Maybe. But that isn't the whole story, is it?",
    "Go on, {other}. I'm listening.",
    "Funny. I was about to say the same thing.",
    "Let's not get ahead of ourselves.",
    "You say that as if it were simple, {other}.",
)
_DIRECTED_LINES = (
    "All right. Let's try this another way.",
    "There's something I should have said earlier.",
    "We can't keep going around in circles.",
    "Fine. Then let's be honest with each other.",
)
_CONTINUED_LINES = (
    "And another thing: I'm not finished.",
    "I mean it. Every word.",
    "Think about that before you answer.",
)
_TAGS = ("adds", "says", "says quietly", "murmurs", "says at last")
_CLOSINGS = (
    "*{short} waits for an answer.*",
    "*{short} does not look away.*",
    "*For a moment, nobody moves.*",
)
# Titles that stay when someone is addressed by a short name ("Detective Johnson").
_TITLES = frozenset(
    {
        "captain",
        "detective",
        "doctor",
        "dr",
        "dr.",
        "lieutenant",
        "lady",
        "lord",
        "mr",
        "mr.",
        "mrs",
        "mrs.",
        "ms",
        "ms.",
        "officer",
        "professor",
        "sergeant",
        "sir",
        "madam",
        "father",
        "sister",
        "brother",
        "king",
        "queen",
        "prince",
        "princess",
        "agent",
        "inspector",
    }
)
# A cue in brackets ("[The scene begins. Speak first.]") is for the model, never material.
_CUE = re.compile(r"^\s*\[(?!Director\])[^\]\n]*\]\s*$", re.MULTILINE)
_LINE_START = re.compile(r"(?:\A|\n\n)(\[Director\]|[^:\n\[\]]{1,80}:)[ \t]*")
_KNOWN_AS = re.compile(r"\A\s*\n- Known to others as:\s*(.+?)\s*$", re.MULTILINE)
_SECTION = re.compile(r"^\s*(WORLD|SCENARIO):\s*(.+?)\s*$", re.MULTILINE)
MAX_ECHO_WORDS = 14
# fmt: off
_NAME_FIELDS = frozenset({"name", "speaker", "character", "who", "actor", "author", "persona"})
_PROSE_FIELDS = frozenset({
    "text", "content", "narration", "reply", "response", "message", "description", "summary",
    "prose", "dialogue", "speech", "body", "story", "answer", "output",
})
# fmt: on


@dataclass(frozen=True)
class Prompt:
    """What the narrator takes from a conversation."""

    seed: bytes
    speaker: str
    quotes: tuple[str, ...]
    words: tuple[str, ...]
    # What the turn answers: "opening", "reply", "directed" (a director's note) or
    # "continue" (its own last message, cut short).
    kind: str = "reply"
    other: str = ""  # who spoke last, as the prompt names them
    asked: bool = False  # whether that line asks something
    world: str = ""
    setting: str = ""  # the scenario's first sentence

    @classmethod
    def read(cls, messages: list[Message], variant: int = 0) -> "Prompt":
        material = [m.as_dict() for m in messages] + ([variant] if variant else [])
        seed = hashlib.sha256(json.dumps(material).encode()).digest()
        system = "\n".join(m.content for m in messages if m.role == "system")
        found = _SPEAKER.findall(system)
        speaker = found[-1] if found else FALLBACK_SPEAKER
        # What everyone reads names a character as everyone knows it: an undercover
        # character's real name stays in its own prompt.
        if found and (alias := _KNOWN_AS.search(system.split(f"YOU ARE: {speaker}", 1)[-1])):
            speaker = alias[1]
        users = [m.content for m in messages if m.role == "user"]
        last_user = users[-1] if users else ""
        cues = " ".join(_CUE.findall(last_user)).lower()
        # The newest line that is not a cue: what this turn answers.
        said = next((text for text in map(_without_cues, reversed(users)) if text), "")
        kind, other, line = "reply", "", said
        if "continue your last" in cues:
            kind = "continue"
        elif not said or "scene begins" in cues:
            kind = "opening"
        else:
            starts = list(_LINE_START.finditer(said))
            if starts:
                label, line = starts[-1][1], said[starts[-1].end() :]
                if label == "[Director]":
                    kind = "directed"
                else:
                    other = label.rstrip(":").strip()
        # The newest lines only: echoing every quote of a long exchange would make each
        # answer longer than the one before it.
        quoted = [a or b for a, b in _QUOTE.findall(line)] if kind == "reply" else []
        quotes = tuple(dict.fromkeys(q.strip() for q in quoted if q.strip()))[-MAX_QUOTES:]
        unquoted = _QUOTE.sub(" ", _without_cues(last_user))
        words = [w for w in _WORD.findall(unquoted) if w.lower() not in _STOPWORDS]
        # Longer words are likelier to be what the line is about ("lighthouse", not "down").
        salient = [w for w in words if len(w) >= 5 and w not in speaker] or words
        sections = dict(_SECTION.findall(system))
        return cls(
            seed,
            speaker,
            quotes,
            tuple(dict.fromkeys(salient)),
            kind=kind,
            other=other if other != speaker else "",
            asked="?" in " ".join(quoted or [line]),
            world=sections.get("WORLD", ""),
            setting=_first_sentence(system, "SCENARIO"),
        )

    def number(self, salt: str) -> int:
        return int.from_bytes(hashlib.sha256(self.seed + salt.encode()).digest()[:8], "big")

    def pick(self, salt: str, options: Sequence[X]) -> X:
        return options[self.number(salt) % len(options)]

    def topic(self, salt: str) -> str:
        return self.pick(salt, self.words) if self.words else ""

    def prose(self) -> str:
        """A chat turn as a small scene: an action in *asterisks*, perhaps the last speaker's
        words taken up, a line in quotes, perhaps a closing action. Deterministic: the same
        prompt gives the same text; the speaker, the last line and the setting vary it."""
        name, short = self.speaker, _short_name(self.speaker)
        if name == FALLBACK_SPEAKER:  # mid-sentence it reads "the narrator"
            short = "the narrator"
        other = _short_name(self.other) if self.other else ""
        names = {"Name": name, "short": short, "Other": self.other, "other": other}

        def choose(salt: str, options: Sequence[str], **fields: str) -> str:
            # Lines that address someone only when someone spoke.
            usable = [o for o in options if other or "{other}" not in o.lower()]
            return self.pick(salt, usable).format(**names, **fields)

        if self.kind == "continue":
            return _spoken(choose("line", _CONTINUED_LINES), short, self.pick("tag", _TAGS))
        beats = {"opening": _OPENING_BEATS, "directed": _DIRECTED_BEATS}
        sentences = [f"*{_capital(choose('beat', beats.get(self.kind, _REPLY_BEATS)))}.*"]
        if self.kind == "opening":
            if self.setting:
                sentences.insert(0, f"*{self.setting}*")
            elif self.world:
                world = self.world[4:] if self.world.startswith("The ") else self.world
                world = f"the {world}" if world != self.world else world
                sentences.append(f"*{choose('setting', _SETTINGS, world=world)}*")
        for i, quote in enumerate(self.quotes):
            if len(quote.split()) <= MAX_ECHO_WORDS and short not in quote:
                sentences.append(self.pick(f"echo{i}", _ECHOES).format(quote=quote, **names))
        lines = {"opening": _OPENING_LINES, "directed": _DIRECTED_LINES}
        bank = _ANSWERS if self.asked and self.kind == "reply" else _REPLIES
        spoken = choose("line", lines.get(self.kind, bank))
        tags = _TAGS[1:] if self.kind == "opening" else _TAGS  # nothing said yet to add to
        sentences.append(_spoken(spoken, short, self.pick("tag", tags)))
        if self.number("closing") % 3 == 0:
            sentences.append(choose("closing", _CLOSINGS))
        return " ".join(sentences)

    def phrase(self, salt: str) -> str:
        if not self.words:
            return "nothing in particular"
        start, count = self.number(salt), min(len(self.words), 1 + self.number(f"{salt}#n") % 3)
        return " ".join(self.words[(start + i) % len(self.words)] for i in range(count))


def _without_cues(text: str) -> str:
    return _CUE.sub("", text).strip()


def _first_sentence(system: str, section: str) -> str:
    """The first sentence of a section's text ("SCENARIO: name" then its description), when
    it is short enough to set a scene."""
    match = re.search(rf"^{section}:[^\n]*\n(.+?)(?:\n\n|\Z)", system, re.MULTILINE | re.DOTALL)
    if match is None:
        return ""
    sentence = re.match(r"\s*(.+?[.!?])(?:\s|$)", match[1].replace("\n", " "))
    if sentence is None or len(sentence[1].split()) > 25:
        return ""
    return sentence[1]


def _short_name(name: str) -> str:
    """How someone is called mid-scene: the first name, or a title with the last name."""
    parts = name.split()
    if len(parts) < 2:
        return name
    return f"{parts[0]} {parts[-1]}" if parts[0].lower() in _TITLES else parts[0]


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _spoken(line: str, who: str, tag: str) -> str:
    """A line of dialogue with its tag: “Go on,” Alice says. / “Why?” Alice asks."""
    if line.endswith("?"):
        return f"“{line}” {who} asks."
    if line.endswith("!"):
        return f"“{line}” {who} {tag}."
    return f"“{line[:-1] if line.endswith('.') else line},” {who} {tag}."


def deltas(text: str) -> Iterator[str]:
    """The text in small pieces (two words each, spaces kept) that join back to it exactly."""
    pieces = re.findall(r"\s*\S+\s*", text)
    for i in range(0, len(pieces), 2):
        yield "".join(pieces[i : i + 2])


class _Builder:
    """Builds a value for a JSON schema (pydantic's flavour) from a Prompt, deterministically."""

    def __init__(self, prompt: Prompt, root: dict[str, Any], required_only: bool) -> None:
        self.prompt = prompt
        self.defs = root.get("$defs", {})
        self.required_only = required_only

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**self.defs[schema["$ref"].rsplit("/", 1)[-1]], **rest}
        if "allOf" in schema:
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                merged = {**self.resolve(part), **merged}
            schema = merged
        return schema

    def value(self, schema: dict[str, Any], path: str, depth: int = 0) -> Any:
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.prompt.pick(path, schema["enum"])
        options = schema.get("anyOf") or schema.get("oneOf")
        if options:
            concrete = [o for o in options if self.resolve(o).get("type") != "null"]
            if not concrete or (depth >= MAX_DEPTH and len(concrete) < len(options)):
                return None
            return self.value(self.prompt.pick(path, concrete), path, depth + 1)
        kind = schema.get("type", "string")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        name = path.rsplit(".", 1)[-1].rstrip("]0123456789[").lower()
        build = getattr(self, f"_{kind}", self._string)
        return build(schema, path, name, depth)

    def _object(self, schema: dict[str, Any], path: str, name: str, depth: int) -> Any:
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))
        result = {
            key: self.value(sub, f"{path}.{key}", depth + 1)
            for key, sub in properties.items()
            if key in required or not self.required_only
        }
        extra = schema.get("additionalProperties")
        if not properties and isinstance(extra, dict) and depth < MAX_DEPTH:
            key = self.prompt.topic(f"{path}#key") or "note"
            result[key] = self.value(extra, f"{path}.{key}", depth + 1)
        return result

    def _array(self, schema: dict[str, Any], path: str, name: str, depth: int) -> Any:
        if "prefixItems" in schema:  # tuples
            return [
                self.value(item, f"{path}[{i}]", depth + 1)
                for i, item in enumerate(schema["prefixItems"])
            ]
        low, high = schema.get("minItems", 0), schema.get("maxItems")
        count = max(low, 0 if depth >= MAX_DEPTH else 1)
        if high is not None:
            count = min(count, high)
        items = schema.get("items", {})
        return [self.value(items, f"{path}[{i}]", depth + 1) for i in range(count)]

    def _string(self, schema: dict[str, Any], path: str, name: str, depth: int) -> Any:
        formats = {
            "date-time": "2000-01-01T00:00:00Z",
            "date": "2000-01-01",
            "time": "00:00:00",
            "email": "narrator@example.com",
            "uri": "https://example.com/",
            "uuid": str(uuid.UUID(int=self.prompt.number(path), version=4)),
        }
        if schema.get("format") in formats:
            return formats[schema["format"]]
        if name in _NAME_FIELDS:
            text = self.prompt.speaker
        elif name in _PROSE_FIELDS:
            text = self.prompt.prose()
        else:
            text = self.prompt.phrase(path)
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        if high is not None and len(text) > high:
            text = text[:high].rstrip() or text[:high]
        if len(text) < low:
            text = text + "." * (low - len(text))
        return text

    def _integer(self, schema: dict[str, Any], path: str, name: str, depth: int) -> Any:
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is None and "exclusiveMinimum" in schema:
            low = math.floor(schema["exclusiveMinimum"]) + 1
        if high is None and "exclusiveMaximum" in schema:
            high = math.ceil(schema["exclusiveMaximum"]) - 1
        if low is None:
            low = 0 if high is None or high >= 10 else high - 10
        if high is None:
            high = low + 10
        low, high = math.ceil(low), math.floor(high)
        return low + self.prompt.number(path) % max(1, high - low + 1)

    def _number(self, schema: dict[str, Any], path: str, name: str, depth: int) -> Any:
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        if low is None:
            low = 0.0 if high is None or high >= 10 else high - 10.0
        if high is None:
            high = low + 10.0
        fraction = (1 + self.prompt.number(path) % 98) / 100  # never exactly on a bound
        return round(low + (high - low) * fraction, 6)

    def _boolean(self, schema: dict[str, Any], path: str, name: str, depth: int) -> Any:
        return self.prompt.number(path) % 2 == 0

    def _null(self, schema: dict[str, Any], path: str, name: str, depth: int) -> Any:
        return None


SCENE_START = "SCENE TO NARRATE:"
SCENE_END = "END OF SCENE"
_SCENE_LINE = re.compile(r"^- ([A-Za-z]+): (.*)$")
_RESULT = re.compile(r"^(?P<who>[^:]+): (?P<what>.*) \((?P<result>[a-z]+)\)$")
_RESULT_WORDS = {
    "success": "and it works",
    "partial": "and it only partly works",
    "failure": "but it fails",
    "interrupted": "but it is cut short",
}
_SCENE_OPENINGS = (
    "The moment narrows around {name}.",
    "For {name}, everything happens at once.",
    "{name} feels the scene turn.",
    "{name} takes it all in.",
)
_SCENE_CLOSINGS = (
    "{name} breathes out and watches what comes next.",
    "{name} holds still for a heartbeat, taking stock.",
    "Whatever comes next, {name} is ready for it.",
)


@dataclass(frozen=True)
class Scene:
    """A scene to narrate, as a prompt marks it (see the module's docstring)."""

    character: str
    intentions: tuple[str, ...]
    interrupts: tuple[str, ...]
    results: tuple[str, ...]
    facts: tuple[str, ...]
    words: int

    @classmethod
    def read(cls, messages: list[Message]) -> "Scene | None":
        last_user = next((m.content for m in reversed(messages) if m.role == "user"), "")
        if SCENE_START not in last_user:
            return None
        block = last_user.split(SCENE_START, 1)[1].split(SCENE_END, 1)[0]
        found: dict[str, list[str]] = {}
        for line in block.splitlines():
            match = _SCENE_LINE.match(line.strip())
            if match:
                found.setdefault(match[1].lower(), []).append(match[2].strip())
        words = next((int(w) for w in found.get("words", []) if w.isdigit()), 60)
        return cls(
            character=(found.get("character") or [FALLBACK_SPEAKER])[0],
            intentions=tuple(found.get("intention", [])),
            interrupts=tuple(found.get("interrupt", [])),
            results=tuple(found.get("result", [])),
            facts=tuple(found.get("fact", [])),
            words=max(words, 1),
        )

    def prose(self, prompt: Prompt) -> str:
        """The scene in a few sentences, kept within about `words` words (at least one):
        the interrupt and the character's own results first, then others' results, the
        facts, an opening and a closing; told in reading order."""
        name = self.character
        results = [_result_sentence(r) for r in self.results]
        interrupts = [_told(r) for r in self.interrupts]
        # A fact that only restates an action or an interrupt is not told twice.
        told = " ".join(results + interrupts)
        facts = [_told(f) for f in self.facts]
        facts = [f for f in facts if f.rstrip(".!? ") not in told]
        # (priority, sentence) in reading order.
        candidates = [(4, prompt.pick("scene-opening", _SCENE_OPENINGS).format(name=name))]
        candidates += [(0, f"Then, without warning: {r}") for r in interrupts]
        if not self.results:
            candidates += [(1, _intention(name, w)) for w in self.intentions]
        candidates += [
            (1 if line.startswith(f"{name}:") else 2, sentence)
            for line, sentence in zip(self.results, results, strict=True)
        ]
        candidates += [(3, fact) for fact in facts]
        candidates.append((5, prompt.pick("scene-closing", _SCENE_CLOSINGS).format(name=name)))
        chosen: set[int] = set()
        used = 0
        for index in sorted(range(len(candidates)), key=lambda i: (candidates[i][0], i)):
            size = len(candidates[index][1].split())
            if chosen and used + size > self.words:
                continue
            chosen.add(index)
            used += size
        return " ".join(sentence for i, (_, sentence) in enumerate(candidates) if i in chosen)


def _intention(name: str, text: str) -> str:
    """What a character is about to do: "I open the door" → "Ann gets ready to open the
    door."; another's intention ("Ben: I sit") is told about them."""
    who, sep, what = text.partition(": ")
    if not (sep and 0 < len(who) <= 80 and not who.startswith("I ")):
        who, what = name, text
    attempt = _attempt(who, what)
    if attempt is not None and " tries to " in attempt:
        return _sentence(attempt.replace(" tries to ", " gets ready to ", 1))
    if _FIRST_PERSON.search(what) or what.strip().startswith(who):
        return _sentence(third_person(who, what))
    return _sentence(f"{who} means to act: {what.strip()}")


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?…\"”'" else f"{text}."


def _result_sentence(line: str) -> str:
    """A resolved action as narration: "Ann: I trip Ben. (success)" → "Ann trips Ben.";
    a failed one says what was tried ("Ann tries to trip Ben, but it fails.")."""
    match = _RESULT.match(line)
    if match is None or match["result"] not in _RESULT_WORDS:
        return _told(line)
    who, what, result = match["who"].strip(), match["what"].rstrip(". "), match["result"]
    if result == "success":
        return _sentence(third_person(who, what))
    attempt = _attempt(who, what)
    if attempt is not None:
        return _sentence(f"{attempt}, {_RESULT_WORDS[result]}")
    return _sentence(f"{third_person(who, what)} — {_RESULT_WORDS[result]}")


def _told(line: str) -> str:
    """A "Who: what they did" line (a fact, an interrupt) as a sentence about them."""
    who, sep, what = line.partition(": ")
    if sep and 0 < len(who) <= 80 and _FIRST_PERSON.search(what):
        return _sentence(third_person(who.strip(), what))
    return _sentence(line)


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
        return _capital(word) if match[1][0].isupper() else word

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

    told = _outside_quotes(text.strip(), change).strip()
    return _capital(told)


def _attempt(who: str, text: str) -> str | None:
    """ "I trip Ben" → "Ann tries to trip Ben"; None when the text is not "I <verb> …"."""
    match = re.match(r"^\s*I\s+([a-z]+)\b(.*)$", text.strip().strip("*"), re.DOTALL)
    if match is None or match[1] in _MODALS or match[1] in _IRREGULAR:
        return None
    if match[1] in ("try", "attempt") and match[2].startswith(" to "):
        return f"{who} tries{_outside_quotes(match[2], _objects)}"
    rest = _outside_quotes(match[2], lambda part: _objects(_and_verbs(part, conjugate=False)))
    return f"{who} tries to {match[1]}{rest}"


class OfflineNarrator:
    """Registered like any adapter; never touches the network."""

    # It reads the schema itself: no instruction, nothing to negotiate.
    structured_modes: tuple[StructuredMode, ...] = ("native",)

    def complete(self, config: CallConfig, messages: list[Message]) -> Completion:
        prompt = Prompt.read(messages, config.variant)
        scene = Scene.read(messages)
        text = scene.prose(prompt) if scene is not None else prompt.prose()
        return Completion(text, estimate_usage(messages, text))

    def stream(self, config: CallConfig, messages: list[Message], usage: Usage) -> Iterator[str]:
        answer = self.complete(config, messages)
        usage.prompt_tokens = answer.usage.prompt_tokens
        # Paced like a real model so people see the text arrive; tests set the delay to 0.
        delay = settings.LMIX_OFFLINE_STREAM_DELAY
        for piece in deltas(answer.text):
            if delay:
                time.sleep(delay)
            yield piece
        usage.completion_tokens = answer.usage.completion_tokens

    def structured(
        self,
        config: CallConfig,
        messages: list[Message],
        schema: type[BaseModel],
        usage: Usage,
        mode: StructuredMode = "native",
        wire: dict | None = None,  # the offline narrator answers from `schema` itself
    ) -> str:
        for result in self._answers(config, messages, schema):
            text = result.model_dump_json()
            answer = estimate_usage(messages, text)
            usage.prompt_tokens += answer.prompt_tokens
            usage.completion_tokens += answer.completion_tokens
            return text
        raise LLMInvalidOutput()

    def _answers(self, config: CallConfig, messages: list[Message], schema: type[T]) -> Iterator[T]:
        """Valid answers, best first: the schema's own `offline_answer`, then the generic
        builder with all fields (richer), then with the required ones only."""
        own = getattr(schema, "offline_answer", None)
        if callable(own):
            try:
                answer = schema.model_validate(own(messages, config.variant).model_dump())
            except ValueError:  # pydantic's ValidationError among them: the generic answer
                answer = None
            if answer is not None:
                yield answer
        prompt = Prompt.read(messages, config.variant)
        root = schema.model_json_schema()
        for required_only in (False, True):
            data = _Builder(prompt, root, required_only).value(root, schema.__name__)
            try:
                yield schema.model_validate(data)
            except ValidationError:
                continue

    def list_models(self, config: CallConfig) -> list[str]:
        return [MODEL_ID]

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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from pydantic import ValidationError

from .base import CallConfig, Completion, LLMInvalidOutput, Message, T, Usage
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

_OPENINGS = (
    "{Name} takes a moment before answering.",
    "{Name} looks up, weighing the words.",
    "{Name} leans closer, voice low.",
    "{Name} lets the silence stretch for a heartbeat.",
    "{Name} glances toward the door, then back again.",
    "{Name} folds both hands and considers.",
)
_ECHOES = (
    "“{quote}” {name} repeats slowly.",
    "The words hang in the air: “{quote}”",
    "{Name} turns the phrase over: “{quote}”",
    "“{quote}” It is said plainly enough, and {name} hears it.",
)
_TOPICS = (
    "Talk of {topic} has a way of changing a room.",
    "Everyone here has an opinion about {topic}.",
    "There is more to {topic} than anyone has admitted.",
    "The mention of {topic} draws a few careful looks.",
)
_LINES = (
    "“We should not linger here,” {name} says.",
    "“Tell me more, and leave nothing out,” {name} says.",
    "“I have heard stranger things tonight,” {name} admits.",
    "“Then we understand each other,” {name} says.",
    "“Careful. Not everyone here is a friend,” {name} warns.",
    "“Let us see where this leads,” {name} says.",
)
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

    @classmethod
    def read(cls, messages: list[Message], variant: int = 0) -> "Prompt":
        material = [m.as_dict() for m in messages] + ([variant] if variant else [])
        seed = hashlib.sha256(json.dumps(material).encode()).digest()
        system = "\n".join(m.content for m in messages if m.role == "system")
        found = _SPEAKER.findall(system)
        speaker = found[-1] if found else FALLBACK_SPEAKER
        last_user = next((m.content for m in reversed(messages) if m.role == "user"), "")
        # The newest lines only: echoing every quote of a long exchange would make each
        # answer longer than the one before it.
        quotes = tuple(dict.fromkeys(a or b for a, b in _QUOTE.findall(last_user)))[-MAX_QUOTES:]
        unquoted = _QUOTE.sub(" ", last_user)
        words = [w for w in _WORD.findall(unquoted) if w.lower() not in _STOPWORDS]
        # Longer words are likelier to be what the line is about ("lighthouse", not "down").
        salient = [w for w in words if len(w) >= 5 and w not in speaker] or words
        return cls(seed, speaker, quotes, tuple(dict.fromkeys(salient)))

    def number(self, salt: str) -> int:
        return int.from_bytes(hashlib.sha256(self.seed + salt.encode()).digest()[:8], "big")

    def pick(self, salt: str, options: Sequence[X]) -> X:
        return options[self.number(salt) % len(options)]

    def topic(self, salt: str) -> str:
        return self.pick(salt, self.words) if self.words else ""

    def prose(self) -> str:
        name = self.speaker
        # Mid-sentence, the fallback reads "the narrator"; a character's name keeps its case.
        names = {"Name": name, "name": "the narrator" if name == FALLBACK_SPEAKER else name}
        sentences = [self.pick("opening", _OPENINGS).format(**names)]
        for i, quote in enumerate(self.quotes):
            sentences.append(self.pick(f"echo{i}", _ECHOES).format(quote=quote, **names))
        if topic := self.topic("topic"):
            sentences.append(self.pick("topics", _TOPICS).format(topic=topic))
        sentences.append(self.pick("line", _LINES).format(**names))
        return " ".join(sentences)

    def phrase(self, salt: str) -> str:
        if not self.words:
            return "nothing in particular"
        start, count = self.number(salt), min(len(self.words), 1 + self.number(f"{salt}#n") % 3)
        return " ".join(self.words[(start + i) % len(self.words)] for i in range(count))


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
        told = " ".join(results)
        facts = [_sentence(f) for f in self.facts if f.rstrip(".!? ") not in told]
        # (priority, sentence) in reading order.
        candidates = [(4, prompt.pick("scene-opening", _SCENE_OPENINGS).format(name=name))]
        candidates += [(0, _sentence(f"Then, without warning: {r}")) for r in self.interrupts]
        if not self.results:
            candidates += [(1, _sentence(f"{name} means to act: {w}")) for w in self.intentions]
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


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?…\"”'" else f"{text}."


def _result_sentence(line: str) -> str:
    match = _RESULT.match(line)
    if match is None or match["result"] not in _RESULT_WORDS:
        return _sentence(line)
    what = match["what"].rstrip(". ")
    return _sentence(f"{match['who']}: {what} — {_RESULT_WORDS[match['result']]}")


class OfflineNarrator:
    """Registered like any adapter; never touches the network."""

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
        self, config: CallConfig, messages: list[Message], schema: type[T], usage: Usage
    ) -> T:
        for result in self._answers(config, messages, schema):
            answer = estimate_usage(messages, result.model_dump_json())
            usage.prompt_tokens += answer.prompt_tokens
            usage.completion_tokens += answer.completion_tokens
            return result
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

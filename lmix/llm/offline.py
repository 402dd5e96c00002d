"""The offline narrator: deterministic prose and schema-valid data, built from what the
caller knows about the call, never read back out of the prompt's text.

A caller hands it the facts its prompt was compiled from as `CallConfig.context` (real
adapters never read it):
- a `Reply` (a production's turn, a drafted line, an AI seat's intention) is written as a
  small scene: an action, perhaps the last speaker's words taken up, a line of dialogue;
- a `Scene` (a frame's narrative) is told from what was done, how it turned out and the
  facts, within its words; an `Epilogue` (a closed scene's last narrative) from what its
  character lived through;
- a structured call's schema answers itself where it has a classmethod
  `offline_answer(context, variant)` (its caller's context is its own); otherwise the
  generic builder fills the schema from the `Reply`.
Without a context it is "The narrator", opening a scene. The messages only seed its choices:
the same prompt gives the same text, another take (`variant`) another.
"""

import hashlib
import json
import math
import re
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, TypeVar

from django.conf import settings
from pydantic import BaseModel, ValidationError

from .base import CallConfig, Completion, LLMInvalidOutput, Message, StructuredMode, T, Usage
from .third_person import attempt, capital, in_first_person, sentence, third_person, told
from .tokens import estimate_usage

X = TypeVar("X")
MODEL_ID = "narrator"
FALLBACK_SPEAKER = "The narrator"
_QUOTE = re.compile(r'"([^"\n]+)"|“([^”\n]+)”')
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")
# fmt: off
_STOPWORDS = frozenset({
    "this", "that", "with", "from", "have", "what", "when", "where", "which", "will", "would",
    "could", "should", "there", "their", "they", "them", "then", "than", "your", "yours",
    "about", "into", "over", "just", "like", "very", "been", "were", "said", "says", "tell",
    "told", "here", "some", "more", "most", "much", "such", "only", "also", "each", "other",
})
# Titles that stay when someone is addressed by a short name ("Detective Johnson").
_TITLES = frozenset({
    "captain", "detective", "doctor", "dr", "dr.", "lieutenant", "lady", "lord", "mr", "mr.",
    "mrs", "mrs.", "ms", "ms.", "officer", "professor", "sergeant", "sir", "madam", "father",
    "sister", "brother", "king", "queen", "prince", "princess", "agent", "inspector",
})
# fmt: on
MAX_QUOTES = 2
MAX_ECHO_WORDS = 14
# Recursive schemas stop here (with null or an empty list where the schema allows it).
MAX_DEPTH = 6

# A chat turn reads as a small scene (`Reply.prose`): an action in *asterisks*, perhaps the
# other speaker's words taken up, a line of dialogue in quotes, perhaps a closing action.
# Sentences never hold pronouns: nobody's gender is known.
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

_NAME_FIELDS = frozenset({"name", "speaker", "character", "who", "actor", "author", "persona"})
# fmt: off
_PROSE_FIELDS = frozenset({
    "text", "content", "narration", "reply", "response", "message", "description", "summary",
    "prose", "dialogue", "speech", "body", "story", "answer", "output",
})
# fmt: on


@dataclass(frozen=True)
class Dice:
    """The narrator's choices, seeded by the messages and the take: the same call makes the
    same choices, and a longer conversation new ones."""

    seed: bytes

    @classmethod
    def of(cls, messages: list[Message], variant: int = 0) -> "Dice":
        material = [m.as_dict() for m in messages] + ([variant] if variant else [])
        return cls(hashlib.sha256(json.dumps(material).encode()).digest())

    def number(self, salt: str) -> int:
        return int.from_bytes(hashlib.sha256(self.seed + salt.encode()).digest()[:8], "big")

    def pick(self, salt: str, options: Sequence[X]) -> X:
        return options[self.number(salt) % len(options)]


@dataclass(frozen=True)
class Reply:
    """A chat line to write, from what its prompt was compiled from: who speaks, by the name
    everyone knows, and what it answers."""

    speaker: str = FALLBACK_SPEAKER
    # "opening" (nothing to answer yet), "reply" (to `line`), "directed" (a director's
    # note, `line`) or "continue" (its own last message, cut short).
    kind: Literal["opening", "reply", "directed", "continue"] = "opening"
    line: str = ""
    other: str = ""  # who said `line`, by the name the speaker knows them; "" unnamed
    question: bool = False  # it answers a question whatever `line` says (an AI seat's)
    world: str = ""  # the world's name
    scenario: str = ""  # the scenario's description

    @cached_property
    def quoted(self) -> list[str]:
        return [a or b for a, b in _QUOTE.findall(self.line)] if self.kind == "reply" else []

    @cached_property
    def words(self) -> tuple[str, ...]:
        """The line's words outside quotes, longer ones (likelier what it is about:
        "lighthouse", not "down") when there are any."""
        words = [
            w for w in _WORD.findall(_QUOTE.sub(" ", self.line)) if w.lower() not in _STOPWORDS
        ]
        salient = [w for w in words if len(w) >= 5 and w not in self.speaker] or words
        return tuple(dict.fromkeys(salient))

    def prose(self, dice: Dice) -> str:
        """The line as a small scene: an action in *asterisks*, perhaps the last speaker's
        words taken up, a line in quotes, perhaps a closing action."""
        name, short = self.speaker, _short_name(self.speaker)
        if name == FALLBACK_SPEAKER:  # mid-sentence it reads "the narrator"
            short = "the narrator"
        named = self.other if self.other != self.speaker else ""
        other = _short_name(named) if named else ""
        names = {"Name": name, "short": short, "Other": named, "other": other}

        def choose(salt: str, options: Sequence[str], **fields: str) -> str:
            # Lines that address someone only when someone spoke.
            usable = [o for o in options if other or "{other}" not in o.lower()]
            return dice.pick(salt, usable).format(**names, **fields)

        if self.kind == "continue":
            return _spoken(choose("line", _CONTINUED_LINES), short, dice.pick("tag", _TAGS))
        beats = {"opening": _OPENING_BEATS, "directed": _DIRECTED_BEATS}
        sentences = [f"*{capital(choose('beat', beats.get(self.kind, _REPLY_BEATS)))}.*"]
        if self.kind == "opening":
            if setting := _first_sentence(self.scenario):
                sentences.insert(0, f"*{setting}*")
            elif self.world:
                world = self.world[4:] if self.world.startswith("The ") else self.world
                world = f"the {world}" if world != self.world else world
                sentences.append(f"*{choose('setting', _SETTINGS, world=world)}*")
        # The newest quotes only: echoing every quote of a long exchange would make each
        # answer longer than the one before it.
        quotes = tuple(dict.fromkeys(q.strip() for q in self.quoted if q.strip()))[-MAX_QUOTES:]
        for i, quote in enumerate(quotes):
            if len(quote.split()) <= MAX_ECHO_WORDS and short not in quote:
                sentences.append(dice.pick(f"echo{i}", _ECHOES).format(quote=quote, **names))
        asked = self.question or "?" in " ".join(self.quoted or [self.line])
        lines = {"opening": _OPENING_LINES, "directed": _DIRECTED_LINES}
        bank = _ANSWERS if asked and self.kind == "reply" else _REPLIES
        spoken = choose("line", lines.get(self.kind, bank))
        tags = _TAGS[1:] if self.kind == "opening" else _TAGS  # nothing said yet to add to
        sentences.append(_spoken(spoken, short, dice.pick("tag", tags)))
        if dice.number("closing") % 3 == 0:
            sentences.append(choose("closing", _CLOSINGS))
        return " ".join(sentences)


def _first_sentence(text: str) -> str:
    """A description's first sentence, when it is short enough to set a scene."""
    paragraph = text.strip().split("\n\n", 1)[0].replace("\n", " ")
    found = re.match(r"\s*(.+?[.!?])(?:\s|$)", paragraph)
    if found is None or len(found[1].split()) > 25:
        return ""
    return found[1]


def _short_name(name: str) -> str:
    """How someone is called mid-scene: the first name, or a title with the last name."""
    parts = name.split()
    if len(parts) < 2:
        return name
    return f"{parts[0]} {parts[-1]}" if parts[0].lower() in _TITLES else parts[0]


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
class Act:
    """Someone's action in a scene, as its player wrote it: intended, or resolved with a
    `result` (success, partial, failure, interrupted)."""

    who: str
    text: str
    result: str = ""


@dataclass(frozen=True)
class Scene:
    """A narrative to tell, from the scene its prompt holds."""

    character: str
    intentions: tuple[Act, ...] = ()
    interrupts: tuple[str, ...] = ()  # what cut in, "Who: what they did" or a sentence
    results: tuple[Act, ...] = ()
    facts: tuple[str, ...] = ()
    words: int = 60

    def prose(self, dice: Dice) -> str:
        """The scene in a few sentences, kept within about `words` words (at least one):
        the interrupt and the character's own results first, then others' results, the
        facts, an opening and a closing; told in reading order."""
        name = self.character
        results = [_result_told(act) for act in self.results]
        interrupts = [told(r) for r in self.interrupts]
        # A fact that only restates an action or an interrupt is not told twice.
        already = " ".join(results + interrupts)
        facts = [told(f) for f in self.facts]
        facts = [f for f in facts if f.rstrip(".!? ") not in already]
        # (priority, sentence) in reading order.
        candidates = [(4, dice.pick("scene-opening", _SCENE_OPENINGS).format(name=name))]
        candidates += [(0, f"Then, without warning: {r}") for r in interrupts]
        if not self.results:
            candidates += [(1, _intention(act)) for act in self.intentions]
        candidates += [
            (1 if act.who == name else 2, sentence)
            for act, sentence in zip(self.results, results, strict=True)
        ]
        candidates += [(3, fact) for fact in facts]
        candidates.append((5, dice.pick("scene-closing", _SCENE_CLOSINGS).format(name=name)))
        candidates = [(rank, said) for rank, said in candidates if said]  # an empty action
        chosen: set[int] = set()
        used = 0
        for index in sorted(range(len(candidates)), key=lambda i: (candidates[i][0], i)):
            size = len(candidates[index][1].split())
            if chosen and used + size > max(self.words, 1):
                continue
            chosen.add(index)
            used += size
        return " ".join(sentence for i, (_, sentence) in enumerate(candidates) if i in chosen)


_EPILOGUE_OPENINGS = (
    "When it is over, {name} looks back on the scene.",
    "The scene closes, and {name} is left with what happened.",
    "Afterwards, {name} goes over it all once more.",
)
_EPILOGUE_CLOSINGS = (
    "Whatever comes after, {name} will remember this.",
    "{name} carries it away, and the scene is done.",
    "For {name}, this is where the story rests.",
)


@dataclass(frozen=True)
class Epilogue:
    """A closing narrative to tell once a scene closed: what its character lived through
    (its own stories' first sentences, the facts it witnessed), looked back on."""

    character: str
    memories: tuple[str, ...] = ()  # oldest first
    facts: tuple[str, ...] = ()
    words: int = 150

    def prose(self, dice: Dice) -> str:
        """An opening, the newest memories and facts that fit in about `words` words
        (oldest first), and a closing."""
        name = self.character
        recalled = [told(m) for m in (*self.memories, *self.facts) if m.strip()]
        opening = dice.pick("epilogue-opening", _EPILOGUE_OPENINGS).format(name=name)
        closing = dice.pick("epilogue-closing", _EPILOGUE_CLOSINGS).format(name=name)
        room = max(self.words, 1) - len(opening.split()) - len(closing.split())
        kept: list[str] = []
        for said in reversed(recalled):  # the newest are kept first
            size = len(said.split())
            if kept and size > room:
                break
            kept.insert(0, said)
            room -= size
        middle = ["It all comes back: " + kept[0], *kept[1:]] if kept else []
        return " ".join([opening, *middle, closing])


def _intention(act: Act) -> str:
    """What someone is about to do: "I open the door" → "Ann gets ready to open the door."."""
    who, what = act.who, act.text
    tried = attempt(who, what)
    if tried is not None and " tries to " in tried:
        return sentence(tried.replace(" tries to ", " gets ready to ", 1))
    if in_first_person(what) or what.strip().startswith(who):
        return sentence(third_person(who, what))
    return sentence(f"{who} means to act: {what.strip()}")


def _result_told(act: Act) -> str:
    """A resolved action as narration: "I trip Ben." (success) → "Ann trips Ben."; a failed
    one says what was tried ("Ann tries to trip Ben, but it fails.")."""
    who, what = act.who.strip(), act.text.rstrip(". ")
    if act.result not in _RESULT_WORDS:
        return told(f"{who}: {what}")
    if act.result == "success":
        return sentence(third_person(who, what))
    tried = attempt(who, what)
    if tried is not None:
        return sentence(f"{tried}, {_RESULT_WORDS[act.result]}")
    return sentence(f"{third_person(who, what)} — {_RESULT_WORDS[act.result]}")


class _Builder:
    """Builds a value for a JSON schema (pydantic's flavour) from a Reply, deterministically:
    names are its speaker, prose its text, other strings its line's words."""

    def __init__(self, reply: Reply, dice: Dice, root: dict[str, Any], required_only: bool):
        self.reply, self.dice = reply, dice
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
            return self.dice.pick(path, schema["enum"])
        options = schema.get("anyOf") or schema.get("oneOf")
        if options:
            concrete = [o for o in options if self.resolve(o).get("type") != "null"]
            if not concrete or (depth >= MAX_DEPTH and len(concrete) < len(options)):
                return None
            return self.value(self.dice.pick(path, concrete), path, depth + 1)
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
            key = self.dice.pick(f"{path}#key", self.reply.words or ("note",))
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
            "uuid": str(uuid.UUID(int=self.dice.number(path), version=4)),
        }
        if schema.get("format") in formats:
            return formats[schema["format"]]
        if name in _NAME_FIELDS:
            text = self.reply.speaker
        elif name in _PROSE_FIELDS:
            text = self.reply.prose(self.dice)
        else:
            text = self._phrase(path)
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
        return low + self.dice.number(path) % max(1, high - low + 1)

    def _number(self, schema: dict[str, Any], path: str, name: str, depth: int) -> Any:
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        if low is None:
            low = 0.0 if high is None or high >= 10 else high - 10.0
        if high is None:
            high = low + 10.0
        fraction = (1 + self.dice.number(path) % 98) / 100  # never exactly on a bound
        return round(low + (high - low) * fraction, 6)

    def _boolean(self, schema: dict[str, Any], path: str, name: str, depth: int) -> Any:
        return self.dice.number(path) % 2 == 0

    def _null(self, schema: dict[str, Any], path: str, name: str, depth: int) -> Any:
        return None

    def _phrase(self, salt: str) -> str:
        words = self.reply.words
        if not words:
            return "nothing in particular"
        start, count = (
            self.dice.number(salt),
            min(len(words), 1 + self.dice.number(f"{salt}#n") % 3),
        )
        return " ".join(words[(start + i) % len(words)] for i in range(count))


class OfflineNarrator:
    """Registered like any adapter; never touches the network."""

    # It reads the schema itself: no instruction, nothing to negotiate.
    structured_modes: tuple[StructuredMode, ...] = ("native",)

    def complete(self, config: CallConfig, messages: list[Message]) -> Completion:
        dice = Dice.of(messages, config.variant)
        told = config.context if isinstance(config.context, Scene | Epilogue | Reply) else Reply()
        text = told.prose(dice)
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
        """Valid answers, best first: the schema's own `offline_answer` to the call's
        context, then the generic builder with all fields (richer), then with the required
        ones only."""
        own = getattr(schema, "offline_answer", None)
        if callable(own) and config.context is not None:
            try:
                answer = schema.model_validate(own(config.context, config.variant).model_dump())
            except ValueError:  # pydantic's ValidationError among them: the generic answer
                answer = None
            if answer is not None:
                yield answer
        reply = config.context if isinstance(config.context, Reply) else Reply()
        dice = Dice.of(messages, config.variant)
        root = schema.model_json_schema()
        for required_only in (False, True):
            data = _Builder(reply, dice, root, required_only).value(root, schema.__name__)
            try:
                yield schema.model_validate(data)
            except ValidationError:
                continue

    def list_models(self, config: CallConfig) -> list[str]:
        return [MODEL_ID]

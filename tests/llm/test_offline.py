"""The offline narrator: deterministic, in character, schema-valid, and never on the network.
It reads what the caller hands it (CallConfig.context), never the prompt's text."""

import enum
import re
import socket
from dataclasses import replace
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field, field_validator

from lmix.llm.base import CallConfig, LLMInvalidOutput, Message, Usage
from lmix.llm.offline import FALLBACK_SPEAKER, Act, OfflineNarrator, Reply, Scene
from lmix.llm.tokens import count_message_tokens, count_tokens

CONFIG = CallConfig(provider="offline", endpoint="offline://narrator", model_id="narrator")
SYSTEM = Message("system", "The world: a drowned city.\nYOU ARE: Captain Ilse Marrow\nBe terse.")
CAPTAIN = "Captain Ilse Marrow"


def turn(text: str) -> list[Message]:
    return [SYSTEM, Message("user", text)]


def told(text: str, variant: int = 0) -> CallConfig:
    """The call of `turn(text)`: the captain answers `text`, said by nobody named."""
    context = Reply(speaker=CAPTAIN, kind="reply", line=text)
    return replace(CONFIG, context=context, variant=variant)


def answer(narrator: OfflineNarrator, text: str) -> str:
    return narrator.complete(told(text), turn(text)).text


@pytest.fixture
def narrator() -> OfflineNarrator:
    return OfflineNarrator()


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the offline narrator touched the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_same_prompt_same_answer_different_prompts_vary(narrator):
    first = answer(narrator, "I row toward the harbour lights.")
    assert answer(narrator, "I row toward the harbour lights.") == first
    prompts = [f"I search the {place} for the missing ledger." for place in "abcdefgh"]
    answers = {answer(narrator, p) for p in prompts}
    assert len(answers) > 1


def test_another_take_of_the_same_prompt_reads_differently(narrator):
    line = "I row toward the harbour lights."
    messages = turn(line)
    takes = [narrator.complete(told(line, variant=n), messages).text for n in range(6)]
    assert takes[0] == narrator.complete(told(line), messages).text  # take 0: the plain prompt
    assert len(set(takes)) > 1
    assert takes[3] == narrator.complete(told(line, variant=3), messages).text


def test_names_the_speaking_character(narrator):
    text = answer(narrator, "Report, captain.")
    assert "Captain Ilse Marrow" in text


def test_falls_back_to_the_narrator_without_a_character(narrator):
    text = narrator.complete(CONFIG, [Message("user", "What happens next?")]).text
    assert text.startswith(FALLBACK_SPEAKER) or "the narrator" in text


def test_keeps_quoted_dialogue_straight_and_curly(narrator):
    line = 'I shout, "Cut the anchor line!" and then whisper “we sink together”.'
    text = answer(narrator, line)
    assert "Cut the anchor line!" in text
    assert "we sink together" in text


def test_stream_is_small_deltas_that_join_to_the_completion(narrator):
    line = '"Hold fast," I tell the crew, watching the lighthouse.'
    messages = turn(line)
    usage = Usage()
    deltas = list(narrator.stream(told(line), messages, usage))
    complete = narrator.complete(told(line), messages)
    assert "".join(deltas) == complete.text
    assert len(deltas) > 5
    assert all(len(d.split()) <= 2 for d in deltas)
    assert usage == complete.usage


def test_usage_is_counted_with_tiktoken(narrator):
    messages = turn("Anything to report?")
    done = narrator.complete(told("Anything to report?"), messages)
    assert done.usage.prompt_tokens == count_message_tokens(messages)
    assert done.usage.completion_tokens == count_tokens(done.text)


def test_lists_one_model(narrator):
    assert narrator.list_models(CONFIG) == ["narrator"]


# -- structured ----------------------------------------------------------------------------


class Mood(enum.Enum):
    CALM = "calm"
    TENSE = "tense"


class Line(BaseModel):
    speaker: str
    text: str = Field(min_length=10)
    mood: Mood
    volume: Literal["whisper", "say", "shout"]


class Beat(BaseModel):
    lines: list[Line] = Field(min_length=1, max_length=3)
    tension: int = Field(ge=1, le=5)
    odds: float = Field(gt=0, lt=1)
    tags: Annotated[list[str], Field(min_length=2)]
    aside: str | None = None
    scores: dict[str, int]
    coords: tuple[int, str]
    done: bool


class Node(BaseModel):  # recursive
    label: str = Field(max_length=12)
    children: list["Node"] = []


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = Field(ge=1, le=9)


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Pet(BaseModel):
    pet: Cat | Dog = Field(discriminator="kind")


class Picky(BaseModel):
    """A validator the generic builder can't know about, on a field with a default."""

    topic: str
    code: str = "A1"

    @field_validator("code")
    @classmethod
    def looks_like_a_code(cls, value: str) -> str:
        if value != "A1":
            raise ValueError("not a code")
        return value


@pytest.mark.parametrize("schema", [Line, Beat, Node, Pet, Picky])
def test_structured_output_validates(narrator, schema):
    line = '"Steady," I say, scanning the reef for the smugglers.'
    usage = Usage()
    raw = narrator.structured(told(line), turn(line), schema, usage)
    result = schema.model_validate_json(raw)  # the raw answer, as a model's would be
    assert schema.model_validate(result.model_dump()) == result
    assert narrator.structured(told(line), turn(line), schema, Usage()) == raw  # deterministic
    # Without a context, too: then the narrator speaks.
    assert schema.model_validate_json(narrator.structured(CONFIG, turn(line), schema, Usage()))
    assert usage.completion_tokens > 0


def test_structured_text_comes_from_the_prompt(narrator):
    line = '"Steady," I say, eyes on the reef.'
    raw = narrator.structured(told(line), turn(line), Line, Usage())
    line = Line.model_validate_json(raw)
    assert line.speaker == "Captain Ilse Marrow"
    assert "Steady," in line.text


def test_structured_bounds_are_respected_across_prompts(narrator):
    for i in range(20):
        line = f"Attempt {i} at the reef crossing."
        beat = Beat.model_validate_json(narrator.structured(told(line), turn(line), Beat, Usage()))
        assert 1 <= beat.tension <= 5 and 0 < beat.odds < 1 and 1 <= len(beat.lines) <= 3


def test_structured_that_cannot_be_satisfied_is_invalid_output(narrator):
    class Impossible(BaseModel):
        code: str = Field(pattern=r"^[0-9]{4}-[A-Z]{2}$")

    with pytest.raises(LLMInvalidOutput):
        narrator.structured(told("Anything."), turn("Anything."), Impossible, Usage())


def test_answers_stay_short_however_long_the_exchange(narrator):
    text = '"Hello," she says. "Who are you?"'
    lengths = []
    for _ in range(12):  # two voices quoting each other's whole answers back
        text = answer(narrator, f"{text} {text}")
        lengths.append(len(text))
    assert max(lengths) < 600, lengths


# -- chat prose that reads like a scene ----------------------------------------------------

SCENARIO = "A Tuesday afternoon in a quiet Manhattan therapy office. A new patient arrives."
PROMPT = [Message("system", "Any prompt: the narrator reads the Reply."), Message("user", "Hi.")]
OPENING = Reply(kind="opening")
LINES = [
    Reply(kind="reply", other="Bob Wilson", line="*Bob sits down.* “Is this where I talk?”"),
    Reply(kind="reply", other="Tony Rosetti", line="“Nobody asked you, pal.”"),
    Reply(kind="directed", line="Tony should reveal his secret now"),
    OPENING,
]


def scene_turn(name: str, reply: Reply, variant: int = 0) -> str:
    context = replace(reply, speaker=name, world="Modern NYC", scenario=SCENARIO)
    messages = [*PROMPT, Message("user", f"{name} {reply}")]  # a prompt per call, as the app's
    config = replace(CONFIG, context=context, variant=variant)
    return OfflineNarrator().complete(config, messages).text


@pytest.mark.parametrize("reply", LINES)
def test_a_chat_turn_reads_like_a_scene(reply):
    text = scene_turn("Alice Thompson", reply)
    assert "Alice Thompson" in text
    assert re.search(r"\*[A-Z][^*]+[.!?]\*", text), text  # an action in asterisks
    assert re.search(r"“[^”]+”", text), text  # a line of dialogue in quotes
    assert text.rstrip()[-1] in ".!?”*", text
    for sentence in re.split(r"(?<=[.!?*”])\s+", text):
        assert sentence[-1] in ".!?”*", (sentence, text)
    # No stage direction or note leaks into the prose.
    assert "[" not in text and "Director" not in text and "secret" not in text


def test_a_chat_turn_is_deterministic_and_differs_per_speaker_and_line():
    first = scene_turn("Alice Thompson", LINES[0])
    assert scene_turn("Alice Thompson", LINES[0]) == first
    others = {scene_turn(name, LINES[0]) for name in ("Tony Rosetti", "Mira Vale", "Jon Snow")}
    assert first not in others
    assert len({scene_turn("Alice Thompson", line) for line in LINES}) == len(LINES)


def test_questions_nobody_is_named_as_asking_get_different_answers():
    # AI seats answer outcomes, where no last speaker is named: once one of them asked a
    # question, all of them gave the one answer that addresses nobody, and echoed it.
    answers = set()
    for n in range(20):
        asked = Reply(kind="reply", line=f'The map lies open. "Where were you on night {n}?"')
        text = scene_turn(f"Speaker {n}", asked)
        answers |= {q for q in re.findall(r"“([^”]+)”", text) if "night" not in q}
    assert len(answers) >= 4, answers


def test_a_reply_addresses_the_last_speaker_and_an_opening_sets_the_scene():
    texts = [scene_turn(f"Speaker {i}", LINES[1]) for i in range(8)]
    assert all("Tony" in text for text in texts)  # the line answered is Tony's
    opening = scene_turn("Alice Thompson", OPENING)
    assert "A Tuesday afternoon in a quiet Manhattan therapy office." in opening


def test_an_opening_without_a_scene_setting_sentence_names_the_world():
    for world in ("Ashfall", "The Drowned City"):
        reply = Reply(speaker="Mara", world=world, scenario="ferry docks")
        texts = [
            OfflineNarrator().complete(replace(CONFIG, context=reply, variant=n), PROMPT)
            for n in range(4)
        ]
        assert all(world.removeprefix("The ") in t.text for t in texts)


def test_a_continuation_adds_a_line_without_repeating_the_turn():
    own = "*Alice Thompson nods.* “Go on, Bob. I'm listening,” Alice says."
    text = scene_turn("Alice Thompson", Reply(kind="continue", line=own))
    assert own not in text and "Alice" in text and re.search(r"“[^”]+”", text)


# -- a frame's scene, told in the third person ----------------------------------------------


def scene(**facts) -> str:
    context = Scene(character="Ann", words=200, **facts)
    messages = [Message("system", "Narrate."), Message("user", repr(context))]
    return OfflineNarrator().complete(replace(CONFIG, context=context), messages).text


def test_a_scene_never_reads_a_players_first_person_action_back_as_narration():
    text = scene(
        results=(
            Act("Ann", 'I draw my sword and say "Halt, my friend!"', "success"),
            Act("Ben", "I try to run.", "failure"),
        ),
        facts=('Ann: I draw my sword and say "Halt, my friend!"',),
        interrupts=("Ben: I shout for help.",),
    )
    assert 'Ann draws their sword and says "Halt, my friend!"' in text  # dialogue kept
    assert "Ben tries to run, but it fails." in text
    assert "Then, without warning: Ben shouts for help." in text
    assert not re.search(r"\bI\b|\bmy sword\b|: I ", text), text
    assert text.count("draws their sword") == 1  # the fact is not told twice


def test_a_scene_tells_roleplay_actions_as_prose_without_their_marks():
    said = '*I step back, thinking it over.* "Not *now*," I say. *I wait.*'
    text = scene(results=(Act("Ann", said, "success"),))
    assert 'Ann steps back, thinking it over. "Not *now*," Ann says. Ann waits.' in text
    assert text.count("*") == 2  # only the emphasis inside the dialogue, as written


def test_an_intention_is_told_as_what_the_character_is_about_to_do():
    text = scene(intentions=(Act("Ann", "I open the door slowly."),))
    assert "Ann gets ready to open the door slowly." in text and " I " not in text


def test_a_scene_keeps_within_its_words():
    many = tuple(Act("Ben", f"I take step {n} toward the door.", "success") for n in range(30))
    text = (
        OfflineNarrator()
        .complete(replace(CONFIG, context=Scene(character="Ann", results=many, words=30)), PROMPT)
        .text
    )
    assert 0 < len(text.split()) <= 30, text

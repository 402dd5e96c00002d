"""The echo detector (lmix/llm/echo.py): an answer that repeats its prompt's headings,
labelled lines or long runs of its system text is an echo; prose that reuses a name, a
place or a short phrase of the prompt is not, nor is anything the offline narrator writes
from a prompt laid out like the app's."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmix.llm.base import Message
from lmix.llm.echo import PromptEcho, echo_reason, prompt_markers
from lmix.llm.offline import Act, Dice, Epilogue, Scene

# A flesh prompt as synthesis/templates/synthesis/flesh.txt lays it out, with the knowledge
# productions/knowledge.py renders.
SYSTEM = """WORLD: Port Varna
A cold harbour town on the northern sea, where the ferries run twice a day when the weather allows.

SCENARIO: The missing ferry
The morning ferry never arrived and the harbour master has closed the quay until it is explained.

YOU ARE: Oskar Brand
- Universal: A retired ferry captain who still walks the quay every single morning.
- Internal (only you know this): OSKAR-SECRET-MARKER he sold the ferry's schedule to smugglers.
- Style: terse

You narrate Oskar Brand's own experience of a live scene, for Oskar Brand's player only.
- Write in the third person, close to Oskar Brand: what he does, perceives, feels and hears.
- Use only what Oskar Brand knows (above) and can perceive.
- Keep every line of dialogue exactly as written, in quotes.
- Length: about 60 words. Prose only: no headings, no lists, no notes."""
USER = """RECENT EXPERIENCE (Oskar Brand's own, oldest first)
(none)

SCENE TO NARRATE:
- Character: Oskar Brand
- Intention: I check the ledger at the quay
- Result: Oskar Brand: I check the ledger at the quay (success)
- Words: 60
END OF SCENE"""
PROMPT = [Message("system", SYSTEM), Message("user", USER)]


def why(answer: str, messages: list[Message] = PROMPT) -> str | None:
    return echo_reason(answer, messages)


# -- echoes ---------------------------------------------------------------------------------


def test_an_answer_opening_with_the_prompts_scaffolding_is_an_echo():
    # What SmolLM-135M answered on llama.cpp, flattened onto one line.
    answer = (
        "SCENARIO: The missing ferry The morning ferry never arrived … YOU ARE: Oskar Brand "
        "- Universal: A retired ferry captain"
    )
    assert why(answer) == 'it repeats the prompt\'s heading "SCENARIO"'


def test_a_heading_with_its_own_lines_words_is_an_echo_anywhere():
    answer = "Oskar walks to the quay. He remembers: YOU ARE: Oskar Brand, and then he waits."
    assert why(answer) == 'it repeats the prompt\'s heading "YOU ARE"'


def test_a_labelled_line_of_the_prompt_is_an_echo():
    assert (
        why("Oskar checks the ledger.\n- Words: 60")
        == 'it repeats the prompt\'s heading "- Words:"'
    )
    secret = "Oskar nods. - Internal (only you know this): OSKAR-SECRET-MARKER he sold it."
    assert why(secret) == 'it repeats the prompt\'s heading "- Internal (only you know this):"'


def test_two_bare_headings_are_an_echo():
    answer = "Oskar checks the ledger, SCENE TO NARRATE (his own) and nothing else. END OF SCENE"
    assert why(answer) == (
        'it repeats the prompt\'s headings "SCENE TO NARRATE" and "END OF SCENE"'
    )


def test_most_of_an_answer_copied_from_the_instructions_is_an_echo():
    answer = (
        "Write in the third person, close to Oskar Brand: what he does, perceives, "
        "feels and hears. Use only what Oskar Brand knows and can perceive. He looks."
    )
    assert why(answer).endswith("of it is the prompt's own text, word for word")


def test_one_long_verbatim_run_is_an_echo_even_in_a_long_answer():
    prose = " ".join(["Oskar walks along the wet quay and counts the empty moorings."] * 12)
    copied = (
        " Use only what Oskar Brand knows (above) and can perceive. Keep every line of "
        "dialogue exactly as written, in quotes. Length: about 60 words."
    )
    assert why(prose + copied) == "it copies 24 words of the prompt's own text in a row"
    assert why(prose + copied.rsplit(" Length", 1)[0]) is None  # 20: a quotation, say


# -- prose --------------------------------------------------------------------------------


def test_prose_naming_the_character_a_place_and_a_short_phrase_is_not_an_echo():
    answer = (
        "Oskar Brand walks down to the quay at Port Varna, collar up against the northern sea. "
        "The morning ferry never arrived; the ledger says it left. “Someone lied,” he says, "
        "and you are left with the cold."
    )
    assert why(answer) is None


def test_one_bare_heading_in_passing_is_not_an_echo():
    assert why("Oskar checks the ledger at the quay and finds it wrong.\nEND OF SCENE") is None
    assert why("“WORLD: that is all he ever talks about,” Oskar mutters.") is None


def test_case_and_dialogue_that_merely_resemble_a_heading_are_not_an_echo():
    assert why("You are late, Oskar thinks. The world is cold; the scenario is grim.") is None
    assert why("“YOU ARE a fool!” the harbour master shouts.") is None


def test_an_empty_answer_is_not_an_echo():
    assert why("") is None and why("   ") is None


# -- what the prompt's content uses is no evidence ----------------------------------------


def test_a_heading_a_player_wrote_in_an_action_is_no_evidence():
    messages = [
        Message("system", "WORLD: Port Varna\nA harbour."),
        Message("user", "ACTIONS TO RESOLVE (in this order)\n1. [Oskar] I shout WORLD: listen"),
    ]
    assert [m.name for m in prompt_markers("\n".join(m.content for m in messages))] == [
        '"ACTIONS TO RESOLVE"'
    ]
    assert why("WORLD: listen", messages) is None  # the offline narrator's own resolution


def test_a_heading_like_line_of_a_quoted_story_is_no_evidence():
    story = "DAWN: the harbour wakes grey and quiet."
    messages = [Message("system", "You write Oskar's epilogue."), Message("user", story)]
    assert echo_reason("DAWN: the harbour wakes grey and quiet.", messages) is not None
    echo = PromptEcho.of(messages, quoted=[story])
    assert echo.why("DAWN: the harbour wakes grey and quiet.") is None


def test_the_reason_names_headings_and_never_quotes_the_prompts_content():
    answer = "YOU ARE: Oskar Brand - Internal (only you know this): OSKAR-SECRET-MARKER"
    assert "MARKER" not in why(answer)


# -- the offline narrator is never flagged ------------------------------------------------

AWKWARD = st.sampled_from(
    [
        "YOU ARE:",
        "SCENARIO: The missing ferry",
        "WORLD: Port Varna",
        "- Words: 60",
        "- Character:",
        "END OF SCENE",
        "SCENE TO NARRATE:",
        "I check the ledger at the quay",
        "Oskar Brand",
    ]
)
TEXT = st.one_of(
    AWKWARD,
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=60),
    st.lists(AWKWARD, min_size=1, max_size=3).map(" ".join),
).map(lambda text: " ".join(text.split()))  # prompts hold texts flattened (context.flat)
FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(
    acts=st.lists(st.tuples(TEXT, st.sampled_from(["success", "failure", "partial"])), max_size=3),
    facts=st.lists(TEXT, max_size=2),
    words=st.sampled_from([10, 30, 100, 300]),
    variant=st.integers(0, 3),
)
def test_the_offline_narrators_scenes_are_never_an_echo(acts, facts, words, variant):
    scene = Scene(
        character="Oskar Brand",
        intentions=tuple(Act("Oskar Brand", text) for text, _ in acts),
        results=tuple(Act("Oskar Brand", text, result) for text, result in acts),
        facts=tuple(facts),
        words=words,
    )
    lines = [f"- Intention: {a.text}" for a in scene.intentions]
    lines += [f"- Result: {a.who}: {a.text} ({a.result})" for a in scene.results]
    lines += [f"- Fact: {fact}" for fact in scene.facts]
    user = USER.replace("- Intention: I check the ledger at the quay", "\n".join(lines))
    messages = [Message("system", SYSTEM), Message("user", user)]
    prose = scene.prose(Dice.of(messages, variant))
    assert echo_reason(prose, messages) is None, prose


@FUZZ
@given(stories=st.lists(TEXT.filter(str.strip), max_size=3), facts=st.lists(TEXT, max_size=2))
def test_the_offline_narrators_epilogues_are_never_an_echo(stories, facts):
    told = Epilogue(
        character="Oskar Brand",
        memories=tuple(story.split(". ")[0] for story in stories),
        facts=tuple(facts),
        words=200,
    )
    user = "\n".join(
        [
            "Oskar Brand'S STORY (their own narratives, oldest first)",
            *stories,
            "",
            "WHAT Oskar Brand WITNESSED SINCE (shared outcomes, oldest first)",
            *(f"- Outcome 1:\n  - Fact: {fact}" for fact in facts),
        ]
    )
    messages = [Message("system", SYSTEM), Message("user", user)]
    prose = told.prose(Dice.of(messages))
    assert PromptEcho.of(messages, quoted=stories).why(prose) is None, prose

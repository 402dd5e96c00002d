"""Token counting and fitting a conversation into a budget."""

from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmix.llm.base import Message
from lmix.llm.tokens import (
    DEFAULT_CONTEXT_WINDOW,
    context_window,
    count_message_tokens,
    count_tokens,
    fit_messages,
    fits,
    most_tokens,
)

SYSTEM = Message("system", "YOU ARE: Mira. " + "The rules of the world are long. " * 20)


def history(n: int) -> list[Message]:
    return [
        Message("user" if i % 2 == 0 else "assistant", f"Turn {i}: " + "words " * 30)
        for i in range(n)
    ]


def test_count_tokens():
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert count_tokens("<|endoftext|>") > 1  # ordinary text here, not a special token


def test_count_message_tokens_adds_framing_per_message():
    messages = [Message("system", "hello world"), {"role": "user", "content": "hello"}]
    assert count_message_tokens(messages) == 3 + (3 + 2) + (3 + 1)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=300), min_size=1, max_size=4))
def test_bytes_bound_the_tokens_of_any_text(texts):
    messages = [Message("user", text) for text in texts]
    assert count_message_tokens(messages) <= most_tokens(messages)


def test_fits_encodes_only_when_the_bytes_do_not_prove_it():
    short = [Message("system", "héllo wörld " * 10)]  # 67 tokens, at most 146 by its bytes
    with mock.patch("lmix.llm.tokens._encoding", side_effect=AssertionError("encoded")):
        assert fits(short, budget=200)
        assert fit_messages(short[0], history(2), budget=2_000) == ([short[0], *history(2)], 0)
    # Over the bytes bound but within the budget: counted, and it fits; then it does not.
    assert count_message_tokens(short) == 67
    assert fits(short, budget=100)
    assert not fits(short, budget=66)


def test_everything_fits():
    turns = history(4)
    fitted, dropped = fit_messages(SYSTEM, turns, budget=10_000)
    assert fitted == [SYSTEM, *turns] and dropped == 0


def test_oldest_turns_go_first_and_a_note_says_so():
    turns = history(20)
    budget, reserve = 600, 100
    fitted, dropped = fit_messages(SYSTEM, turns, budget=budget, reserve=reserve)
    assert 0 < dropped < 20
    assert fitted[0] == SYSTEM
    assert fitted[1].content == f"[{dropped} earlier turns omitted]"
    assert fitted[2:] == turns[dropped:]  # the newest, in order
    assert count_message_tokens(fitted) <= budget - reserve
    # One more turn would not have fitted: we drop no more than needed.
    assert count_message_tokens([*fitted[:2], turns[dropped - 1], *fitted[2:]]) > budget - reserve


def test_the_system_message_is_never_cut():
    fitted, dropped = fit_messages(SYSTEM, history(3), budget=10)
    assert fitted[0] == SYSTEM
    assert dropped == 3
    assert fitted[1].content == "[3 earlier turns omitted]"


@pytest.mark.parametrize(
    ("model_id", "window"),
    [
        ("gpt-4o-mini", 128_000),
        ("gpt-4", 8_192),
        ("gpt-4-1106-preview", 128_000),
        ("gpt-4.1", 1_047_576),
        ("gpt-3.5-turbo", 16_385),
        ("claude-3-5-sonnet-latest", 200_000),
        ("llama3.1:8b", 131_072),
        ("meta-llama/Llama-3.1-70B-Instruct", 131_072),
        ("llama3:8b", 8_192),
        ("narrator", 32_768),
        ("some-unknown-model", DEFAULT_CONTEXT_WINDOW),
    ],
)
def test_context_window(model_id, window):
    assert context_window(model_id) == window

"""Model parameters are validated before they reach a provider."""

import pydantic
import pytest

from lmix.llm.params import validate_params


def test_valid_parameters_come_back_without_unset_ones():
    data = {"temperature": 0.7, "max_tokens": 256, "stop": ["\n\n"], "top_p": None}
    assert validate_params(data) == {"temperature": 0.7, "max_tokens": 256, "stop": ["\n\n"]}
    assert validate_params({}) == {}


@pytest.mark.parametrize(
    "data",
    [
        {"temperature": 2.5},
        {"temperature": "0.5"},  # strings are a form mistake, not a number
        {"max_tokens": 0},
        {"max_tokens": 200_001},
        {"max_tokens": True},
        {"top_p": 1.1},
        {"presence_penalty": -2.1},
        {"frequency_penalty": 3},
        {"stop": ["a", "b", "c", "d", "e"]},
        {"stop": "END"},
        {"seed": 1},  # unknown keys are refused
    ],
)
def test_invalid_parameters_are_refused(data):
    with pytest.raises(pydantic.ValidationError):
        validate_params(data)


def test_context_size_is_validated_and_never_sent_to_a_provider():
    from lmix.llm.params import MAX_CONTEXT_SIZE, MIN_CONTEXT_SIZE, request_params

    params = validate_params({"context_size": 4096, "temperature": 0.5})
    assert params == {"context_size": 4096, "temperature": 0.5}
    assert request_params(params) == {"temperature": 0.5}
    for bad in (MIN_CONTEXT_SIZE - 1, MAX_CONTEXT_SIZE + 1, 4096.0, "4096"):
        with pytest.raises(pydantic.ValidationError):
            validate_params({"context_size": bad})


def test_every_sampler_preset_is_a_valid_config_of_sampling_only():
    from lmix.llm.params import SAMPLER_PRESETS

    assert {"Balanced", "Creative", "Precise"} <= set(SAMPLER_PRESETS)
    for values in SAMPLER_PRESETS.values():
        assert validate_params(values) == values
        # A preset fills in sampling; length, stops and the budget stay the user's.
        assert set(values) == {"temperature", "top_p", "frequency_penalty", "presence_penalty"}
    assert SAMPLER_PRESETS["Creative"]["temperature"] > SAMPLER_PRESETS["Precise"]["temperature"]


def test_a_stop_sequence_longer_than_100_characters_is_refused():
    with pytest.raises(pydantic.ValidationError):
        validate_params({"stop": ["x" * 101]})

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

"""The medium pass fits its prompts to the model's own context size when the model sets one."""

from lmix.llm.tokens import count_message_tokens
from lmix.models import LLMModel
from synthesis.medium.prompts import fit_messages

ITEMS = [f"- Outcome {n}: the rain keeps falling on the harbor, nobody moves." for n in range(60)]


def fitted(config: dict):
    model = LLMModel(model_id="gpt-4o", config=config)  # a 128k window by its family
    return fit_messages(
        "SYSTEM-MARKER",
        "{scene}\n{outcomes}",
        fixed={"scene": "SCENE-MARKER"},
        parts={"outcomes": ITEMS},
        drop_order=["outcomes"],
        model=model,
        reply=100,
    )


def test_a_models_context_size_trims_the_oldest_items_and_keeps_the_fixed_parts():
    assert "Outcome 0:" in fitted({})[1].content  # the family's window holds everything
    messages = fitted({"context_size": 600})
    assert count_message_tokens(messages) <= 600 - 100
    text = messages[1].content
    assert "SCENE-MARKER" in text and messages[0].content == "SYSTEM-MARKER"
    assert "Outcome 59:" in text and "Outcome 0:" not in text

"""What the prompt of a persona imported from a card or a LuminoraCore template gains: the
instructions its source meant for the model that plays it, short and bounded.

From a card: its `system_prompt` and `post_history_instructions` (both written to steer the
character's model). Not its creator notes (the V2 spec forbids them in prompts), tags,
creator or version. From a template: behavioural rules, vocabulary, fillers and forbidden
topics. Only the persona's own prompt reads them (productions/knowledge.py, YOU ARE).
"""

from .luminora import luminora_instructions

INSTRUCTIONS_MAX = 2_000  # characters; a card's long system prompt is cut, not the knowledge


def imported_instructions(imported: dict) -> list[str]:
    """Lines for the prompt, at most INSTRUCTIONS_MAX characters together (the last one cut
    with "…"); [] for a persona made in LMiX."""
    if not isinstance(imported, dict):  # editable in the admin: anything else is nothing
        return []
    card = imported.get("card") if isinstance(imported.get("card"), dict) else {}
    lines = [
        line.strip()
        for key in ("system_prompt", "post_history_instructions")
        for line in str(card.get(key) or "").splitlines()
        if line.strip()
    ]
    if isinstance(imported.get("luminoracore"), dict):
        lines += luminora_instructions(imported["luminoracore"])
    kept, used = [], 0
    for line in lines:
        if used + len(line) > INSTRUCTIONS_MAX:
            room = INSTRUCTIONS_MAX - used
            if room > 20:
                kept.append(line[: room - 1].rstrip() + "…")
            break
        kept.append(line)
        used += len(line)
    return kept

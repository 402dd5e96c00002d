"""System prompt templates: an author's text with placeholders, expanded for one speaker.

Placeholders (case-insensitive; spaces inside the braces are allowed):
- {{char}}: the speaker's own name;
- {{user}} or {{director}}: the Director, who writes the [Director] notes;
- {{world}}, {{scenario}}: their names (their descriptions are part of the knowledge);
- {{knowledge}}: everything this speaker may know (DESIGN.md §3), compiled for it alone;
- {{lore}}: the world's lore entries the recent conversation called up that it may know.

The knowledge and the lore are in every prompt exactly once: a template places each at most
once, and where it leaves one out it is appended, so no template can edit them away. No
placeholder names another character, so none can pull in what this speaker may not know;
expansion is one pass, so text a placeholder brings in (a truth, a lore entry) is never
expanded in turn.
"""

import re
from functools import cache
from pathlib import Path

TEMPLATE = Path(__file__).parent / "templates" / "authoring" / "system_prompt.txt"
TEMPLATE_MAX = 20_000
PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
DIRECTOR = "the Director"
PLACEHOLDERS: dict[str, str] = {
    "char": "the character's own name",
    "user": "the Director (the person steering the scene)",
    "director": "the Director (the person steering the scene)",
    "world": "the world's name",
    "scenario": "the scenario's name",
    "knowledge": "everything this character may know; added at the end when left out",
    "lore": "lore entries the conversation called up; added at the end when left out",
}
# Enforced blocks: at most once in a template, appended when it has none.
ENFORCED = ("knowledge", "lore")


@cache
def default_template() -> str:
    """What an assistant without a template of its own is given."""
    return TEMPLATE.read_text().strip()


def _names(text: str) -> list[str]:
    return [match.group(1).lower() for match in PLACEHOLDER.finditer(text)]


def template_problems(text: str) -> list[str]:
    """What is wrong with a template, in words for its author; [] when it is fine."""
    problems = []
    unknown = sorted(
        {m.group(1) for m in PLACEHOLDER.finditer(text) if m.group(1).lower() not in PLACEHOLDERS}
    )
    if unknown:
        problems.append(
            f"Unknown placeholder{'s' if len(unknown) > 1 else ''}: "
            + ", ".join(f"{{{{{name}}}}}" for name in unknown)
            + ". Use "
            + ", ".join(f"{{{{{name}}}}}" for name in PLACEHOLDERS)
            + "."
        )
    names = _names(text)
    problems += [
        f"{{{{{name}}}}} may appear only once." for name in ENFORCED if names.count(name) > 1
    ]
    return problems


def template_render(
    text: str, *, char: str, world: str, scenario: str, knowledge: str, lore: str = ""
) -> str:
    """The system prompt: `text` (the default template when blank) with its placeholders
    expanded, and the knowledge and lore each present exactly once.

    A stored template is validated (`template_problems`), but one written around the API is
    still safe: unknown placeholders stay as text, a repeated enforced one expands once.
    """
    text = text.strip() or default_template()
    values = {
        "char": char,
        "user": DIRECTOR,
        "director": DIRECTOR,
        "world": world,
        "scenario": scenario,
        "knowledge": knowledge.strip(),
        "lore": lore.strip(),
    }
    for name in ENFORCED:
        if not values[name]:
            # An empty block leaves no gap where it stood.
            text = re.sub(r"\{\{\s*" + name + r"\s*\}\}\s*", "", text, flags=re.IGNORECASE)
    placed: set[str] = set()

    def expand(match: re.Match) -> str:
        name = match.group(1).lower()
        if name not in values:
            return match.group(0)
        if name in ENFORCED:
            if name in placed:
                return ""
            placed.add(name)
        return values[name]

    prompt = PLACEHOLDER.sub(expand, text).strip()
    missing = [values[name] for name in ENFORCED if name not in placed and values[name]]
    return "\n\n".join([prompt, *missing]) if prompt else "\n\n".join(missing)

"""LuminoraCore personality templates (`persona`, `core_traits`, `linguistic_profile`,
`behavioral_rules`, …; luminoracore/schema/personality.schema.json) as personas.

The persona takes its name, description (universal truth), tags, a style line made of its
core traits and tone, its first greeting and its sample responses as example dialogue. The
whole template but the persona block's name, description and tags is kept in
`Persona.imported["luminoracore"]`; the prompt reads its behavioural rules, vocabulary,
fillers and forbidden topics from there (`imported_instructions`). The shape is checked
(required blocks, types); enum values are not, since published templates stray from them.
"""

from typing import Any

from lmix.models import NAME_MAX, TEXT_MAX

from .card_format import no_nul, number, obj, refuse, text, texts
from .cards import PersonaDraft, _tags

REQUIRED = ("persona", "core_traits", "linguistic_profile", "behavioral_rules")


def looks_like_template(data: Any) -> bool:
    return isinstance(data, dict) and "persona" in data and "core_traits" in data


def template_parse(template: Any) -> PersonaDraft:
    """A LuminoraCore template (parsed JSON) as a persona draft.

    Raises:
        ApplicationError: a required block missing or a field of the wrong type, naming it.
    """
    if not isinstance(template, dict):
        refuse("A LuminoraCore template must be a JSON object.")
    no_nul(template)
    for key in REQUIRED:
        if key not in template:
            refuse(f"Not a LuminoraCore template: `{key}` is missing.")
    persona = obj(template["persona"], "persona", required=True)
    name = text(persona.get("name"), "persona.name", limit=NAME_MAX, required=True)
    description = text(persona.get("description"), "persona.description", limit=TEXT_MAX)
    for key in ("version", "author", "language"):
        text(persona.get(key), f"persona.{key}")
    texts(persona.get("compatibility"), "persona.compatibility")
    traits = obj(template["core_traits"], "core_traits", required=True)
    for key, value in traits.items():
        text(value, f"core_traits.{key}")
    profile = obj(template["linguistic_profile"], "linguistic_profile", required=True)
    for key in ("tone", "vocabulary", "fillers"):
        texts(profile.get(key), f"linguistic_profile.{key}")
    for key in ("syntax", "punctuation_style"):
        text(profile.get(key), f"linguistic_profile.{key}")
    rules = texts(template["behavioral_rules"], "behavioral_rules")
    triggers = obj(template.get("trigger_responses"), "trigger_responses") or {}
    for key, value in triggers.items():
        texts(value, f"trigger_responses.{key}")
    for key, value in (
        obj(template.get("advanced_parameters"), "advanced_parameters") or {}
    ).items():
        number(value, f"advanced_parameters.{key}")
    guards = obj(template.get("safety_guards"), "safety_guards") or {}
    texts(guards.get("forbidden_topics"), "safety_guards.forbidden_topics")
    texts(guards.get("content_filters"), "safety_guards.content_filters")
    examples = obj(template.get("examples"), "examples") or {}
    samples = examples.get("sample_responses") or []
    if not isinstance(samples, list):
        refuse("examples.sample_responses must be a list of objects.")
    for i, sample in enumerate(samples):
        obj(sample, f"examples.sample_responses[{i}]", required=True)
        for key in ("input", "output", "context"):
            text(
                sample.get(key), f"examples.sample_responses[{i}].{key}", required=key != "context"
            )
    if not rules:
        refuse("behavioral_rules must hold at least one rule.")
    tags, _extra = _tags(texts(persona.get("tags"), "persona.tags"))
    name = name.strip()
    greetings = triggers.get("on_greeting") or []
    dialogue = "\n\n".join(f"User: {s['input']}\n{name}: {s['output']}" for s in samples)
    kept = dict(template)
    kept["persona"] = {k: v for k, v in persona.items() if k not in ("name", "description", "tags")}
    fields = {
        "name": name,
        "universal_truth": description,
        "tags": tags,
        "style": _style(traits, profile)[:TEXT_MAX],
        "greeting": (greetings[0] if greetings else "")[:TEXT_MAX],
        "example_dialogue": dialogue[:TEXT_MAX],
    }
    return PersonaDraft(fields=fields, imported={"luminoracore": kept})


def _style(traits: dict, profile: dict) -> str:
    """One line: "Adventurer; energetic; conversational. Tone: bold. Syntax: varied."."""
    parts = [str(value) for value in traits.values() if value]
    line = "; ".join(parts).capitalize() + "." if parts else ""
    if profile.get("tone"):
        line += f" Tone: {', '.join(profile['tone'])}."
    if profile.get("syntax"):
        line += f" Syntax: {profile['syntax']}."
    return line.strip()


def luminora_instructions(template: dict) -> list[str]:
    """The parts of a kept template meant for the prompt, one line each."""
    profile = template.get("linguistic_profile") or {}
    guards = template.get("safety_guards") or {}
    lines = [f"Rule: {rule}" for rule in template.get("behavioral_rules") or []]
    if profile.get("vocabulary"):
        lines.append(f"Words you favour: {', '.join(map(str, profile['vocabulary']))}")
    if profile.get("fillers"):
        lines.append(f"Fillers you use: {', '.join(map(str, profile['fillers']))}")
    if guards.get("forbidden_topics"):
        lines.append(f"Topics you avoid: {', '.join(map(str, guards['forbidden_topics']))}")
    return lines

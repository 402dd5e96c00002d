"""Compile: the messages of the bones and flesh calls, from the templates in
synthesis/templates/synthesis/, fitted to the model's context window.

The bones prompt is public: the world, the scenario and how anyone sees the characters
present (universal and external truth), never an internal truth, because the outcome it
produces goes to everyone. The flesh prompt is the character's own: its compiled knowledge
(productions/knowledge.py) and its own recent narratives; in a shared frame it is as public
as the bones prompt, because everyone reads the prose.

Each template holds a system part and a user part, split by a `=== USER ===` line. The
user part's `{sections}` are the pass kind's named components, in its declared order
(components.py; the base ones are registered here, the character's state ones by
synthesis/state/components.py). The flesh prompt ends with the scene to narrate, rendered
from the `Scene` the offline narrator is handed (lmix/llm/offline.py).
"""

from collections.abc import Sequence
from functools import cache
from pathlib import Path

from lmix.llm.base import Message
from lmix.llm.client import params_for
from lmix.llm.offline import Act, Scene
from lmix.llm.tokens import context_window, fits
from lmix.models import LLMModel
from synthesis.models import Seat

from ..models import Outcome, Trigger
from .components import BONES, Component, PassKind, component_register, flesh_kind
from .context import PENDING_MAX, Action, MediumContext, flat

TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "synthesis"
USER_PART = "=== USER ==="
NONE = "(none)"
BONES_REPLY_TOKENS = 1024  # the most a bones answer may take, however many actions
# A bones answer's budget: its braces, facts and interrupts, then one entry per action.
BONES_BASE_TOKENS = 200
BONES_ACTION_TOKENS = 150
# Words a narrative aims at by pscale (−3 ≈ a second … +1 ≈ an hour; +2 like +1).
WORD_BUDGETS = {-3: 10, -2: 30, -1: 100, 0: 300, 1: 1000, 2: 1000}


@cache
def template(name: str) -> tuple[str, str]:
    """A template's system and user parts."""
    system, user = (TEMPLATES / name).read_text().split(f"\n{USER_PART}\n")
    return system.strip(), user.strip()


def word_budget(pscale: int) -> int:
    return WORD_BUDGETS[min(max(pscale, -3), 2)]


def reply_cap(pscale: int) -> int:
    """The most tokens a narrative of this pscale may stream."""
    return word_budget(pscale) * 2


def bones_reply_tokens(actions: int) -> int:
    """The tokens a bones answer resolving `actions` actions may take (its `max_tokens`)."""
    return min(BONES_BASE_TOKENS + BONES_ACTION_TOKENS * max(actions, 1), BONES_REPLY_TOKENS)


def action_line(number: int, action: Action) -> str:
    marks = ""
    if action.interruptive:
        marks = " (interruptive, acting on: " + ", ".join(action.targets) + ")"
        marks = marks if action.targets else " (interruptive)"
    return f"{number}. [{action.label}]{marks} {action.text}"


def intention_line(action: Action) -> str:
    return f"- {action.label} intends: {action.text}"


def outcome_lines(outcome: Outcome, labels: dict) -> str:
    lines = [f"- Outcome {outcome.seq}:"]
    lines += [f"  - {result_text(entry, labels)}" for entry in outcome.actions_resolved]
    lines += [f"  - Fact: {flat(fact)}" for fact in outcome.world_facts]
    lines += [
        f"  - Interrupts {_label(labels, entry.get('seat'))}: {flat(entry.get('reason', ''))}"
        for entry in outcome.interrupts
    ]
    return "\n".join(lines)


def result_text(entry: dict, labels: dict) -> str:
    act = result_act(entry, labels)
    return f"{act.who}: {act.text} ({act.result})"


def result_act(entry: dict, labels: dict) -> Act:
    """A resolved action of an outcome, its character by `labels`."""
    return Act(
        _label(labels, entry.get("seat")), flat(entry.get("action", "")), entry.get("result", "")
    )


def _label(labels: dict, seat_id: object) -> str:
    return next((name for pk, name in labels.items() if str(pk) == str(seat_id)), "Someone")


def public_character(seat: Seat, label: str) -> str:
    persona = seat.persona
    lines = [f"- {label}"]
    if persona.universal_truth.strip():
        lines.append(f"  - {flat(persona.universal_truth, 4000)}")
    if persona.external_truth.strip():
        lines.append(f"  - As others see them: {flat(persona.external_truth, 4000)}")
    return "\n".join(lines)


def public_setting(ctx: MediumContext) -> dict[str, str]:
    """The fields of a public prompt: the setting and the characters as anyone sees them."""
    production = ctx.frame.production
    return {
        "world_name": production.world.name,
        "world": production.world.description.strip(),
        "scenario_name": production.scenario.name,
        "scenario": production.scenario.description.strip(),
        "characters": "\n".join(public_character(s, ctx.labels[s.pk]) for s in ctx.seats),
    }


def compile_bones(ctx: MediumContext, model: LLMModel) -> list[Message]:
    """What the bones call is sent: public knowledge, earlier outcomes, the actions."""
    system, user = kind_template(BONES)
    system = system.format(**public_setting(ctx))
    interrupt = ""
    if ctx.pass_.trigger == Trigger.INTERRUPT:
        interrupt = f"INTERRUPT: {ctx.label} must react at once: {ctx.interrupt_reason}\n"
    return fit_messages(
        system,
        user,
        fixed={"name": ctx.label, "interrupt": interrupt},
        parts={
            **BONES.parts(ctx, None),
            "actions": [action_line(i, a) for i, a in enumerate(ctx.to_resolve, 1)],
        },
        drop_order=BONES.drop_order,
        model=model,
        reply=bones_reply_tokens(len(ctx.to_resolve)),
    )


def compile_flesh(
    ctx: MediumContext, outcome: Outcome | None, model: LLMModel, *, scene: Scene | None = None
) -> list[Message]:
    """What the flesh call is sent: the character's knowledge, recent experience and state
    (in a shared frame: public knowledge and the story so far), what happened since, and
    the scene to narrate (`flesh_scene`: the actions, their results, the facts; built here
    unless the caller built it already)."""
    scene = scene or flesh_scene(ctx, outcome)
    words = scene.words
    kind = flesh_kind(shared=ctx.shared)
    system, user = kind_template(kind)
    if ctx.shared:
        system = system.format(**public_setting(ctx), words=words)
    else:
        system = system.format(knowledge=ctx.knowledge, name=ctx.label, words=words)
    return fit_messages(
        system,
        user,
        fixed={"name": ctx.label, "scene": "\n".join(scene_lines(scene, shared=ctx.shared))},
        parts=kind.parts(ctx, outcome),
        drop_order=kind.drop_order,
        model=model,
        reply=reply_cap(ctx.pscale),
    )


def kind_template(kind: PassKind) -> tuple[str, str]:
    """A pass kind's template, its user part's `{sections}` laid out (titled, in order)."""
    system, user = template(kind.template)
    return system, user.replace("{sections}", kind.sections())


def _since(ctx: MediumContext, outcome: Outcome | None) -> list[str]:
    """The outcomes since the last narrative but those the scene to narrate tells."""
    in_scene = {o.pk for o in resolving_outcomes(ctx, outcome)}
    return [outcome_lines(o, ctx.labels) for o in ctx.outcomes if o.pk not in in_scene]


# The base components (components.py). Outcomes and intentions are bounded by what gather
# reads (LMIX_MEDIUM_OUTCOMES_CONTEXT, PENDING_MAX); narratives by the word budgets.
OUTCOME_MAX = 20000  # one outcome's lines; its fields are bounded where it is stored
for _component in (
    Component(
        "earlier_outcomes",
        lambda ctx, _: [outcome_lines(o, ctx.labels) for o in ctx.outcomes],
        items_max=100,
        item_max=OUTCOME_MAX,
    ),
    Component(
        "under_way",
        lambda ctx, _: [intention_line(a) for a in ctx.pending],
        items_max=PENDING_MAX,
        item_max=600,
    ),
    Component(
        "outcomes",
        _since,
        items_max=100,
        item_max=OUTCOME_MAX,
    ),
    Component(
        "pending",
        lambda ctx, _: [intention_line(a) for a in ctx.pending],
        items_max=PENDING_MAX,
        item_max=600,
    ),
    # Own narratives in a per-character frame, the shared ones in a shared frame (gather
    # reads which); each at most a +1 pscale's budget.
    Component(
        "recent",
        lambda ctx, _: [flat(n.text, 8000) for n in ctx.recent],
        items_max=10,
        item_max=8000,
    ),
    Component(
        "story",
        lambda ctx, _: [flat(n.text, 8000) for n in ctx.recent],
        items_max=10,
        item_max=8000,
    ),
):
    component_register(_component)


def resolving_outcomes(ctx: MediumContext, outcome: Outcome | None) -> list[Outcome]:
    """The outcomes that resolved this character's own liquid: this pass's, and any other
    character's that resolved it together with theirs first."""
    own = {str(x.pk) for x in ctx.own}
    found = {o.pk: o for o in ctx.outcomes if own & set(o.liquid_ids or [])}
    if outcome is not None:
        found[outcome.pk] = outcome
    return sorted(found.values(), key=lambda o: o.seq)


def flesh_scene(ctx: MediumContext, outcome: Outcome | None) -> Scene:
    """The scene a narrative tells: the flesh prompt's SCENE TO NARRATE block
    (`scene_lines`) and what the offline narrator reads, so both hold the same."""
    if ctx.shared:
        # Everyone reads the prose: others' intentions only where everyone reads liquid.
        intentions = [
            Act(ctx.labels.get(x.seat_id, "Someone"), flat(x.content))
            for x in ctx.own
            if ctx.visible_liquid
        ]
    else:
        intentions = [Act(ctx.label, flat(x.content)) for x in ctx.own]
    results: list[Act] = []
    facts: list[str] = []
    for resolved in resolving_outcomes(ctx, outcome):
        results += [result_act(entry, ctx.labels) for entry in resolved.actions_resolved]
        facts += [flat(fact) for fact in resolved.world_facts]
    if ctx.interrupt_outcome is not None and outcome != ctx.interrupt_outcome:
        facts += [flat(fact) for fact in ctx.interrupt_outcome.world_facts]
    return Scene(
        character=ctx.label,
        intentions=tuple(intentions),
        interrupts=(ctx.interrupt_reason,) if ctx.interrupt_reason else (),
        results=tuple(results),
        facts=tuple(facts),
        words=word_budget(ctx.pscale),
    )


def scene_lines(scene: Scene, *, shared: bool) -> list[str]:
    lines = [f"- Character: {scene.character}"]
    # A shared scene's intentions are everyone's: each says whose.
    lines += [f"- Intention: {f'{a.who}: ' if shared else ''}{a.text}" for a in scene.intentions]
    lines += [f"- Interrupt: {reason}" for reason in scene.interrupts]
    lines += [f"- Result: {a.who}: {a.text} ({a.result})" for a in scene.results]
    lines += [f"- Fact: {fact}" for fact in scene.facts]
    lines.append(f"- Words: {scene.words}")
    return lines


def fit_messages(
    system: str,
    user: str,
    *,
    fixed: dict[str, str],
    parts: dict[str, list[str]],
    drop_order: Sequence[str],
    model: LLMModel,
    reply: int,
) -> list[Message]:
    """The messages, leaving out the oldest droppable items until they fit the model's
    window with `reply` tokens to spare. The system part and the fixed fields are never
    cut: without them the call makes no sense, and the provider's error says so plainly."""
    # The model's own context size (its defaults in the model form), else its known window.
    window = params_for(model).get("context_size") or context_window(model.model_id)
    budget = window - min(reply, window // 2)
    parts = {name: list(items) for name, items in parts.items()}
    while True:
        text = user.format(**fixed, **{k: "\n".join(v) or NONE for k, v in parts.items()})
        messages = [Message("system", system), Message("user", text)]
        if fits(messages, budget):
            return messages
        victim = next((name for name in drop_order if parts[name]), None)
        if victim is None:
            return messages
        parts[victim].pop(0)

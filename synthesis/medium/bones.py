"""Bones: the shared outcome. The model proposes (a validated `Bones`); code enforces the
rules (`bones_apply`); the outcome is stored under the frame's lock with the frame's next
sequence number and routed: broadcast, and an interrupt for each target.

Serialisation per frame is optimistic: the model is called outside any transaction, then
the store locks the frame and checks that no outcome appeared since the context was
gathered; if one did, the context is gathered again and the model called again. The last
of LMIX_MEDIUM_BONES_ATTEMPTS tries gathers, calls and stores while holding the lock, so a
busy frame cannot starve a pass. Either way each outcome is computed from every earlier one.
"""

import logging
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Self, get_args

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, Q
from pydantic import BaseModel, ConfigDict, Field, field_validator

from lmix.llm import structured
from lmix.llm.base import LLMError, LLMInvalidOutput, Message
from lmix.llm.client import llm_structured
from lmix.llm.echo import PromptEcho
from lmix.models import LLMModel
from synthesis.frame_events import lock_frame, model_waiting, next_seq

from ..enqueue import scene_check_enqueue, state_pass_enqueue
from ..events import notify_outcome
from ..guard import public_words, seat_secrets, secret_flags
from ..guard_opinion import (
    SecondOpinion,
    opinion_context,
    opinion_flags,
    opinion_max_tokens,
    opinion_messages,
)
from ..models import Frame, FrameMode, LeakGuard, Outcome, Pass, Rewind, Seat
from .context import (
    TEXT_MAX,
    Action,
    LeaseLost,
    MediumContext,
    PassLease,
    flat,
    gather,
    held_pass,
)
from .prompts import bones_reply_tokens, compile_bones
from .shaping import prompt_skills, skill_refs

logger = logging.getLogger(__name__)
Result = Literal["success", "partial", "failure", "interrupted"]
FACTS_MAX = 12
LOCATION_MAX = 120


class ResolvedAction(BaseModel):
    # Strict: an answer of other keys is not an outcome (a model once answered
    # {"INTERRUPTED": {...}}, which validated as an empty one).
    model_config = ConfigDict(extra="forbid")

    seat: str = Field(description="The character's name, exactly as written in brackets.")
    action: str = Field(description="What anyone present saw them do.")
    result: Result

    @field_validator("result", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value


class InterruptTarget(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seat: str = Field(description="The interrupted character's name.")
    reason: str = Field(default="", description="One sentence: what they must react to.")


class Bones(BaseModel):
    """The outcome as the medium model answers it, before the rules are applied. Which
    actions it must resolve depends on the moment: `bones_check` says."""

    model_config = ConfigDict(extra="forbid")

    actions_resolved: list[ResolvedAction]
    world_facts: list[str] = Field(default_factory=list)
    interrupts: list[InterruptTarget] = Field(default_factory=list)
    # Optional (older answers have none): a new place closes the scene (synthesis/scenes/).
    location: str = Field(
        default="", description="Where the characters now are, only if they moved; else empty."
    )

    @classmethod
    def offline_answer(cls, actions: Sequence[Action], variant: int = 0) -> Self:
        """The offline narrator's answer to the actions the prompt lists (`ctx.to_resolve`):
        each succeeds as written, and an interruptive one interrupts the characters it acts
        on. It states no world facts: it knows none beyond the actions, and a fact that
        restates one showed every action twice on the outcome's card."""
        resolved = [ResolvedAction(seat=a.label, action=a.text, result="success") for a in actions]
        interrupts = [
            InterruptTarget(seat=target, reason=f"{action.label}: {action.text}")
            for action in actions
            if action.interruptive
            for target in action.targets
            if target != action.label
        ]
        return cls(actions_resolved=resolved, interrupts=interrupts)


@dataclass(frozen=True)
class Draft:
    """An outcome's fields once the rules are applied."""

    actions_resolved: list[dict]
    world_facts: list[str]
    interrupts: list[dict]
    witnesses: list[str]
    liquid_ids: list[str]
    location: str = ""


def _key(text: str) -> str:
    return " ".join(text.strip().strip("[]").split()).casefold()


def seat_lookup(ctx: MediumContext) -> dict[str, uuid.UUID]:
    """What a model may call a seat: its label, persona name, id, or a unique first name."""
    lookup: dict[str, uuid.UUID] = {}
    firsts = Counter(_key(s.persona.name).split(" ")[0] for s in ctx.seats)
    for seat in ctx.seats:
        name = _key(seat.persona.name)
        first = name.split(" ")[0]
        if firsts[first] == 1:
            lookup.setdefault(first, seat.pk)
        lookup[name] = seat.pk
        lookup[_key(ctx.labels[seat.pk])] = seat.pk
        lookup[str(seat.pk)] = seat.pk
    return lookup


def bones_apply(bones: Bones, ctx: MediumContext) -> Draft:
    """The rules, in code whatever the model answered:
    - actions only for seats whose committed liquid is being resolved (the acting one and
      same-pscale others): never a voluntary action for anyone else; at most one entry per
      such liquid, ordered canonically (commit time, then seat position);
    - an action the model left out stays unresolved here: `bones_check` refuses such an
      answer before it gets here, so nothing is ever made up from the player's own text;
    - seats named as the model pleases (name, first name, id) become this frame's seat ids;
    - interrupts only when an interruptive action was resolved, only for other seats of
      this frame, once each;
    - witnesses: the seats present (every seat of the frame, for now) and those involved.
    """
    lookup = seat_lookup(ctx)
    order: dict[uuid.UUID, int] = {}
    per_seat: dict[uuid.UUID, list] = {}
    for index, action in enumerate(ctx.to_resolve):
        order.setdefault(action.seat_id, index)
        per_seat.setdefault(action.seat_id, []).append(action)
    shown = ctx.visible_liquid

    def fallback(action) -> str:
        # Resolved liquid text is public only where the frame shows everyone's liquid.
        return action.text if shown else "acts"

    used: Counter = Counter()
    kept: list[tuple[int, int, dict]] = []
    for entry in bones.actions_resolved:
        seat_id = lookup.get(_key(entry.seat))
        if seat_id not in order or used[seat_id] >= len(per_seat[seat_id]):
            continue
        own = per_seat[seat_id][used[seat_id]]
        used[seat_id] += 1
        text = flat(entry.action) or fallback(own)
        kept.append((order[seat_id], used[seat_id], _entry(seat_id, text, entry.result)))
    acting = ctx.seat.pk
    kept.sort(key=lambda item: item[:2])
    resolved_seats = {uuid.UUID(item[2]["seat"]) for item in kept}
    interruptive = any(a.interruptive for a in ctx.to_resolve if a.seat_id in resolved_seats)
    frame_seats = {s.pk for s in ctx.seats}
    interrupts: list[dict] = []
    for entry in bones.interrupts if interruptive else []:
        seat_id = lookup.get(_key(entry.seat))
        taken = {i["seat"] for i in interrupts}
        if seat_id in frame_seats and seat_id != acting and str(seat_id) not in taken:
            reason = flat(entry.reason) or "Interrupted."
            interrupts.append({"seat": str(seat_id), "reason": reason})
    facts = list(dict.fromkeys(f for f in (flat(x) for x in bones.world_facts) if f))
    involved = resolved_seats | {uuid.UUID(i["seat"]) for i in interrupts}
    present = [s.pk for s in ctx.seats]
    return Draft(
        actions_resolved=[item[2] for item in kept],
        world_facts=facts[:FACTS_MAX],
        interrupts=interrupts,
        witnesses=[str(pk) for pk in present + sorted(involved - set(present), key=str)],
        liquid_ids=[str(a.liquid_id) for a in ctx.to_resolve if a.seat_id in resolved_seats],
        location=flat(bones.location, LOCATION_MAX),
    )


class BonesRefused(ValueError):
    """A schema-valid answer that is wrong in this moment: `problem` says what (first: a
    short summary of a refusal keeps its first words), the message adds how to fix it."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(f"{problem} {fix}")
        self.problem = problem


def bones_check(ctx: MediumContext, echo: PromptEcho | None = None) -> Callable[[Bones], None]:
    """What makes a schema-valid answer right in this moment (`llm_structured`'s `check`):
    one entry per action to resolve, naming its character (as `seat_lookup` reads names),
    a failed action being an entry with result "failure"; no entry for a character with
    nothing to resolve here; and, given the prompt's `echo`, texts that do not echo it
    (`bones_echo`). The refusal names exactly whom it expected: the model is
    asked once more with it, and it is the pass's reason if that answer is wrong too."""
    lookup = seat_lookup(ctx)
    wanted = Counter(action.seat_id for action in ctx.to_resolve)
    names = [ctx.labels[seat_id] for seat_id in wanted]  # in canonical order

    def check(bones: Bones) -> None:
        if echo is not None:
            bones_echo(bones, echo)
        got: Counter = Counter()
        strangers: list[str] = []
        for entry in bones.actions_resolved:
            seat_id = lookup.get(_key(entry.seat))
            if seat_id in wanted:
                got[seat_id] += 1
            else:
                strangers.append(flat(entry.seat, 80) or '""')
        missing = [ctx.labels[s] for s, n in wanted.items() if got[s] < n]
        if not missing and not strangers:
            return
        problems = []
        if missing:
            problems.append(f"missing {_names(missing)}")
        if strangers:
            problems.append(f"named {_names(strangers)}, who did not act here")
        expected = ", ".join(
            f"{name} ({wanted[seat_id]} actions)" if wanted[seat_id] > 1 else name
            for seat_id, name in zip(wanted, names, strict=True)
        )
        raise BonesRefused(
            f"The answer did not resolve the committed actions: expected {expected}; "
            f"{'; '.join(problems)}.",
            "Give actions_resolved one entry per expected action (seat: that name exactly; "
            'result "failure" for an action that fails).',
        )

    return check


def bones_echo(bones: Bones, echo: PromptEcho) -> None:
    """Refuse an outcome whose texts echo its prompt (lmix/llm/echo.py): its headings, or
    its instructions and setting word for word, are not what anyone did.

    Raises:
        BonesRefused: they do; the problem says how (the prompt's headings, never its text).
    """
    texts = [
        *(entry.action for entry in bones.actions_resolved),
        *bones.world_facts,
        *(entry.reason for entry in bones.interrupts),
        bones.location,
    ]
    why = echo.why("\n".join(text for text in texts if text.strip()))
    if why is not None:
        raise BonesRefused(
            f"The answer repeats the prompt instead of resolving the actions: {why}.",
            "Write what each character did and what is now true, in your own words; "
            "never copy the prompt's headings or instructions.",
        )


def bones_wire(ctx: MediumContext) -> dict:
    """The bones schema as this moment's call sends it: one entry per action to resolve, in
    order, each naming its character exactly; interrupts only of the other characters and
    only when an interruptive action is among them. A server that holds its output to a
    schema (json_schema, a llama.cpp grammar) then cannot name anyone else; `bones_check`
    still judges what comes back, and `Bones` validates it."""
    results = {"type": "string", "enum": list(get_args(Result))}
    entries = [
        {
            "type": "object",
            "properties": {
                "seat": {"type": "string", "enum": [action.label]},
                "action": {"type": "string"},
                "result": results,
            },
            "required": ["seat", "action", "result"],
            "additionalProperties": False,
        }
        for action in ctx.to_resolve
    ]
    others = [ctx.labels[s.pk] for s in ctx.seats if s.pk != ctx.seat.pk]
    interruptive = others and any(action.interruptive for action in ctx.to_resolve)
    interrupt = {
        "type": "object",
        "properties": {"seat": {"type": "string", "enum": others}, "reason": {"type": "string"}},
        "required": ["seat", "reason"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "actions_resolved": {
                "type": "array",
                "prefixItems": entries,
                "minItems": len(entries),
                "maxItems": len(entries),
            },
            "world_facts": {"type": "array", "items": {"type": "string"}, "maxItems": FACTS_MAX},
            "location": {"type": "string", "maxLength": LOCATION_MAX},
            "interrupts": {
                "type": "array",
                "items": interrupt,
                "maxItems": len(others) if interruptive else 0,
            },
        },
        "required": ["actions_resolved", "world_facts", "interrupts"],
        "additionalProperties": False,
    }


def _names(names: list[str]) -> str:
    return ", ".join(dict.fromkeys(names))


def bones_max_tokens(ctx: MediumContext) -> int:
    """The bones answer's budget: its frame, world facts and interrupts, and one entry per
    action to resolve; never more than the prompt keeps free for it."""
    return bones_reply_tokens(len(ctx.to_resolve))


def _entry(seat_id: uuid.UUID, action: str, result: str) -> dict:
    return {"seat": str(seat_id), "action": action[:TEXT_MAX], "result": result}


class _Stale(Exception):
    """Another outcome of the frame was stored after the context was gathered."""


def bones_step(
    ctx: MediumContext, *, lease: PassLease, model: LLMModel
) -> tuple[MediumContext, Outcome | None]:
    """Resolve the pass's actions into its one outcome (or find the one it already has).

    Returns:
        The context the outcome was computed from (gathered again if it went stale), and
        the outcome, or None when nothing was left to resolve (another character's outcome
        resolved this one's action together with theirs first, or an interrupt found no
        action of its own).
    """
    existing = stored_outcome(ctx.pass_)
    if existing is not None:
        return ctx, existing
    tries = max(1, settings.LMIX_MEDIUM_BONES_ATTEMPTS)
    for attempt in range(1, tries):
        if attempt > 1:
            ctx = gather(ctx.pass_)
        if not ctx.to_resolve:
            return ctx, None
        bones = _call(ctx, lease=lease, model=model)
        opinion = _second_opinion(ctx, bones, lease=lease, model=model)
        try:
            return ctx, _store(ctx, bones, lease=lease, opinion=opinion)
        except _Stale:
            continue
    return _bones_locked(ctx.pass_, lease=lease, model=model)


def _bones_locked(
    pass_: Pass, *, lease: PassLease, model: LLMModel
) -> tuple[MediumContext, Outcome | None]:
    """The last try: gather, call and store with the frame locked, so nothing can land in
    between. A failed call still commits its record (the messages and the LLM call)."""
    failure: LLMError | None = None
    with transaction.atomic():
        lock_frame(pass_.frame_id)
        ctx = gather(pass_)
        if not ctx.to_resolve:
            return ctx, None
        try:
            bones = _call(ctx, lease=lease, model=model)
        except LLMError as error:
            failure = error
        else:
            opinion = _second_opinion(ctx, bones, lease=lease, model=model)
            return ctx, _store(ctx, bones, lease=lease, opinion=opinion)
    raise failure


def stored_outcome(pass_: Pass) -> Outcome | None:
    """The outcome an earlier run of the pass stored (loaded with the pass: no query). No
    other run can store one meanwhile: storing needs the lease this run holds."""
    try:
        return pass_.outcome
    except Outcome.DoesNotExist:
        return None


def record_messages(
    pass_: Pass,
    lease: PassLease,
    step: str,
    messages: list[Message],
    skills: list[dict[str, Any]] | None = None,
) -> None:
    """Keep exactly what a call is sent on the pass, before sending it, and which skills
    shaped it (`shaping.skill_refs`). Only the run that holds the pass writes them, so the
    list it loaded with the pass is the whole list."""
    entry: dict[str, Any] = {
        "step": step,
        "attempt": lease.attempts,
        "messages": [m.as_dict() for m in messages],
    }
    if skills is not None:
        entry["skills"] = skills
    if not held_pass(lease).update(messages=[*pass_.messages, entry]):
        raise LeaseLost()
    pass_.messages = [*pass_.messages, entry]


def record_tries(pass_: Pass, lease: PassLease, step: str, tries: list[dict]) -> None:
    """Keep every model call of a step on the pass (`llm_structured`'s `tries`: what was
    sent, the schema instruction included, the raw answer, why it was refused) for the GM.
    Lease-checked like `record_messages`."""
    if not tries:
        return
    entries = [{"step": step, "attempt": lease.attempts, **one} for one in tries]
    if not held_pass(lease).update(tries=[*pass_.tries, *entries]):
        raise LeaseLost()
    pass_.tries = [*pass_.tries, *entries]


def refused_reason(
    error: LLMInvalidOutput, tries: list[dict[str, Any]], check: Callable[[Bones], None]
) -> str:
    """The pass's reason when the model's answers were refused: why the last one was (the
    whole of what `check` found, not the one-line summary the try keeps), and what it
    answered. The GM's to read; players get a generic reason (events.PLAYER_PASS_ERROR)."""
    if not tries:
        return str(error)
    raw = str(tries[-1].get("raw") or "")
    why = f"It did not match the expected format: {flat(tries[-1].get('error') or '', 300)}."
    try:
        check(structured.parse(raw, Bones))
    except BonesRefused as refusal:
        why = refusal.problem
    except ValueError:  # unparsable: the try's own reason stands
        pass
    shown = flat(raw, 300)
    answered = f"Its last answer: {shown}" if shown else "Its last answer was empty."
    return f"The model's answer was refused ({len(tries)} tries). {why} {answered}"


def _call(ctx: MediumContext, *, lease: PassLease, model: LLMModel) -> Bones:
    messages = compile_bones(ctx, model)
    record_messages(ctx.pass_, lease, "bones", messages, skill_refs(prompt_skills(ctx, "bones")))
    tries: list[dict[str, Any]] = []
    check = bones_check(ctx, echo=PromptEcho.of(messages))
    try:
        return llm_structured(
            model=model,
            messages=messages,
            schema=Bones,
            purpose="synthesis.bones",
            subject=f"pass:{ctx.pass_.pk}",
            waiting=model_waiting(ctx.pass_.frame_id, ctx.pass_.seat_id, "outcome"),
            wanted=held_pass(lease).exists,
            max_tokens=bones_max_tokens(ctx),
            check=check,
            tries=tries,
            wire=bones_wire(ctx),
            context=tuple(ctx.to_resolve),
        )
    except LLMInvalidOutput as error:
        raise LLMInvalidOutput(refused_reason(error, tries, check)) from error
    finally:
        record_tries(ctx.pass_, lease, "bones", tries)


def _said(draft: Draft) -> list[str]:
    """An outcome's texts everyone will read: what the secret guard looks at."""
    return [
        *(entry["action"] for entry in draft.actions_resolved),
        *draft.world_facts,
        *(entry["reason"] for entry in draft.interrupts),
        draft.location,
    ]


def _word_flags(ctx: MediumContext, draft: Draft) -> list[dict[str, str]]:
    return secret_flags(
        said=_said(draft),
        revealed=[action.chosen for action in ctx.to_resolve],
        secrets=seat_secrets(ctx.seats),
        public=public_words(ctx.seats, ctx.frame.production),  # a model's words, all of it
    )


def _second_opinion(
    ctx: MediumContext, bones: Bones, *, lease: PassLease, model: LLMModel
) -> list[dict[str, str]]:
    """The flags the second opinion adds (synthesis/guard_opinion.py), before the outcome
    is stored, so a frame that holds holds on them too. Asked only when the frame wants it
    and a secret is left unflagged; the call is the pass's (budget, diagnostics), its
    messages and tries kept on the pass for the GM (step "guard"). Its failure falls back to
    the word test: logged, kept in the pass's tries and the call's record, never blocking or
    dropping the outcome."""
    if not ctx.frame.second_opinion:
        return []
    draft = bones_apply(bones, ctx)
    revealed = [action.chosen for action in ctx.to_resolve]
    question = opinion_context(
        said=_said(draft),
        revealed=revealed,
        secrets=seat_secrets(ctx.seats),
        flags=_word_flags(ctx, draft),
    )
    if question is None:
        return []
    messages = opinion_messages(question)
    record_messages(ctx.pass_, lease, "guard", messages)
    tries: list[dict[str, Any]] = []
    try:
        answer = llm_structured(
            model=model,
            messages=messages,
            schema=SecondOpinion,
            purpose="synthesis.guard",
            subject=f"pass:{ctx.pass_.pk}",
            max_tokens=opinion_max_tokens(question),
            tries=tries,
            context=question,
        )
    except LLMError as error:
        logger.warning(
            "The guard's second opinion failed; the word test stands",
            extra={"pass": str(ctx.pass_.pk), "error": str(error)[:300]},
        )
        return []
    finally:
        record_tries(ctx.pass_, lease, "guard", tries)
    return opinion_flags(question, answer)


def _store(
    ctx: MediumContext, bones: Bones, *, lease: PassLease, opinion: Sequence[dict[str, str]] = ()
) -> Outcome:
    with transaction.atomic():
        # Taking the outcome's seq locks the frame: outcomes are stored one at a time.
        seq = next_seq(ctx.frame.pk)
        _check_storable(ctx, lease)
        draft = bones_apply(bones, ctx)
        flags = _word_flags(ctx, draft)
        # The second opinion only adds: a secret the words flagged keeps their flag.
        flagged = {(f["kind"], f["owner"]) for f in flags}
        flags += [f for f in opinion if (f["kind"], f["owner"]) not in flagged]
        outcome = Outcome.objects.create(
            frame=ctx.frame,
            seq=seq,
            seat=ctx.seat,
            source_pass=ctx.pass_,
            actions_resolved=draft.actions_resolved,
            world_facts=draft.world_facts,
            interrupts=draft.interrupts,
            witnesses=draft.witnesses,
            liquid_ids=draft.liquid_ids,
            location=draft.location,
            flags=flags,
            # In a frame that holds: only the GM reads it until released (docs/synthesis.md).
            held=bool(flags) and ctx.frame.leak_guard == LeakGuard.HOLD,
        )
        route_bones(ctx, outcome)
        return outcome


def _check_storable(ctx: MediumContext, lease: PassLease) -> None:
    """In one statement, with the frame locked: the run still holds its pass (whose row
    stays locked until commit, so no sweep restarts it meanwhile), and no outcome landed
    after the one its context saw.

    Raises:
        LeaseLost: the pass is no longer this run's.
        _Stale: another outcome came first: gather again.
    """
    newer = Outcome.objects.filter(frame=ctx.frame.pk, seq__gt=ctx.horizon)
    # A rewind or a restore since the gather changed which outcomes the context may read.
    rewound = Rewind.objects.filter(frame=ctx.frame.pk).filter(
        Q(seq__gt=ctx.horizon) | Q(restored_seq__gt=ctx.horizon)
    )
    found = list(
        held_pass(lease)
        .select_for_update(of=("self",))
        .annotate(newer=Exists(newer) | Exists(rewound))
        .values_list("newer", flat=True)
    )
    if not found:
        raise LeaseLost()
    if found[0]:
        raise _Stale()


def route_bones(ctx: MediumContext, outcome: Outcome) -> None:
    """Broadcast the outcome to the frame, wake each interrupted character's pass (not in a
    shared frame), and let the AI-played characters it involves answer. In the storing
    transaction: an outcome is never stored without its interrupts. A held outcome is only
    announced (whole to the GM, a placeholder to the players): its interrupts and the AI
    seats' reactions wait for its release (`outcome_reactions`)."""
    notify_outcome(outcome, seats=ctx.seats, gm_id=ctx.frame.owner_id)
    if not outcome.held:
        outcome_reactions(outcome, frame=ctx.frame, seats=ctx.seats)


def outcome_reactions(outcome: Outcome, *, frame: Frame, seats: list[Seat]) -> None:
    """What an outcome sets off once everyone may read it: each interrupted character's
    pass wakes (not in a shared frame), and, after commit, the AI seats it involves act."""
    from ..ai_seats import ai_react
    from ..windows import window_interrupt

    # A shared frame narrates the interrupt to everyone at once; it wakes nobody's pass.
    for interrupt in [] if frame.mode == FrameMode.SHARED else outcome.interrupts:
        window_interrupt(
            frame=frame,
            seat_id=uuid.UUID(interrupt["seat"]),
            outcome=outcome,
            reason=interrupt["reason"],
        )
    # After the outcome is out: the AI seats' reactions never delay it, nor does the
    # witnesses' state pass (queued: synthesis/state/run.py).
    transaction.on_commit(lambda: ai_react(outcome=outcome, frame=frame, seats=seats))
    state_pass_enqueue(outcome)
    transaction.on_commit(lambda: scene_check_enqueue(outcome.pk))

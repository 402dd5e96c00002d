"""AI seats: when an outcome concerns a character an assistant plays (resolves its action,
interrupts it, names it, or, as its seat's `ai_reacts` asks, happened before its eyes), the
assistant writes liquid for it with that character's knowledge only, shown as "thinking"
meanwhile, and commits it. Bounded per human action and per minute, so AI characters never
loop on their own, and by the frame's model budget (synthesis/budget.py): over its
background share an AI seat simply does not act; a frame with no human seat moves only when
the GM presses "advance"."""

import json
import logging
import re
from collections.abc import Sequence
from datetime import timedelta
from functools import cache
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from lmix.errors import ApplicationError
from lmix.llm.base import LLMError, Message
from lmix.llm.client import llm_complete, llm_structured
from lmix.llm.echo import PromptEcho
from lmix.llm.offline import Reply
from lmix.models import JOB_TRANSITIONS, JobStatus
from lmix.realtime.leases import LeasedWork, lease_claim, lease_held, leased
from lmix.text import has_visible_text
from productions.knowledge import knowledge_text, name_for, public_name

from .budget import Work, budget_admits
from .enqueue import AI_ACT, ai_act_enqueue, ai_act_key
from .events import notify_liquid_flagged
from .frame_events import lock_frame, model_waiting, notify_presence
from .frame_selectors import seats_load
from .guard import intention_flags, public_words, seat_secrets
from .guard_opinion import (
    SecondOpinion,
    opinion_context,
    opinion_flags,
    opinion_max_tokens,
    opinion_messages,
)
from .liquid import liquid_commit, liquid_submit, liquid_withdraw
from .models import (
    LIQUID_MAX,
    AiReacts,
    Frame,
    FrameStatus,
    LeakGuard,
    Liquid,
    LiquidStatus,
    Outcome,
    Seat,
    SeatAct,
    SeatController,
    Skill,
)
from .own_state import own_state_text
from .skills.prompting import seat_skills, skills_section

logger = logging.getLogger(__name__)
TEMPLATES = Path(__file__).parent / "templates" / "synthesis"
RECENT_OUTCOMES = 5
ECHO_TRIES = 2  # a model that repeats its prompt is asked once more (lmix/llm/echo.py)
UNEXPECTED = "Something went wrong while this character was acting."


@cache
def _template() -> str:
    return (TEMPLATES / "ai_act.txt").read_text()


# Words of a name that address nobody on their own ("ask the doctor" is not Dr. Reyes).
NAME_WORDS_NOT_ALONE = frozenset(
    {"the", "von", "van", "del", "mrs", "miss", "sir", "lady", "lord", "madam", "doctor"}
    | {"detective", "officer", "captain", "professor", "father", "mother", "sister", "brother"}
)
NAME_WORD_MIN = 3


def name_forms(name: str) -> list[str]:
    """How a character may be addressed by `name`: in full, or by one word of it ("Tony"
    or "Rosetti" for "Tony Rosetti"), never by a title or an article alone. Pure."""
    words = re.findall(r"[^\W\d_][\w'-]*", name)
    forms = {name.strip()}
    if len(words) > 1:
        forms |= {
            w for w in words if len(w) >= NAME_WORD_MIN and w.lower() not in NAME_WORDS_NOT_ALONE
        }
    return sorted((f for f in forms if f), key=len, reverse=True)


def names_in(text: str, forms: list[str]) -> bool:
    """Whether `text` says one of `forms` as a whole word, in any case. Pure."""
    if not forms or not text:
        return False
    alternatives = "|".join(re.escape(form) for form in forms)
    return re.search(rf"(?<!\w)(?:{alternatives})(?!\w)", text, re.IGNORECASE) is not None


def outcome_words(outcome: Outcome, intentions: Sequence[str] = ()) -> str:
    """Everything an outcome says (its actions and their results, its world facts) and
    the committed intentions it resolved: where a character may be named. Pure."""
    parts = [
        f"{action.get('action', '')}\n{action.get('result', '')}"
        for action in outcome.actions_resolved
    ]
    parts += [str(fact) for fact in outcome.world_facts]
    parts += list(intentions)
    return "\n".join(parts)


def involved_ai_seats(
    *, outcome: Outcome, seats: list[Seat], intentions: Sequence[str] = ()
) -> list[Seat]:
    """The AI-played seats an outcome concerns, as each seat's `ai_reacts` asks: its
    resolved actions or interrupt targets; those it (or the `intentions` it resolved)
    names by the name everyone knows; and for `always`, every seat that witnessed it.
    Never its own acting seat (an AI does not answer itself), never a `gm` seat. Pure."""
    listed = {str(a.get("seat")) for a in outcome.actions_resolved}
    listed |= {str(i.get("seat")) for i in outcome.interrupts}
    witnesses = {str(w) for w in outcome.witnesses}
    words = None  # built once, and only if a seat needs it
    concerned = []
    for seat in seats:
        if (
            seat.controller != SeatController.AI
            or seat.pk == outcome.seat_id
            or seat.ai_reacts == AiReacts.GM
        ):
            continue
        if str(seat.pk) in listed or (
            seat.ai_reacts == AiReacts.ALWAYS and str(seat.pk) in witnesses
        ):
            concerned.append(seat)
            continue
        words = outcome_words(outcome, intentions) if words is None else words
        if names_in(words, name_forms(public_name(seat.persona))):
            concerned.append(seat)
    return concerned


def may_react(*, outcome: Outcome, seats: list[Seat]) -> bool:
    """Whether any seat could answer `outcome` on its own (no query): an AI seat that is
    not the acting one and not left to the GM."""
    return any(
        seat.controller == SeatController.AI
        and seat.pk != outcome.seat_id
        and seat.ai_reacts != AiReacts.GM
        for seat in seats
    )


def resolved_intentions(outcome: Outcome) -> list[str]:
    """The committed intentions an outcome resolved, as their players wrote them."""
    if not outcome.liquid_ids:
        return []
    return list(Liquid.objects.filter(pk__in=outcome.liquid_ids).values_list("content", flat=True))


def ai_budget_left(*, frame: Frame) -> int:
    """How many AI actions the frame may still take now: at most
    LMIX_AI_ACTIONS_PER_HUMAN_ACTION since the last human commit, and
    LMIX_AI_ACTIONS_PER_MINUTE in the last minute."""
    ai = Liquid.objects.filter(frame=frame, author__isnull=True).exclude(
        status=LiquidStatus.WITHDRAWN
    )
    last_human = (
        Liquid.objects.filter(frame=frame, author__isnull=False, committed_at__isnull=False)
        .order_by("-committed_at")
        .values_list("committed_at", flat=True)
        .first()
    )
    since_human = ai.filter(submitted_at__gt=last_human).count() if last_human else ai.count()
    last_minute = ai.filter(submitted_at__gt=timezone.now() - timedelta(minutes=1)).count()
    return max(
        0,
        min(
            settings.LMIX_AI_ACTIONS_PER_HUMAN_ACTION - since_human,
            settings.LMIX_AI_ACTIONS_PER_MINUTE - last_minute,
        ),
    )


def ai_react(*, outcome: Outcome, frame: Frame, seats: list[Seat]) -> list[str]:
    """After an outcome: the AI seats it concerns act (`involved_ai_seats`), within the
    budget. `frame` and `seats` are the medium pass's own (no query unless an AI seat may
    react: this runs between the outcome and the first token of its narrative). Returns
    the seat ids that will act."""
    if frame.status != FrameStatus.OPEN or not any(s.controller == "human" for s in seats):
        return []  # an all-AI frame moves only when the GM advances it
    if not may_react(outcome=outcome, seats=seats):
        return []
    involved = involved_ai_seats(
        outcome=outcome, seats=seats, intentions=resolved_intentions(outcome)
    )
    if involved and not budget_admits(
        frame_id=frame.pk, kind=Work.AI, what=f"outcome:{outcome.pk}"
    ):
        return []
    acting = involved[: ai_budget_left(frame=frame)] if involved else []
    _enqueue([str(seat.pk) for seat in acting], outcome_id=str(outcome.pk))
    return [str(seat.pk) for seat in acting]


def frame_advance(*, frame: Frame) -> list[str]:
    """The GM moves the scene on: every AI seat without pending liquid acts once.

    Raises:
        ApplicationError: the frame is not open (409); its model budget does not admit AI
            work this minute (429).
    """
    if frame.status != FrameStatus.OPEN:
        raise ApplicationError("Resume the frame first.", status_code=409)
    if not budget_admits(frame_id=frame.pk, kind=Work.AI, what="advance"):
        raise ApplicationError(
            "The frame's model budget is spent for this minute: AI seats are paused. "
            "Try again in a minute.",
            status_code=429,
        )
    busy = set(
        Liquid.objects.filter(
            frame=frame, status__in=[LiquidStatus.SUBMITTED, LiquidStatus.COMMITTED]
        ).values_list("seat_id", flat=True)
    )
    acting = [
        str(seat.pk)
        for seat in seats_load(frame=frame)
        if seat.controller == SeatController.AI and seat.pk not in busy
    ]
    _enqueue(acting, outcome_id=None)
    return acting


def _enqueue(seat_ids: list[str], *, outcome_id: str | None) -> None:
    """Each seat's act: its row now, pending (the sweep's to find if its task is lost), its
    task once the caller's transaction commits."""
    acts = [SeatAct(seat_id=seat_id, outcome_id=outcome_id) for seat_id in seat_ids]
    for act in SeatAct.objects.bulk_create(acts):
        transaction.on_commit(lambda pk=act.pk: ai_act_enqueue(pk))


def recent_outcomes(seat: Seat) -> list[Outcome]:
    """The frame's latest outcomes, oldest first: what an AI seat is told happened (never
    a held one: the GM's until released)."""
    recent = Outcome.objects.filter(frame=seat.frame, held=False).order_by("-seq")
    recent = recent[:RECENT_OUTCOMES]
    return list(recent)[::-1]


def ai_messages(*, seat: Seat, seats: list[Seat], outcome: Outcome | None) -> list[Message]:
    """What the assistant is sent (`ai_prompt`), with the frame's latest outcomes and the
    character's own state and the skills that shape its act (`act_skills`)."""
    recent = recent_outcomes(seat)
    return ai_prompt(
        seat=seat,
        seats=seats,
        recent=recent,
        outcome=outcome,
        state=ai_state(seat=seat, seats=seats, recent=recent),
        skills=act_skills(seat),
    )


def ai_state(*, seat: Seat, seats: list[Seat], recent: list[Outcome]) -> str:
    """The character's own memories (recalled for what just happened), relationships and
    mood (synthesis/state/components.py): its own rows only, the others named as it
    knows them."""
    names = {s.pk: name_for(s.persona, by=seat.persona) for s in seats}
    scene = [str(a.get("action", "")) for past in recent[-2:] for a in past.actions_resolved]
    scene += [str(fact) for past in recent[-2:] for fact in past.world_facts]
    return own_state_text(seat=seat, labels=names, scene=scene)


def act_skills(seat: Seat) -> list[Skill]:
    """The player face's skills that shape an AI seat's act: the platform's and the
    frame's (its GM's). An AI seat has no player, so no user's own skills: a player's
    shape only their own characters' passes."""
    return seat_skills(frame_id=seat.frame_id, user_id=None, step="act")


def ai_prompt(
    *,
    seat: Seat,
    seats: list[Seat],
    recent: list[Outcome],
    outcome: Outcome | None,
    state: str = "",
    skills: Sequence[Skill] = (),
) -> list[Message]:
    """What the assistant is sent: its character's knowledge only, its own `state`
    (`ai_state`), the `recent` outcomes (public bones, oldest first) with everyone named as
    this character knows them, the interrupt aimed at it, if any, and the `skills` that
    shape it. Pure."""
    production = seat.frame.production
    persona = seat.persona
    knowledge = knowledge_text(
        speaker=persona,
        cast=[s.persona for s in seats],
        world=production.world,
        scenario=production.scenario,
    )
    happened = _happened(seat=seat, seats=seats, recent=recent, outcome=outcome)
    ask = f"What does {persona.name} do?"
    if (known_as := public_name(persona)) != persona.name:
        # What it intends becomes an outcome everyone reads (the guard flags a real name).
        ask += f" Everyone else knows {persona.name} as {known_as}: say only that name aloud."
    system = _template().format(knowledge=knowledge, name=persona.name)
    shaped = skills_section(list(skills))
    return [
        Message("system", f"{system}\n\n{shaped}" if shaped else system),
        Message(
            "user", (f"{state}\n\n" if state else "") + f"WHAT JUST HAPPENED\n{happened}\n\n{ask}"
        ),
    ]


def ai_reply(
    *, seat: Seat, seats: list[Seat], recent: list[Outcome], outcome: Outcome | None
) -> Reply:
    """What the offline narrator reads of `ai_prompt`: the character by the name everyone
    knows, asked what it does about what just happened."""
    happened = _happened(seat=seat, seats=seats, recent=recent, outcome=outcome)
    return Reply(speaker=public_name(seat.persona), kind="reply", line=happened, question=True)


def _happened(
    *, seat: Seat, seats: list[Seat], recent: list[Outcome], outcome: Outcome | None
) -> str:
    names = {str(s.pk): name_for(s.persona, by=seat.persona) for s in seats}
    lines = []
    for past in recent:
        for action in past.actions_resolved:
            who = names.get(str(action.get("seat")), "Someone")
            lines.append(f"- {who}: {action.get('action', '')} ({action.get('result', '')})")
        lines.extend(f"- {fact}" for fact in past.world_facts)
    if outcome is not None:
        lines.extend(
            f"- Aimed at you: {i.get('reason', '')}"
            for i in outcome.interrupts
            if str(i.get("seat")) == str(seat.pk)
        )
    return "\n".join(lines) or "- The scene is just beginning."


def seat_names(seat: Seat) -> list[str]:
    """Every name an AI seat's text may be signed with: its persona's real and public
    names, its assistant's label and display name."""
    names = [seat.persona.name, seat.persona.known_as]
    if seat.assistant_id is not None:
        names += [seat.assistant.name, seat.assistant.display_name]
    return sorted({n.strip() for n in names if n and n.strip()}, key=len, reverse=True)


# Markdown emphasis a model may wrap a name in ("**Bob**:", "**Bob:**", "__Bob__:").
_MARK = r"(?:\*{1,2}|_{1,2})"
PREFIX_ROUNDS = 3  # "Bob Wilson: Detective Johnson (Smol): I ..." is signed twice


def intention_text(text: str, names: list[str]) -> str:
    """An AI-written intention as it is stored: on one line, without a leading signature
    by one of `names` ("Name:", "**Name**:", "Name (label):"), which would put a label or
    a real name into a public outcome."""
    text = " ".join(text.split())
    if not names:
        return text
    alternatives = "|".join(re.escape(name) for name in names)
    signature = re.compile(
        rf"^{_MARK}?\s*(?:{alternatives})(?:\s*\([^()]{{0,80}}\))?\s*{_MARK}?\s*:"
        rf"(?:\s*{_MARK}(?=\s))?\s*",
        re.IGNORECASE,
    )
    for _ in range(PREFIX_ROUNDS):
        text, found = signature.subn("", text, count=1)
        if not found:
            break
    return text


def ai_act_run(*, act_id: object) -> Liquid | None:
    """A queued act (`SeatAct`), under its lease: once, by whichever worker claims it; one
    whose worker died is run again by the sweep (`ACTS`). Its liquid and its end are
    written together, so a rerun never writes a second intention.

    Returns:
        The liquid written, or None: another run has the act, or the seat did not act.
    """
    with lease_held() as owner:
        if not lease_claim(ACTS, act_id, owner):
            return None  # a duplicate or late task: another run has it, or had it
        act = SeatAct.objects.get(pk=act_id)
        try:
            liquid = ai_act(seat_id=act.seat_id, outcome_id=act.outcome_id, act=act)
        except Exception:
            logger.exception("the act of seat %s failed unexpectedly", act.seat_id)
            _act_end(act, JobStatus.FAILED, error=UNEXPECTED)
            return None
        if liquid is None:
            _act_end(act, JobStatus.DONE)  # it did not act this time: nothing to rerun
        return liquid


def _act_held(act: SeatAct) -> QuerySet[SeatAct]:
    """The act, if this run still holds it."""
    held = {"lease_owner": act.lease_owner, "attempts": act.attempts}
    return SeatAct.objects.filter(pk=act.pk, status=JobStatus.RUNNING, **held)


def _act_end(act: SeatAct, to: str, *, error: str = "") -> bool:
    """End the act if this run still holds it (its lease as claimed)."""
    return SeatAct.move(
        act.pk,
        to,
        only_from=(JobStatus.RUNNING,),
        where={"lease_owner": act.lease_owner, "attempts": act.attempts},
        error=error,
    )


def ai_act(
    *, seat_id: object, outcome_id: object | None, act: SeatAct | None = None
) -> Liquid | None:
    """The seat's assistant writes and commits liquid for it (if the seat is still AI,
    the frame open, and nothing of it is pending). Under `act`'s lease, when given: a run
    that lost it writes nothing."""
    seat = (
        Seat.objects.select_related(
            "frame__production__world", "frame__production__scenario", "assistant__model"
        )
        .filter(pk=seat_id, controller=SeatController.AI)
        .first()
    )
    if seat is None or seat.frame.status != FrameStatus.OPEN:
        return None
    pending = Liquid.objects.filter(
        seat=seat, status__in=[LiquidStatus.SUBMITTED, LiquidStatus.COMMITTED]
    )
    if pending.exists():
        return None
    # Checked again here, before the model call: reactions queued before the frame's
    # budget ran out do not spend it.
    if not budget_admits(frame_id=seat.frame_id, kind=Work.AI, what=f"seat:{seat.pk}"):
        return None
    # Everyone sees the character "thinking" while its assistant writes (it may take a
    # while); said over, whatever happens, when it is done.
    notify_presence(seat.frame_id, seat.pk, typing=True)
    try:
        return _write(seat=seat, outcome_id=outcome_id, pending=pending, act=act)
    finally:
        notify_presence(seat.frame_id, seat.pk, typing=False)


def _write(
    *, seat: Seat, outcome_id: object | None, pending: QuerySet[Liquid], act: SeatAct | None
) -> Liquid | None:
    """`ai_act` once the seat may act: the model's answer, cleaned, submitted and
    committed, unless the budget or another task took the seat meanwhile."""
    outcome = Outcome.objects.filter(pk=outcome_id, held=False).first() if outcome_id else None
    seats = seats_load(frame=seat.frame)
    recent = recent_outcomes(seat)
    state = ai_state(seat=seat, seats=seats, recent=recent)
    messages = ai_prompt(
        seat=seat, seats=seats, recent=recent, outcome=outcome, state=state, skills=act_skills(seat)
    )
    # The outcomes it is told of quote what players wrote: a heading of theirs is no echo.
    told = [outcome, *recent] if outcome else recent
    echo = PromptEcho.of(messages, quoted=[json.dumps(o.actions_resolved) for o in told])
    for _ in range(ECHO_TRIES):
        try:
            answer = llm_complete(
                model=seat.assistant.model,
                messages=messages,
                purpose="synthesis.ai_act",
                subject=f"seat:{seat.pk}",
                waiting=model_waiting(seat.frame_id, seat.pk, "act"),
                wanted=_act_held(act).exists if act is not None else None,
                overrides=seat.assistant.config_override,
                context=ai_reply(seat=seat, seats=seats, recent=recent, outcome=outcome),
            )
        except LLMError:
            logger.warning("the assistant of seat %s could not act", seat.pk, exc_info=True)
            return None
        echoed = echo.why(answer.text)
        if echoed is None:
            break
        logger.warning("the assistant of seat %s echoed its prompt: %s", seat.pk, echoed)
    else:
        return None  # its prompt, twice: not an intention; the seat does not act this time
    content = intention_text(answer.text, seat_names(seat))[:LIQUID_MAX]
    if not has_visible_text(content):  # nothing to act on (a player would get a 400)
        return None
    flags = checked_flags(seat=seat, seats=seats, content=content)
    held = bool(flags) and seat.frame.leak_guard == LeakGuard.HOLD
    with transaction.atomic():
        # Reactions to outcomes stored close together were all let through by one count,
        # and may ask the same seat twice: under the frame's lock, the first ones written
        # spend the budget and take the seat, the rest stop.
        lock_frame(seat.frame_id)
        if pending.exists():
            return None
        if outcome_id is not None and ai_budget_left(frame=seat.frame) <= 0:
            logger.info("seat %s does not act: the frame's AI budget is spent", seat.pk)
            return None
        if act is not None and not _act_end(act, JobStatus.DONE):
            return None  # its lease lapsed meanwhile: the run that took it over writes
        liquid = liquid_submit(frame=seat.frame, seat=seat, content=content, user=None, held=held)
        if flags:  # stored with it: the GM's snapshot reads them from the start
            Liquid.objects.filter(pk=liquid.pk).update(flags=flags)
        if not held:  # in the same transaction: a worker killed after it leaves no draft
            liquid = liquid_commit(liquid=liquid, user=None)
    if flags:
        liquid.flags = flags
        notify_liquid_flagged(liquid)
    return liquid


def checked_flags(*, seat: Seat, seats: list[Seat], content: str) -> list[dict[str, str]]:
    """The secret guard on an AI-written intention before anyone but the GM reads it: the
    word test (nothing it says counts as revealed: no person chose it), and, when the
    frame asks for it, the second opinion on the secrets the words left unflagged, asked
    of the seat's own model (its call the seat's: budget, diagnostics). The second
    opinion's failure leaves the word test's flags (logged), as for outcomes."""
    public = public_words(seats, seat.frame.production)
    flags = intention_flags(content=content, seats=seats, public=public)
    if not seat.frame.second_opinion:
        return flags
    question = opinion_context(
        said=[content], revealed=[], secrets=seat_secrets(seats), flags=flags
    )
    if question is None:
        return flags
    try:
        answer = llm_structured(
            model=seat.assistant.model,
            messages=opinion_messages(question),
            schema=SecondOpinion,
            purpose="synthesis.guard",
            subject=f"seat:{seat.pk}",
            max_tokens=opinion_max_tokens(question),
            context=question,
        )
    except LLMError:
        logger.warning("the second opinion on seat %s's intention failed", seat.pk, exc_info=True)
        return flags
    return flags + opinion_flags(question, answer)


@transaction.atomic
def ai_intention_regenerate(*, liquid: Liquid, user: AbstractBaseUser) -> None:
    """The GM throws away what an AI seat intends (one the secret guard holds, say) and
    lets the seat act again: withdrawn (kept for the record), then a new act queued.

    Raises:
        ApplicationError: the frame is closed or the intention is no longer submitted
            (409), the caller is not the GM or the seat no AI's (403).
    """
    liquid = liquid_withdraw(liquid=liquid, user=user)
    _enqueue([str(liquid.seat_id)], outcome_id=None)


def _act_stopped(act: SeatAct) -> None:
    """An act failed by the sweep: its character no longer "thinks"."""
    notify_presence(act.seat.frame_id, act.seat_id, typing=False)


# AI seats' acts under a lease (lmix/realtime/leases.py): one whose worker died is run
# again (its character "thinks" again), or fails once it has had its runs; one whose task
# was lost is enqueued again.
ACTS = leased(
    LeasedWork(
        name="AI act",
        what="an AI seat's intention, written and committed",
        model=SeatAct,
        task=AI_ACT,
        transitions=JOB_TRANSITIONS,
        pending=JobStatus.PENDING,
        running=JobStatus.RUNNING,
        failed=JobStatus.FAILED,
        key=ai_act_key,
        enqueue=ai_act_enqueue,
        load=lambda rows: rows.select_related("seat"),
        fail_message="The worker stopped while this character was acting ({attempts} tries).",
        on_failed=_act_stopped,
    )
)

"""Flesh: the character's personal narrative, streamed to its player (and the GM) in
batches of deltas (a shared frame's one prose to everyone), checkpointed, never written per
delta (lmix/realtime/stream.py); then routed: stored as done, its liquid consumed (never
narrated twice), the window fired and the pass done, in one transaction.
"""

import logging
import re

from django.db import transaction
from django.utils import timezone

from lmix.llm.base import LLMError, LLMInvalidOutput, Message, Usage
from lmix.llm.client import llm_stream
from lmix.llm.echo import PromptEcho
from lmix.llm.offline import Scene
from lmix.llm.tokens import count_tokens
from lmix.models import LLMModel
from lmix.prepared import Param, Prepared
from lmix.realtime.stream import TextStream
from synthesis.frame_events import lock_frame, model_waiting

from ..events import (
    notify_liquid,
    notify_narrative_done,
    notify_narrative_restarted,
    notify_narrative_token,
    notify_window,
)
from ..models import (
    Liquid,
    LiquidStatus,
    Narrative,
    NarrativeStatus,
    Outcome,
    Pass,
    PassStatus,
    Window,
    WindowStatus,
)
from .bones import record_messages
from .context import LeaseLost, MediumContext, PassLease, held_pass
from .prompts import compile_flesh, flesh_scene, reply_cap, resolving_outcomes
from .shaping import prompt_skills, skill_refs

logger = logging.getLogger(__name__)
# A narrative echoing its prompt is asked for once more, then the pass fails.
ECHO_TAKES = 2
# When a streaming narrative is looked at for an echo before it ends (characters received).
ECHO_EARLY_CHARS = (80, 400)


class NarrativeEchoed(LLMInvalidOutput):
    """The narrative repeated its prompt instead of telling the scene, on every take."""


# The narrative while the run that streams it still holds its pass (`narrative_checkpoint`).
STREAMING_NARRATIVE = Prepared(
    lambda: Narrative.objects.filter(
        pk=Param(Narrative, "pk"),
        status=NarrativeStatus.STREAMING,
        source_pass__status=PassStatus.RUNNING,
        source_pass__lease_owner=Param(Pass, "lease_owner"),
        source_pass__attempts=Param(Pass, "attempts"),
    )
)


class NarrativeWriter(TextStream):
    """The text of one flesh run: publishes its deltas to the narrative's readers, stores
    the text only while the run holds its pass."""

    def __init__(self, narrative: Narrative, lease: PassLease) -> None:
        super().__init__()
        self.narrative = narrative
        self.tokens = 0
        self.ours = {"pk": narrative.pk, **lease.where}
        self.received = 0  # characters, published or not
        self.checked = 0  # how many of ECHO_EARLY_CHARS were looked at
        self.echo: str | None = None  # why the text echoes its prompt, once it does

    def add(self, delta: str) -> bool:
        self.tokens += count_tokens(delta)
        self.received += len(delta)
        return super().add(delta)

    def echoes(self, echo: PromptEcho) -> bool:
        """Whether the text so far echoes its prompt, looked at only as it passes each of
        ECHO_EARLY_CHARS (the whole is looked at once it ends): an echo shows at its start,
        and looking at every delta would cost a long narrative dearly."""
        checks = ECHO_EARLY_CHARS
        if self.checked >= len(checks) or self.received < checks[self.checked]:
            return False
        self.checked += 1
        self.echo = echo.why(self.text + "".join(self.pending))
        return self.echo is not None

    def publish(self, index: int, delta: str) -> None:
        notify_narrative_token(self.narrative, index=index, delta=delta)

    def store(self, text: str, index: int) -> bool:
        return narrative_checkpoint(self.ours, text=text, token_count=index)


def narrative_checkpoint(ours: dict[str, object], *, text: str, token_count: int) -> bool:
    """Store a streaming narrative's text so far, if the run (`ours`: the narrative's key
    and the lease) still holds its pass. Prepared (lmix/prepared.py): every stream writes
    this once a second for as long as it runs, hundreds of streams at once, and the ORM's
    UPDATE, with its join to the pass, takes several times as long to build and run as
    this one (docs/benchmarks.md, "Stop 31")."""
    return bool(
        STREAMING_NARRATIVE.update(
            ("text", "token_count"), **ours, text=text, token_count=token_count
        )
    )


def flesh_step(
    ctx: MediumContext, outcome: Outcome | None, *, lease: PassLease, model: LLMModel
) -> Narrative:
    """Stream the narrative of this pass (or find it done by an earlier run).

    A narrative that echoes its prompt (lmix/llm/echo.py) is a failed answer: its readers
    are told to drop it (`narrative.restarted`) and it is asked for once more; echoed
    again, it is dropped and the pass fails, for the GM to retry. It is never stored done.

    Raises:
        LLMError: the provider failed (the text so far is kept, for the GM to see), or
            the narrative echoed its prompt twice (`NarrativeEchoed`: nothing kept).
        LeaseLost: the run no longer holds its pass.
    """
    try:  # loaded with the pass; only the run holding the pass writes its narrative
        existing = ctx.pass_.narrative
    except Narrative.DoesNotExist:
        existing = None
    if existing is not None and existing.status == NarrativeStatus.DONE:
        return existing
    scene = flesh_scene(ctx, outcome)  # the prompt's scene and the offline narrator's data
    messages = compile_flesh(ctx, outcome, model, scene=scene)
    # Its own earlier narratives are the character's story: taking them up is no echo.
    echo = PromptEcho.of(messages, quoted=[n.text for n in ctx.recent])
    why = ""
    for take in range(ECHO_TAKES):
        narrative = _narrative_open(ctx, outcome, lease, messages=messages, existing=existing)
        writer = _stream(
            ctx, narrative, lease, model=model, messages=messages, scene=scene, echo=echo, take=take
        )
        why = writer.echo or ""
        if not why:
            # Stored (and sent whole with narrative.done) up to its last finished sentence:
            # a narrative over its budget was cut by max_tokens or the cap, mid-sentence.
            narrative.text, narrative.token_count = whole_sentences(writer.text), writer.index
            return narrative
        logger.info("medium pass %s: its narrative echoed its prompt (%s)", ctx.pass_.pk, why)
        existing = narrative  # the next take's `_narrative_open` drops it
    _narrative_drop(narrative, lease)
    raise NarrativeEchoed(
        f"The model repeated its prompt instead of writing the narrative ({ECHO_TAKES} "
        f"tries; the last: {why}). Retry it, or give this character another model."
    )


def _stream(
    ctx: MediumContext,
    narrative: Narrative,
    lease: PassLease,
    *,
    model: LLMModel,
    messages: list[Message],
    scene: Scene,
    echo: PromptEcho,
    take: int,
) -> "NarrativeWriter":
    """One call's narrative, streamed to its readers within the word budget; stopped early
    once what came echoes the prompt (`writer.echo` then says why).

    Raises:
        LLMError: the provider failed (the text so far is kept, for the GM to see).
        LeaseLost: the run no longer holds its pass.
    """
    writer = NarrativeWriter(narrative, lease)
    cap = reply_cap(ctx.pscale)
    configured = model.config.get("max_tokens") if isinstance(model.config, dict) else None
    limit = min(cap, configured) if isinstance(configured, int) and configured > 0 else cap
    stream = llm_stream(
        model=model,
        messages=messages,
        purpose="synthesis.flesh",
        subject=f"pass:{ctx.pass_.pk}",
        waiting=model_waiting(ctx.pass_.frame_id, narrative.seat_id, "narrative"),
        wanted=held_pass(lease).exists,
        overrides={"max_tokens": limit},
        usage=Usage(),
        variant=take,  # another take of the same prompt
        context=scene,
    )
    try:
        for delta in stream:
            if not delta:
                continue
            if not writer.add(delta):
                raise LeaseLost()
            if writer.echoes(echo) or writer.tokens >= limit:
                break  # an echo is junk to stop; a provider may ignore max_tokens
    except LLMError:
        writer.checkpoint()
        raise
    finally:
        stream.close()
    if not writer.checkpoint():
        raise LeaseLost()
    writer.echo = writer.echo or echo.why(writer.text)
    return writer


# A sentence's end: its mark (not a title's period), then any closing quotes, brackets or
# emphasis marks.
_TITLES = "".join(rf"(?<!\b{t})" for t in ("Mr", "Mrs", "Ms", "Dr", "St", "Jr", "Sr"))
_SENTENCE_END = re.compile(rf"(?:{_TITLES}\.|[!?…])[\"'”’»)\]*_]*(?=\s|$)")


def whole_sentences(text: str) -> str:
    """`text` up to the end of its last finished sentence. As it is when it ends one, or
    when that would drop more than it keeps (better a fragment than half a story). Pure."""
    kept = text.rstrip()
    ends = list(_SENTENCE_END.finditer(kept))
    if not ends or ends[-1].end() == len(kept) or ends[-1].end() < len(kept) / 2:
        return text
    return kept[: ends[-1].end()]


def _narrative_open(
    ctx: MediumContext,
    outcome: Outcome | None,
    lease: PassLease,
    *,
    messages: list[Message],
    existing: Narrative | None,
) -> Narrative:
    """The pass's narrative row, with the messages its call is sent recorded. A run after a
    failed or lost one starts the text afresh under a new id, so no client ever joins the
    deltas of two runs, and its readers are told to drop the old text
    (`narrative.restarted`, sent before this run's first delta)."""
    ids = {o.pk: o.seq for o in ctx.outcomes}
    if outcome is not None:
        ids[outcome.pk] = outcome.seq
    for resolved in resolving_outcomes(ctx, outcome):
        ids[resolved.pk] = resolved.seq
    with transaction.atomic():
        # Conditional on the lease, and it locks the pass's row until commit: no narrative
        # of a run that lost its pass.
        record_messages(
            ctx.pass_, lease, "flesh", messages, skill_refs(prompt_skills(ctx, "narrative"))
        )
        if existing is not None:
            notify_narrative_restarted(existing)
            existing.delete()
        return Narrative.objects.create(
            frame=ctx.frame,
            seat=ctx.seat,
            user_id=None if ctx.shared else ctx.seat.user_id,
            shared=ctx.shared,
            source_pass=ctx.pass_,
            outcome_ids=[str(pk) for pk in sorted(ids, key=ids.__getitem__)],
            liquid_ids=[str(x.pk) for x in ctx.own],
            trigger=ctx.pass_.trigger,
            pscale=ctx.pscale,
        )


def _narrative_drop(narrative: Narrative, lease: PassLease) -> None:
    """An echoed narrative the pass gives up on: deleted, its readers told to drop what
    they got (`narrative.restarted`, as for any run begun again: the GM's retry writes it
    afresh under a new id). An echo may hold the prompt's secrets: it is never kept."""
    with transaction.atomic():
        if not held_pass(lease).select_for_update(of=("self",)).exists():
            raise LeaseLost()
        notify_narrative_restarted(narrative)
        narrative.delete()


def route_flesh(ctx: MediumContext, narrative: Narrative | None, *, lease: PassLease) -> None:
    """Finish the pass in one transaction: the narrative done and sent to its player, the
    liquid it narrated consumed by it, the window fired, the pass done. With no narrative
    (nothing was left to narrate) only the window and the pass."""
    with transaction.atomic():
        lock_frame(ctx.frame.pk)
        if not Pass.move(
            ctx.pass_.pk, PassStatus.DONE, only_from=(PassStatus.RUNNING,), where=lease.where
        ):
            raise LeaseLost()
        if narrative is not None:
            narrative = _narrative_done(narrative)
            for liquid in ctx.own:
                if Liquid.move(
                    liquid.pk,
                    LiquidStatus.CONSUMED,
                    only_from=(LiquidStatus.COMMITTED,),
                    consumed_by=narrative,
                ):
                    liquid.refresh_from_db()
                    notify_liquid("liquid.consumed", liquid, frame=ctx.frame, seats=ctx.seats)
            notify_narrative_done(narrative)
        # Loaded with the pass: a firing window changes only by moves like this one.
        window = ctx.pass_.window
        now = timezone.now()
        if window is not None and Window.move(
            window.pk, WindowStatus.FIRED, only_from=(WindowStatus.FIRING,), updated_at=now
        ):
            window.status, window.updated_at = WindowStatus.FIRED, now
            notify_window("window.done", window)


def _narrative_done(narrative: Narrative) -> Narrative:
    """Store the streamed narrative as done, or find it done by an earlier run (then it is
    the stored one).

    Raises:
        LeaseLost: it is neither streaming nor done (deleted by a later run).
    """
    now = timezone.now()
    if Narrative.move(
        narrative.pk,
        NarrativeStatus.DONE,
        only_from=(NarrativeStatus.STREAMING,),
        text=narrative.text,
        token_count=narrative.token_count,
        updated_at=now,
    ):
        narrative.status, narrative.updated_at = NarrativeStatus.DONE, now
        return narrative
    stored = Narrative.objects.filter(pk=narrative.pk, status=NarrativeStatus.DONE).first()
    if stored is None:
        raise LeaseLost()
    return stored

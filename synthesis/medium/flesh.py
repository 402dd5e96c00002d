"""Flesh: the character's personal narrative, streamed to its player (and the GM) in
batches of deltas (a shared frame's one prose to everyone), checkpointed, never written per
delta (lmix/realtime/stream.py); then routed: stored as done, its liquid consumed (never
narrated twice), the window fired and the pass done, in one transaction.
"""

import re

from django.db import transaction
from django.utils import timezone

from lmix.llm.base import LLMError, Message, Usage
from lmix.llm.client import llm_stream
from lmix.llm.tokens import count_tokens
from lmix.models import LLMModel
from lmix.prepared import Param, Prepared
from lmix.realtime.stream import TextStream
from synthesis.frame_events import lock_frame

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
from .context import LeaseLost, MediumContext, PassLease
from .prompts import compile_flesh, flesh_scene, reply_cap, resolving_outcomes
from .shaping import prompt_skills, skill_refs

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

    def add(self, delta: str) -> bool:
        self.tokens += count_tokens(delta)
        return super().add(delta)

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

    Raises:
        LLMError: the provider failed (the text so far is kept, for the GM to see).
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
    narrative = _narrative_open(ctx, outcome, lease, messages=messages, existing=existing)
    writer = NarrativeWriter(narrative, lease)
    cap = reply_cap(ctx.pscale)
    configured = model.config.get("max_tokens") if isinstance(model.config, dict) else None
    limit = min(cap, configured) if isinstance(configured, int) and configured > 0 else cap
    stream = llm_stream(
        model=model,
        messages=messages,
        purpose="synthesis.flesh",
        subject=f"pass:{ctx.pass_.pk}",
        overrides={"max_tokens": limit},
        usage=Usage(),
        context=scene,
    )
    try:
        for delta in stream:
            if not delta:
                continue
            if not writer.add(delta):
                raise LeaseLost()
            if writer.tokens >= limit:  # a provider that ignores max_tokens stops here
                break
    except LLMError:
        writer.checkpoint()
        raise
    finally:
        stream.close()
    if not writer.checkpoint():
        raise LeaseLost()
    # Stored (and sent whole with narrative.done) up to its last finished sentence: a
    # narrative over its budget was cut by max_tokens or the cap above, mid-sentence.
    narrative.text, narrative.token_count = whole_sentences(writer.text), writer.index
    return narrative


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

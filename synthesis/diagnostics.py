"""The GM's diagnostics: every LLM call a frame made, newest first, a page at a time, with
the pass or seat it was made for and the frame's totals (GET /api/frames/{id}/calls).

`LLMCall` has no frame column (lmix knows no frames): a frame's calls are the ones whose
`subject` names one of its passes ("pass:<id>": soft, medium — bones and flesh — and
epilogue passes), its seats ("seat:<id>": an AI seat's action, synthesis/ai_seats.py), its
outcomes ("outcome:<id>": the state pass after an outcome, synthesis/state/run.py) or
scenes ("scene:<id>": a closed scene's summaries, synthesis/scenes/run.py).
The subjects are computed in SQL from the frame's passes and seats, so a page is one query
whatever the frame's size, never a list of ids sent back to the database. A new kind of
frame call must use one of these subjects (the frame's budget, synthesis/budget.py, reads
the same ones).
"""

import time
from typing import Any

from django.db.models import CharField, Count, F, Q, QuerySet, Sum, Value
from django.db.models.functions import Cast, Concat, Replace, Substr

from lmix.llm.slots import endpoint_queue, slots_for
from lmix.models import LLMCall, Provider

from .models import Frame, Outcome, Pass, Scene, Seat
from .state_models import StatePassStatus

CALLS_PAGE = 100  # calls per page; `next_before` asks for the next one

# What each purpose is, in the GM's words; an unknown purpose shows as it is recorded.
PURPOSES = {
    "synthesis.soft": "Reading an intention (soft pass)",
    "synthesis.bones": "Resolving what happened (bones)",
    "synthesis.guard": "Checking an outcome for secrets (second opinion)",
    "synthesis.flesh": "Narrating it (flesh)",
    "synthesis.epilogue": "Epilogue",
    "synthesis.ai_act": "AI character acting",
    "synthesis.state": "Updating the characters' state",
    "synthesis.significance": "Weighing the characters' memories",
    "synthesis.author": "Adding to the world (author)",
    "synthesis.designer": "Writing a skill (designer)",
    "synthesis.scene": "Summarising a scene",
}
PROVIDERS = dict(Provider.choices)


def _subject(prefix: str) -> Concat:
    """`"<prefix>:<id>"` of a row's UUID primary key, in SQL, as `f"{prefix}:{pk}"` writes
    it: PostgreSQL casts a UUID to hyphenated text, SQLite stores 32 hex digits, so both
    are reduced to the digits and hyphenated again."""
    digits = Replace(Cast("pk", output_field=CharField()), Value("-"), Value(""))
    groups = ((1, 8), (9, 4), (13, 4), (17, 4), (21, 12))  # 8-4-4-4-12
    parts = [Substr(digits, start, length) for start, length in groups]
    dashed = [part for piece in parts for part in (Value("-"), piece)][1:]
    return Concat(Value(f"{prefix}:"), *dashed, output_field=CharField())


def frame_calls_query(frame_id: object) -> QuerySet[LLMCall]:
    """Every recorded LLM call of the frame (one query when evaluated)."""
    passes = Pass.objects.filter(frame_id=frame_id).annotate(s=_subject("pass")).values("s")
    seats = Seat.objects.filter(frame_id=frame_id).annotate(s=_subject("seat")).values("s")
    outcomes = Outcome.objects.filter(frame_id=frame_id).annotate(s=_subject("outcome"))
    scenes = Scene.objects.filter(frame_id=frame_id).annotate(s=_subject("scene")).values("s")
    return LLMCall.objects.filter(
        Q(subject__in=passes)
        | Q(subject__in=seats)
        | Q(subject__in=outcomes.values("s"))
        | Q(subject__in=scenes)
    )


def _totals(calls: QuerySet[LLMCall]) -> dict[str, int]:
    """The frame's calls, tokens, errors, latency and calls unfinished (one query)."""
    totals = calls.aggregate(
        calls=Count("pk"),
        prompt_tokens=Sum("prompt_tokens"),
        completion_tokens=Sum("completion_tokens"),
        errors=Count("pk", filter=~Q(error="")),
        latency_ms=Sum("latency_ms"),
        unfinished=Count("pk", filter=Q(finished_at__isnull=True)),
    )
    return {key: value or 0 for key, value in totals.items()}


def _status(call: LLMCall, pass_status: str | None) -> str:
    """done, failed, running — or cut_off: unfinished while its pass (or state pass) is no
    longer running (its worker died mid-call; the row is never completed)."""
    if call.finished_at is not None:
        return "failed" if call.error else "done"
    if pass_status is not None and pass_status != "running":  # PassStatus, StatePassStatus
        return "cut_off"
    return "running"


def frame_calls(*, frame: Frame, before: int | None = None) -> dict[str, Any]:
    """A page of the frame's LLM calls for its GM, newest first (before the call `before`,
    if given), each with its purpose, the pass (id, kind, seat, character) or AI seat it
    was made for, its model, tokens, latency, error and times; `next_before` for the next
    page, or null; and the frame's totals. Five queries whatever the number of calls:
    the page, the totals, the page's passes and outcomes, the frame's seats. The error is
    the recorded one (key-free, lmix/llm/client.py): the GM may read it, a player never
    gets here."""
    calls = frame_calls_query(frame.pk)
    page_query = calls if before is None else calls.filter(pk__lt=before)
    rows = list(
        page_query.order_by("-pk")
        .annotate(model_name=F("llm_model__name"))
        .defer("params")[: CALLS_PAGE + 1]
    )
    more = len(rows) > CALLS_PAGE
    rows = rows[:CALLS_PAGE]
    passes = _passes(frame, rows)
    outcomes = _outcomes(frame, rows)
    seats = list(
        Seat.objects.filter(frame=frame).order_by().values_list("pk", "persona__name", *MODEL)
    )
    names = {str(pk): name for pk, name, *_ in seats}
    models = [tuple(model) for _, _, *model in seats]
    if frame.medium_model_id is not None:
        models.append(tuple(getattr(frame.medium_model, f) for f in FIELDS))
    return {
        "calls": [_call_body(row, passes, outcomes, names) for row in rows],
        "next_before": rows[-1].pk if more else None,
        "page_size": CALLS_PAGE,
        "totals": _totals(calls),
        "queues": _queues(models),
    }


FIELDS = ("name", "provider", "api_endpoint", "config")  # a model, as `_queues` reads it
MODEL = tuple(f"assistant__model__{f}" for f in FIELDS)  # a seat's assistant's model


def _queues(models: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Each of the frame's models whose server is limited to a few calls at once (once per
    endpoint), with what runs and waits there now (lmix/llm/slots.py)."""
    now, seen, queues = time.time(), set(), []
    for name, provider, endpoint, config in models:
        if endpoint is None or endpoint in seen:
            continue
        seen.add(endpoint)
        slots = slots_for(provider, endpoint, config or {}, api_key=lambda: "", ask=False)
        if slots <= 0:
            continue
        queue = endpoint_queue(endpoint)
        queues.append(
            {
                "model": name,
                "slots": slots,
                **{
                    where: [
                        {
                            "label": PURPOSES.get(call.get("purpose", ""), "Another call"),
                            "seconds": round(max(0.0, now - call.get("since", now)), 1),
                        }
                        for call in calls
                    ]
                    for where, calls in queue.items()
                },
            }
        )
    return queues


def _ids(rows: list[LLMCall], kind: str) -> set[str]:
    return {row.subject.partition(":")[2] for row in rows if row.subject.startswith(f"{kind}:")}


def _passes(frame: Frame, rows: list[LLMCall]) -> dict[str, dict[str, Any]]:
    """The kind, status and seat of the passes `rows` were made for, by id (one query)."""
    if not (ids := _ids(rows, "pass")):
        return {}
    found = Pass.objects.filter(frame=frame, pk__in=ids).order_by()
    return {str(p["pk"]): p for p in found.values("pk", "kind", "status", "seat_id")}


def _outcomes(frame: Frame, rows: list[LLMCall]) -> dict[str, dict[str, Any]]:
    """The acting seat and the state pass's status of the outcomes `rows` were made for,
    by id (one query)."""
    if not (ids := _ids(rows, "outcome")):
        return {}
    found = Outcome.objects.filter(frame=frame, pk__in=ids).order_by()
    return {
        str(o["pk"]): {"seat_id": o["seat_id"], "status": o["state_pass__status"]}
        for o in found.values("pk", "seat_id", "state_pass__status")
    }


def _call_body(
    call: LLMCall,
    passes: dict[str, dict[str, Any]],
    outcomes: dict[str, dict[str, Any]],
    names: dict[str, str],
) -> dict[str, Any]:
    kind, _, pk = call.subject.partition(":")
    pass_ = passes.get(pk) if kind == "pass" else None
    outcome = outcomes.get(pk) if kind == "outcome" else None
    # The character: the pass's seat, the AI seat that acted, or the outcome's actor (none
    # for the GM's narration).
    owner = pass_ or outcome
    if owner is not None:
        seat = str(owner["seat_id"]) if owner["seat_id"] else None
    else:
        seat = pk if kind == "seat" else None
    status = (pass_ or {}).get("status")
    if outcome is not None:  # a state pass ends done or failed; "running" is the one
        status = outcome["status"] or StatePassStatus.RUNNING
    return {
        "id": call.pk,
        "purpose": call.purpose,
        "label": PURPOSES.get(call.purpose, call.purpose),
        "kind": call.kind,
        "pass_id": pk if pass_ else None,
        "pass_kind": pass_["kind"] if pass_ else None,
        "outcome_id": pk if outcome else None,
        "seat": seat,
        "character": names.get(seat) if seat else None,
        "model_name": call.model_name,
        "model_id": call.model_id,
        "provider": call.provider,
        "provider_label": PROVIDERS.get(call.provider, call.provider),
        "prompt_tokens": call.prompt_tokens,
        "completion_tokens": call.completion_tokens,
        "latency_ms": call.latency_ms if call.finished_at else None,
        "error": call.error,
        "status": _status(call, status),
        "started_at": call.created_at.isoformat(),
        "finished_at": call.finished_at.isoformat() if call.finished_at else None,
    }

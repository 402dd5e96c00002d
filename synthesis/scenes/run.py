"""A closed scene's summaries, queued (tasks.py::scene_summary_task, streams queue), never
on the path from a commit to its outcome: one structured call per seat, from that
character's point of view and the outcomes it witnessed only (Outcome.witnesses, the rule
of memories), which also refreshes its edge summaries (`Edge.summary`, how it sees each
other character it saw); and one public call from the scene's public outcomes, read by the
shared prompts. Counted against the frame's model budget as background work (subject
"scene:<id>"); the offline narrator answers from the same facts (schema.py). A failure is
the GM's to read and retry (`scene_summary_retry`), never a loop."""

import logging
from typing import Any

from django.db import transaction

from lmix.errors import ApplicationError
from lmix.llm.base import LLMError, Message
from lmix.llm.client import llm_structured
from lmix.realtime.leases import LeasedWork, lease_claim, lease_held, lease_sweep, leased

from ..budget import Work, budget_admits
from ..enqueue import SCENE_SUMMARY, scene_summary_enqueue, scene_summary_key
from ..event_types import SceneSummarized
from ..frame_events import gm_group, seat_group
from ..frame_selectors import seats_for_prompts
from ..medium.context import flat, seat_labels
from ..medium.prompts import fit_messages, outcome_lines, public_character, result_act, template
from ..medium.run import medium_model
from ..models import Frame, Outcome, Seat
from ..scene_models import SUMMARY_TRANSITIONS, Scene, SceneSummary, SummaryStatus
from ..state_models import AFFINITY_START, TRUST_START, Edge
from .schema import EDGE_SUMMARY_MAX, SUMMARY_MAX, CharacterSummary, PublicSummary, SummaryScene

logger = logging.getLogger(__name__)
PURPOSE = "synthesis.scene"
REPLY_TOKENS = 600
UNEXPECTED = "Something went wrong while summarising the scene."
OUTCOMES_MAX = 60  # the newest of a scene's outcomes a summary reads


def scene_summary_run(*, scene_id: object) -> Scene | None:
    """Write the summaries of closed scene `scene_id`, unless another run has it.

    Returns:
        The scene (done or failed), or None: gone, or not this run's to write.
    """
    with lease_held() as owner:
        if not lease_claim(SCENES, scene_id, owner):
            return None  # a duplicate or late task: another run has it, or had it
        scene = Scene.objects.select_related(
            "frame__production__world", "frame__production__scenario", "frame__medium_model"
        ).get(pk=scene_id)
        tries: list[dict[str, Any]] = []
        try:
            _run(scene, tries)
        except (LLMError, ApplicationError) as error:
            _finish(scene, tries, error=flat(str(error), 2000))
        except Exception:
            logger.exception("the summaries of scene %s failed unexpectedly", scene.pk)
            _finish(scene, tries, error=UNEXPECTED)
        return scene


def _run(scene: Scene, tries: list[dict[str, Any]]) -> None:
    frame = scene.frame
    if not budget_admits(frame_id=frame.pk, kind=Work.AI, what=f"scene:{scene.pk}"):
        raise ApplicationError("The frame's model budget was spent: the scene was not summarised.")
    seats = seats_for_prompts(frame=frame)
    labels = seat_labels(seats)
    # Held outcomes are the GM's until released: in no summary.
    outcomes = list(
        Outcome.objects.filter(
            frame=frame, seq__gt=scene.opened_seq, seq__lte=scene.closed_seq, held=False
        ).order_by("-seq")[:OUTCOMES_MAX]
    )[::-1]
    # Public: what every character present saw (a shared prompt reads it for anyone).
    everyone = {str(s.pk) for s in seats}
    public = _call(
        scene,
        seats,
        labels,
        [o for o in outcomes if everyone <= set(o.witnesses or [])],
        None,
        tries,
    )
    own: dict[Seat, CharacterSummary] = {}
    for seat in seats:
        seen = [o for o in outcomes if str(seat.pk) in (o.witnesses or [])]
        if seen:
            own[seat] = _call(scene, seats, labels, seen, seat, tries)
    with transaction.atomic():
        if not _finish(scene, tries, summary=flat(public.summary, SUMMARY_MAX)):
            return  # taken over meanwhile: that run writes them
        _store(scene, frame, own, labels)
    transaction.on_commit(lambda: _notify(scene, own))


def _call(
    scene: Scene,
    seats: list[Seat],
    labels: dict,
    outcomes: list[Outcome],
    seat: Seat | None,
    tries: list[dict[str, Any]],
) -> Any:
    """One summary: `seat`'s own (from the outcomes it witnessed), or the public one."""
    frame = scene.frame
    name = labels[seat.pk] if seat is not None else ""
    others = tuple(labels[s.pk] for s in seats if seat is None or s.pk != seat.pk)
    context = SummaryScene(
        number=scene.number,
        title=scene.title,
        character=name,
        acts=tuple(result_act(e, labels) for o in outcomes for e in o.actions_resolved),
        facts=tuple(flat(f) for o in outcomes for f in o.world_facts),
        others=others,
    )
    schema = CharacterSummary if seat is not None else PublicSummary
    return llm_structured(
        model=medium_model(frame=frame, seat=seat or seats[0]),
        messages=summary_messages(scene, seats, labels, outcomes, seat),
        schema=schema,
        purpose=PURPOSE,
        subject=f"scene:{scene.pk}",
        max_tokens=REPLY_TOKENS,
        tries=tries,
        context=context,
    )


def summary_messages(
    scene: Scene, seats: list[Seat], labels: dict, outcomes: list[Outcome], seat: Seat | None
) -> list[Message]:
    """A summary's prompt: public only (the setting, the characters as anyone sees them,
    the outcomes), and for a character only the outcomes it witnessed, so its summary can
    hold nothing it did not see; the oldest outcomes go first if it must shrink."""
    system, user = template("scene_summary.txt")
    production = scene.frame.production
    name = labels[seat.pk] if seat is not None else ""
    system = system.format(
        point_of_view=f"{name}'s point of view" if name else "the point of view of anyone present",
        whose=f"as {name} lived it" if name else "as anyone present saw it",
        relationships=(
            "- relationships: for each other character "
            f"{name} saw in it, one sentence of how {name} now sees them (toward: their name "
            "exactly as written)."
            if name
            else ""
        ),
        world_name=production.world.name,
        world=production.world.description.strip(),
        scenario_name=production.scenario.name,
        scenario=production.scenario.description.strip(),
        characters="\n".join(public_character(s, labels[s.pk])[:2000] for s in seats),
    )
    return fit_messages(
        system,
        user,
        fixed={
            "number": str(scene.number),
            "title": f" — {scene.title}" if scene.title else "",
            "who": name.upper() if name else "EVERYONE",
        },
        parts={"outcomes": [outcome_lines(o, labels) for o in outcomes]},
        drop_order=("outcomes",),
        model=medium_model(frame=scene.frame, seat=seat or seats[0]),
        reply=REPLY_TOKENS,
    )


def _store(scene: Scene, frame: Frame, own: dict[Seat, CharacterSummary], labels: dict) -> None:
    by_name = {name.casefold(): pk for pk, name in labels.items()}
    for seat, answer in own.items():
        SceneSummary.objects.update_or_create(
            scene=scene,
            seat=seat,
            defaults={
                "frame": frame,
                "number": scene.number,
                "text": flat(answer.summary, SUMMARY_MAX),
            },
        )
        for line in answer.relationships:
            target = by_name.get(" ".join(line.toward.split()).casefold())
            text = flat(line.summary, EDGE_SUMMARY_MAX)
            if target is None or target == seat.pk or not text:
                continue  # only toward another character of the frame
            edge, created = Edge.objects.get_or_create(
                source=seat,
                target_id=target,
                defaults={
                    "frame": frame,
                    "affinity": AFFINITY_START,
                    "trust": TRUST_START,
                    "summary": text,
                },
            )
            if not created:
                Edge.objects.filter(pk=edge.pk).update(summary=text)


def _finish(
    scene: Scene, tries: list[dict[str, Any]], *, error: str = "", summary: str = ""
) -> bool:
    """End the run, done (with the public `summary`) or failed with `error`, if it still
    holds the scene (its lease as claimed)."""
    to = SummaryStatus.FAILED if error else SummaryStatus.DONE
    fields: dict[str, Any] = {"summary_error": error, "tries": tries}
    if not error:
        fields["summary"] = summary
    held = {"lease_owner": scene.lease_owner, "attempts": scene.attempts}
    if not Scene.summary_move(scene.pk, to, where={"summary_status": "running", **held}, **fields):
        return False
    scene.summary_status, scene.summary_error = to, error
    if not error:
        scene.summary = summary
    if error:
        logger.warning("the summaries of scene %s failed: %s", scene.pk, error)
    return True


def _notify(scene: Scene, own: dict[Seat, CharacterSummary]) -> None:
    """`scene.summarized`: each seat's player its own summary, the GM all of them."""
    from lmix.realtime.publish import group_send

    base = {"type": "scene.summarized", "scene": str(scene.pk), "number": scene.number}
    texts = {str(seat.pk): flat(a.summary, SUMMARY_MAX) for seat, a in own.items()}
    group_send(
        gm_group(scene.frame_id),
        SceneSummarized(**base, public=scene.summary, summaries=texts).wire(),
    )
    for seat in own:
        if seat.user_id is not None:
            event = SceneSummarized(**base, public=scene.summary, summary=texts[str(seat.pk)])
            group_send(seat_group(scene.frame_id, seat.pk), event.wire())


def scene_summary_retry(*, frame: Frame, number: int) -> Scene:
    """The GM sends a failed scene summary back to be written.

    Raises:
        ApplicationError: no such scene (404), or its summaries did not fail (409).
    """
    scene = Scene.objects.filter(frame=frame, number=number).first()
    if scene is None:
        raise ApplicationError("No such scene.", status_code=404)
    if not Scene.summary_move(
        scene.pk, SummaryStatus.PENDING, where={"summary_status": "failed"}, summary_error=""
    ):
        raise ApplicationError("Only a failed summary can be retried.", status_code=409)
    transaction.on_commit(lambda: scene_summary_enqueue(scene.pk))
    scene.refresh_from_db()
    return scene


def scene_summaries_sweep() -> dict[str, int]:
    """The backstop for scene summaries (`lease_sweep`)."""
    return lease_sweep(SCENES)


# A closed scene's summaries as a job (lmix/realtime/leases.py): a run whose worker died
# is run again (it changed nothing: its writes commit with its end), or fails for the GM's
# retry once it has had its runs; one whose task was lost is enqueued again.
SCENES = leased(
    LeasedWork(
        name="scene summaries",
        what="a closed scene's summaries: each character's own, the public one",
        model=Scene,
        task=SCENE_SUMMARY,
        transitions=SUMMARY_TRANSITIONS,
        status_field="summary_status",
        error_field="summary_error",
        pending=SummaryStatus.PENDING,
        running=SummaryStatus.RUNNING,
        failed=SummaryStatus.FAILED,
        key=scene_summary_key,
        enqueue=lambda scene_id: scene_summary_enqueue(scene_id),
        load=lambda rows: rows.defer("tries"),
        rerun_reset=lambda scene: {"tries": []},
        fail_message="The worker writing the summaries stopped ({attempts} tries). Retry it.",
    )
)

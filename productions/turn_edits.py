"""Changing turns after the fact: edit a turn's text, delete it (with or without what
follows it), continue the last turn of a branch, rewind the branch to an earlier turn."""

from dataclasses import dataclass, field
from enum import StrEnum

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from lmix.errors import ApplicationError

from . import events, hooks
from .enqueue import turn_generate_enqueue
from .models import ACTIVE_STATUSES, Production, SpeakerKind, Turn, TurnStatus
from .selectors import cast_load, turn_branch
from .services import autoplay_end


class BranchChoice(StrEnum):
    """What happens to the turns after a deleted one."""

    DELETE = "delete"  # they go too
    KEEP = "keep"  # they stay, following the deleted turn's parent


def _locked(turn: Turn) -> tuple[Production, Turn]:
    """The production's row lock (turn requests take it too), then the turn as it is now."""
    production = Production.objects.select_for_update().get(pk=turn.production_id)
    return production, Turn.objects.get(pk=turn.pk)


def _refuse_while_written(turn: Turn) -> None:
    if turn.status in ACTIVE_STATUSES:
        raise ApplicationError(
            "This turn is still being written: stop it or wait for it first.", status_code=409
        )


@transaction.atomic
def turn_edit(*, turn: Turn, content: str) -> Turn:
    """Replace a finished turn's text (what later turns are prompted with changes too)."""
    _production, turn = _locked(turn)
    _refuse_while_written(turn)
    if turn.status == TurnStatus.FAILED:
        raise ApplicationError(
            "A failed turn cannot be edited: retry it, or delete it.", status_code=409
        )
    turn.content = content
    turn.edited_at = timezone.now()
    turn.save(update_fields=["content", "edited_at", "updated_at"])
    events.notify_turn_edited(turn)
    return turn


def _descendants(production: Production, turn: Turn) -> list[Turn]:
    """Every turn below `turn`, in one query."""
    children: dict[object, list[Turn]] = {}
    for other in production.turns.only("id", "parent_id", "status"):
        children.setdefault(other.parent_id, []).append(other)
    found, frontier = [], [turn.pk]
    while frontier:
        below = [child for parent in frontier for child in children.get(parent, [])]
        found += below
        frontier = [child.pk for child in below]
    return found


def _newest_below(production: Production, parent_id: object | None) -> object | None:
    """Where the head goes when it was deleted: the newest turn left under `parent_id` (the
    whole tree for None), else `parent_id` itself. The page shows the same branch
    (frontend/src/lib/branches.ts::latestLeaf), and the head is exactly where it ends."""
    children: dict[object, list[Turn]] = {}
    for other in production.turns.only("id", "parent_id", "created_at"):
        children.setdefault(other.parent_id, []).append(other)
    below, frontier = [], [parent_id]
    while frontier:
        found = [child for at in frontier for child in children.get(at, [])]
        below += found
        frontier = [child.pk for child in found]
    newest = max(below, key=lambda t: (t.created_at, str(t.pk)), default=None)
    return newest.pk if newest else parent_id


@transaction.atomic
def turn_delete(*, turn: Turn, branch: BranchChoice | None = None) -> list[str]:
    """Delete a turn. A turn with later turns needs `branch`: delete them too, or keep them
    (they then follow its parent). The production's head moves up when it was removed.

    Returns:
        The ids of the deleted turns.

    Raises:
        ApplicationError: 409 while a turn concerned is being written, or when later turns
            exist and `branch` does not say what to do with them.
    """
    production, turn = _locked(turn)
    below = _descendants(production, turn)
    _refuse_while_written(turn)
    if any(other.status in ACTIVE_STATUSES for other in below):
        raise ApplicationError(
            "A later turn is still being written: stop it or wait for it first.",
            status_code=409,
        )
    children = [other for other in below if other.parent_id == turn.pk]
    if children and branch is None:
        raise ApplicationError(
            f"{len(below)} later turn(s) follow this one: delete them too "
            "(?branch=delete) or keep them (?branch=keep).",
            status_code=409,
            details={"later_turns": len(below)},
        )
    deleted = [turn, *below] if branch == BranchChoice.DELETE else [turn]
    deleted_ids = {other.pk for other in deleted}
    kept_children = [] if branch == BranchChoice.DELETE else children
    if kept_children:
        Turn.objects.filter(pk__in=[child.pk for child in kept_children]).update(
            parent_id=turn.parent_id
        )
        Turn.objects.filter(pk__in=[other.pk for other in below]).update(depth=F("depth") - 1)
    # Kept children were moved up first, so the tree's cascade takes none of them.
    Turn.objects.filter(pk__in=deleted_ids).delete()
    if production.head_id in deleted_ids:
        production.head_id = _newest_below(production, turn.parent_id)
        production.save(update_fields=["head", "updated_at"])
    events.notify_turns_deleted(
        production.pk,
        deleted=[str(pk) for pk in deleted_ids],
        reparented=[str(child.pk) for child in kept_children],
        head=production.head_id,
    )
    return [str(pk) for pk in deleted_ids]


@transaction.atomic
def turn_continue(*, turn: Turn) -> Turn:
    """Extend the last turn of a branch: its speaker goes on from where the text ends,
    streamed like a new turn. Nothing written so far is lost, even if the run fails.

    Raises:
        ApplicationError: 400 for a turn nobody generates (a director's or written by
            hand as a character), 409 when turns follow it or another turn is being
            written.
    """
    production, turn = _locked(turn)
    if turn.speaker_kind != SpeakerKind.ASSISTANT:
        raise ApplicationError("Only an assistant's turn can be continued.")
    if turn.status not in (TurnStatus.DONE, TurnStatus.STOPPED):
        raise ApplicationError(
            "Only a finished turn can be continued: retry a failed one.", status_code=409
        )
    if production.turns.filter(parent=turn).exists():
        raise ApplicationError(
            "Only the last turn of a branch can be continued: later turns follow this one.",
            status_code=409,
        )
    if production.turns.filter(status__in=ACTIVE_STATUSES).exists():
        raise ApplicationError(
            "A turn is already being generated; stop it or wait for it.", status_code=409
        )
    if not any(member.pk == turn.assistant_id for member in cast_load(production=production)):
        raise ApplicationError("This assistant is no longer in the production's cast.")
    Turn.move(turn.pk, TurnStatus.PENDING, continuation=True, error="")
    turn.refresh_from_db()
    production.head = turn
    production.save(update_fields=["head", "updated_at"])
    events.notify_turn_continued(turn)

    transaction.on_commit(lambda: turn_generate_enqueue(turn.pk))
    return turn


@dataclass(frozen=True)
class Rewind:
    """What a rewind to `to` undoes: the turns of the followed branch after it (kept, and
    restored by moving the head back to `restore`), and what higher layers hid with them
    (`hooks.rewind_counts`: the cast's state deltas and memories of those turns)."""

    to: Turn
    restore: object  # the head before the rewind: `PUT head` to it restores
    turns: list[Turn]
    counts: dict[str, int] = field(default_factory=dict)


@transaction.atomic
def production_rewind(*, production: Production, to: Turn, dry_run: bool = False) -> Rewind:
    """Go back to `to` on the branch being followed: the head moves there, the turns after
    it are kept (a branch of the tree, as a regenerated turn's siblings are), so moving the
    head forward again (`PUT head` to `Rewind.restore`) restores everything, state included:
    the cast's state is the fold of the head's branch (synthesis/state/productions.py).

    Raises:
        ApplicationError: 409 while a turn is being written; 400 when `to` is not on the
            branch being followed, or is its last turn already.
    """
    production = Production.objects.select_for_update().get(pk=production.pk)
    for active in production.turns.filter(status__in=ACTIVE_STATUSES):
        _refuse_while_written(active)
    branch = turn_branch(production=production, leaf_id=production.head_id)
    ids = [turn.pk for turn in branch]
    if to.pk not in ids:
        raise ApplicationError(
            "That turn is not on the branch being followed: choose its branch first.",
            details={"to": ["Not on the branch being followed."]},
        )
    undone = branch[ids.index(to.pk) + 1 :]
    if not undone:
        raise ApplicationError(
            "Nothing to undo: that is already the last turn of the branch.",
            details={"to": ["Already the last turn."]},
        )
    plan = Rewind(
        to=to,
        restore=production.head_id,
        turns=undone,
        counts=hooks.rewind_counts([turn.pk for turn in undone]),
    )
    if not dry_run:
        production.head = to
        production.save(update_fields=["head", "updated_at"])
        events.notify_head_moved(production)
        autoplay_end(production)  # it would go on from the branch left behind
    return plan

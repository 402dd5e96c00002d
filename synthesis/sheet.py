"""A seat's character sheet and scene intro: the world and scenario, the character itself,
its groups and the others, exactly as its prompts know them. Built from the knowledge
compiler's `knowledge_of` (productions/knowledge.py), the one place the visibility rules
live, so the sheet can show a player nothing their character's prompts may not know."""

import uuid
from typing import Any

from lmix.errors import ApplicationError
from productions.knowledge import MembershipView, knowledge_of, public_name

from .frame_selectors import FrameAccess, seats_for_prompts


def seat_sheet(*, access: FrameAccess, seat_id: object) -> dict[str, Any]:
    """The sheet of one seat's character, for its current player or the frame's GM.

    Returns:
        The `CharacterSheet` answer (synthesis/answers.py).
    Raises:
        ApplicationError: no such seat in the frame, or not the caller's to read (404 both:
            another's sheet is not even said to exist).
    """
    seat_pk = uuid.UUID(str(seat_id))  # the URL lets only a UUID through
    if not access.is_gm and seat_pk not in access.seat_ids:
        raise ApplicationError("No such seat in this frame.", status_code=404)
    frame = access.frame
    seats = seats_for_prompts(frame=frame)
    seat = next((s for s in seats if s.pk == seat_pk), None)
    if seat is None:
        raise ApplicationError("No such seat in this frame.", status_code=404)
    production = frame.production
    me = seat.persona
    knowledge = knowledge_of(
        speaker=me,
        cast=[s.persona for s in seats],
        world=production.world,
        scenario=production.scenario,
    )
    views = {view.pk: view for view in knowledge.others}
    return {
        "seat": str(seat.pk),
        "world": {"name": knowledge.world.name, "description": knowledge.world.description},
        "scenario": {
            "name": knowledge.scenario.name,
            "description": knowledge.scenario.description,
        },
        "me": {
            "name": me.name,
            "public_name": public_name(me),
            "avatar_url": me.avatar_url,
            "universal": me.universal_truth,
            "internal": me.internal_truth,
            # What every other character's prompt holds of this one (their OTHER
            # PARTICIPANTS): not a secret from anyone, so the player may read it too.
            "external": me.external_truth,
            "style": me.style,
        },
        "groups": [_group(membership) for membership in knowledge.own],
        "others": [
            {
                "seat": str(other.pk),
                "persona": str(other.persona_id),
                "public_name": view.public_name,
                "real_name": view.real_name,
                "avatar_url": other.persona.avatar_url,
                "universal": view.universal,
                "external": view.external,
                "groups": [_group(membership) for membership in view.affiliations],
            }
            for other in seats
            if (view := views.get(other.persona_id)) is not None
        ],
    }


def _group(membership: MembershipView) -> dict[str, Any]:
    group = membership.group
    return {
        "name": group.name,
        "universal": group.universal,
        "external": group.external,
        "internal": group.internal,
        "covert": membership.covert,
    }

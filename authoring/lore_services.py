"""Writes to a world's lorebook: entries whose layer names exactly who may know them."""

from typing import Any

from django.db import transaction

from lmix.errors import ApplicationError

from .models import LoreEntry, LoreLayer

# The relation each restricted layer needs; a layer uses no other.
RESTRICTION = {LoreLayer.AFFILIATION: "affiliation", LoreLayer.PERSONA: "persona"}
MISSING = {
    "affiliation": "Choose the affiliation whose members know this entry.",
    "persona": "Choose the persona who knows this entry.",
}


@transaction.atomic
def lore_entry_save(*, entry: LoreEntry, data: dict[str, Any]) -> LoreEntry:
    """Create or change a lore entry (its world and owner already set).

    The layer decides which of `affiliation` and `persona` is kept: the one it needs is
    required, the other is cleared when it only came from the entry as it was (a layer
    change), and refused when sent, so an entry never reads as restricted when it is not.

    Args:
        data: validated fields (keys, content, enabled, layer, affiliation, persona,
            priority); absent ones keep their value.
    Raises:
        ApplicationError: the layer's group or persona is missing, or another is sent.
    """
    for attr, value in data.items():
        setattr(entry, attr, value)
    needed = RESTRICTION.get(LoreLayer(entry.layer))
    errors: dict[str, list[str]] = {}
    for field in ("affiliation", "persona"):
        if field == needed:
            if getattr(entry, f"{field}_id") is None:
                errors[field] = [MISSING[field]]
        elif data.get(field) is not None:
            layer = LoreLayer(entry.layer).label.lower()
            errors[field] = [f"An entry known to {layer} takes no {field}; leave it empty."]
        else:
            setattr(entry, field, None)
    if errors:
        raise ApplicationError(next(iter(errors.values()))[0], details=errors)
    entry.save()
    return entry

"""The socket events' contract: the unvalidated dicts of the per-token hot path match their
models, and docs/realtime.md's audience table says what the models declare."""

import re
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import get_args

from lmix.realtime.wire import Event
from productions.event_types import DraftToken, TurnToken
from synthesis.event_types import ALL_EVENTS, FRAME_EVENTS, NarrativeToken

DOC = Path(__file__).resolve().parent.parent / "docs" / "realtime.md"
COLUMNS = ("frame", "seat", "gm", "spectators")  # the table's order


def event_types(model: type[Event]) -> tuple[str, ...]:
    return get_args(model.model_fields["type"].annotation)


def test_every_event_type_has_one_model():
    types = [t for model in ALL_EVENTS for t in event_types(model)]
    assert len(types) == len(set(types))


def test_the_deltas_sent_unvalidated_are_what_their_models_validate(monkeypatch):
    from productions import events as production_events
    from synthesis import events as synthesis_events

    sent: list[dict] = []
    for module in (production_events, synthesis_events):
        monkeypatch.setattr(module, "group_send", lambda group, event: sent.append(event))
    ids = [uuid.uuid4() for _ in range(3)]
    turn = SimpleNamespace(pk=ids[0], production_id=ids[1], attempts=2)
    production_events.notify_turn_token(turn, index=0, delta="Hi")
    production_events.notify_draft(ids[1], "draft.token", str(ids[2]), index=3, delta=" there")
    narrative = SimpleNamespace(pk=ids[0], seat_id=ids[1], frame_id=ids[2], shared=True)
    synthesis_events.notify_narrative_token(narrative, index=1, delta="x")

    models = [TurnToken, DraftToken, NarrativeToken]
    assert [event["type"] for event in sent] == [event_types(m)[0] for m in models]
    for model, event in zip(models, sent, strict=True):
        assert model(**event).wire() == event
        assert list(event) == list(model.model_fields)  # the wire's key order too


def documented_audiences() -> dict[str, set[str]]:
    """docs/realtime.md's audience table: event type → the columns marked `yes`."""
    text = DOC.read_text()
    start = text.index("| event | frame group (everyone) |")
    rows = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        heard = {col for col, cell in zip(COLUMNS, cells[1:], strict=True) if cell == "yes"}
        # The event types are the cell's leading code spans (before any explanation).
        for name in re.findall(r"`([a-z]+\.?[a-z]*)`", cells[0].split(" (")[0]):
            rows[name] = heard
    return rows


def test_the_audience_table_of_docs_realtime_says_what_the_events_declare():
    declared = {t: set(m.audiences) for m in FRAME_EVENTS for t in event_types(m)}
    assert documented_audiences() == declared

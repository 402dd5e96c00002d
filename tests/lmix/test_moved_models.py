"""Models that moved between apps keep their rows: the moves change Django's state only
(lmix/moved_models.py). A database made before the moves migrates to them and back with
its frames, seats and personas readable, and their content types follow them."""

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from authoring.models import Persona
from synthesis.models import Frame
from tests.factories import UserFactory
from tests.synthesis.conftest import make_frame

BEFORE_THE_MOVES = [
    ("lmix", "0007_prompt_controls"),
    ("productions", "0006_frame_bans"),
    ("synthesis", "0006_liquid_flags"),
    ("authoring", None),
]
MOVED = {
    "synthesis": ["frame", "seat", "frameban"],
    "authoring": [
        "world",
        "scenario",
        "affiliation",
        "persona",
        "membership",
        "assistant",
        "loreentry",
    ],
}
WHERE_THEY_WERE = {"synthesis": "productions", "authoring": "lmix"}


def migrate(targets: list[tuple[str, str | None]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor


def content_type_apps(model: str) -> set[str]:
    return set(ContentType.objects.filter(model=model).values_list("app_label", flat=True))


@pytest.mark.django_db(transaction=True)
def test_rows_and_content_types_survive_the_moves_both_ways():
    gm = UserFactory()
    frame = make_frame(gm, open_seats=2)
    seat_names = sorted(frame.seats.values_list("persona__name", flat=True))
    personas = Persona.objects.filter(owner=gm).count()
    for app, models in MOVED.items():
        for model in models:
            ContentType.objects.get_or_create(app_label=app, model=model)
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()

    executor = migrate(BEFORE_THE_MOVES)
    old = executor.loader.project_state([t for t in BEFORE_THE_MOVES if t[1]]).apps
    old_frame = old.get_model("productions", "Frame").objects.get(pk=frame.pk)
    old_seats = old.get_model("productions", "Seat").objects.filter(frame=old_frame)
    assert sorted(seat.persona.name for seat in old_seats) == seat_names
    assert old.get_model("lmix", "Persona").objects.filter(owner_id=gm.pk).count() == personas
    for app, models in MOVED.items():
        for model in models:
            assert content_type_apps(model) == {WHERE_THEY_WERE[app]}, model

    migrate(latest)
    moved = Frame.objects.get(pk=frame.pk)
    assert sorted(seat.persona.name for seat in moved.seats.all()) == seat_names
    assert Persona.objects.filter(owner=gm).count() == personas
    for app, models in MOVED.items():
        for model in models:
            assert content_type_apps(model) == {app}, model

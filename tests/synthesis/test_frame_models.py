"""Which model plays a frame: without the GM's choice, each seat's medium pass plays on its
character's model and the soft pass on the cast's most common one, never silently on the
GM's default; the GM sees which model each pass uses and changes them (with the name, the
tempo and who reads intentions) on a running frame."""

from datetime import timedelta
from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from lmix.errors import ApplicationError
from lmix.models import OFFLINE_ENDPOINT, LLMCall, LLMModel
from productions.models import CastMember
from synthesis import medium
from synthesis.frame_events import frame_group
from synthesis.frame_llm import FrameModels
from synthesis.frames import frame_create, frame_update, seat_update
from synthesis.liquid import liquid_submit
from synthesis.medium import run as run_module
from synthesis.models import Frame, Pass
from synthesis.soft import SOFT_MAX_TOKENS, soft_pass_run
from tests.factories import AssistantFactory, UserFactory
from tests.productions.conftest import make_production
from tests.synthesis.conftest import Scene, run, seat_player

pytestmark = pytest.mark.django_db(transaction=True)


def offline_model(owner, name: str) -> LLMModel:
    """Another offline narrator of the owner's (not their default): real calls, recorded."""
    return LLMModel.objects.create(
        owner=owner,
        name=name,
        provider="offline",
        api_endpoint=OFFLINE_ENDPOINT,
        model_id="narrator",
    )


class CastScene(Scene):
    """Scene's table (Alice and Bob played by people, Tony by his assistant) with its whole
    cast on `cast_model`, which is not the GM's default."""

    def __init__(self, gm, cast_model: LLMModel, **options) -> None:
        production = make_production(gm, model=cast_model)
        personas = [member.assistant.persona_id for member in production.cast.all()]
        self.frame = frame_create(
            production=production, name="Scene", open_seats=personas[:2], **options
        )
        self.alice_player, self.alice_api = seat_player(self.frame, 0)
        self.bob_player, _ = seat_player(self.frame, 1)
        self.alice, self.bob, self.tony = self.frame.seats.order_by("position")
        self.t0 = timezone.now() - timedelta(seconds=30)


def models_called(pass_) -> set[int]:
    return set(
        LLMCall.objects.filter(subject=f"pass:{pass_.pk}").values_list("llm_model_id", flat=True)
    )


def soft_pass(scene, seat, player, text="I search the desk."):
    """Submit for `seat` and run its soft pass here: that pass's LLM calls, the liquid. Only
    its own: the suite's worker may be playing this frame's AI seat meanwhile."""
    with mock.patch("synthesis.tasks.soft_pass_task.delay"):
        liquid = liquid_submit(frame=scene.frame, seat=seat, content=text, user=player)
    (pass_,) = Pass.objects.filter(liquid=liquid, kind="soft")
    soft_pass_run(pass_id=pass_.pk)
    calls = LLMCall.objects.filter(purpose="synthesis.soft", subject=f"pass:{pass_.pk}")
    return list(calls), liquid


# -- the default rule ---------------------------------------------------------------------


def test_a_frame_whose_cast_is_on_a_model_plays_every_pass_on_it_not_the_gms_default(user):
    cast_model = offline_model(user, "Cast model")
    default = LLMModel.objects.get(owner=user, is_default=True)
    assert cast_model != default
    scene = CastScene(user, cast_model)
    assert scene.frame.soft_model is None and scene.frame.medium_model is None

    human = run(scene.fire(scene.alice, scene.commit(scene.alice, "I open the door.")))
    ai = run(scene.fire(scene.tony, scene.commit(scene.tony, "I light a cigar.", after=1)))
    assert human.status == ai.status == "done"
    assert models_called(human) == models_called(ai) == {cast_model.pk}

    calls, liquid = soft_pass(scene, scene.alice, scene.alice_player)
    liquid.refresh_from_db()
    assert liquid.analysis_source == "model"
    assert [c.llm_model_id for c in calls] == [cast_model.pk]
    assert calls[0].params["max_tokens"] == SOFT_MAX_TOKENS
    assert not LLMCall.objects.filter(llm_model=default).exists()


def test_the_frames_own_models_win_over_the_cast(user):
    cast_model = offline_model(user, "Cast model")
    chosen = offline_model(user, "Chosen")
    scene = CastScene(user, cast_model, soft_model=chosen, medium_model=chosen)
    ai = run(scene.fire(scene.tony, scene.commit(scene.tony, "I light a cigar.")))
    assert ai.status == "done" and models_called(ai) == {chosen.pk}
    calls, _ = soft_pass(scene, scene.alice, scene.alice_player)
    assert [c.llm_model_id for c in calls] == [chosen.pk]


def test_each_seat_plays_on_its_characters_model_then_the_casts_most_common_then_the_default(
    user,
):
    a, b, c = (offline_model(user, name) for name in ("A", "B", "C"))
    default = LLMModel.objects.get(owner=user, is_default=True)
    scene = CastScene(user, a)
    rule = FrameModels(scene.frame)
    assert rule.medium(scene.alice).model == a and rule.medium(scene.alice).source == "assistant"
    # Bob's cast member moves to B: Bob (a human seat) narrates with his character's model.
    bob_member = next(
        m for m in CastMember.objects.all() if m.assistant.persona == scene.bob.persona
    )
    bob_member.assistant.model = b
    bob_member.assistant.save()
    rule = FrameModels(scene.frame)
    assert rule.medium(scene.bob).model == b
    assert rule.soft().model == a and rule.soft().source == "cast"  # two of three are on A
    # The GM gives Tony another assistant of his persona, on C: his seat's assistant wins.
    other = AssistantFactory(owner=user, persona=scene.tony.persona, model=c)
    seat_update(frame=scene.frame, seat=scene.tony, controller="ai", assistant=other)
    scene.tony.refresh_from_db()
    assert FrameModels(scene.frame).medium(scene.tony).model == c
    assert medium.medium_model(frame=scene.frame, seat=scene.tony) == c
    # A seat whose character left the cast: the cast's most common model.
    CastMember.objects.filter(pk=bob_member.pk).delete()
    assert FrameModels(scene.frame).medium(scene.bob).model == a
    # No cast at all: the GM's default; no default either: the pass fails, saying why.
    CastMember.objects.all().delete()
    assert FrameModels(scene.frame).medium(scene.alice).model == default
    assert FrameModels(scene.frame).soft().source == "default"
    LLMModel.objects.filter(pk=default.pk).update(is_default=False)
    pass_ = run(scene.fire(scene.alice, scene.commit(scene.alice, "I wait.")))
    assert pass_.status == "failed" and "no model" in pass_.error


def test_the_most_common_model_ties_go_to_the_first_in_play_order(user):
    a, b = offline_model(user, "A"), offline_model(user, "B")
    production = make_production(user, model=a, size=2)
    second = production.cast.order_by("position")[1].assistant
    second.model = b
    second.save()
    frame = frame_create(production=production, name="Tie")
    assert FrameModels(frame).soft().model == a


def test_choosing_a_seats_model_reads_the_same_whatever_the_cast_size(user):
    def queries(size: int) -> int:
        production = make_production(user, size=size, names=[f"Person {i}" for i in range(size)])
        personas = [m.assistant.persona_id for m in production.cast.all()]
        frame = Frame.objects.get(
            pk=frame_create(production=production, name=f"F{size}", open_seats=personas[:1]).pk
        )
        seats = list(frame.seats.order_by("position"))
        with CaptureQueriesContext(connection) as captured:
            for seat in seats:  # a human seat, then AI seats: one rule each, like a pass
                medium.medium_model(frame=frame, seat=seat)
        return len(captured) / len(seats)

    assert queries(2) == queries(6) <= 1


# -- what the GM sees ---------------------------------------------------------------------


def test_the_gms_frame_view_says_which_model_each_pass_uses_and_players_see_none(api, user):
    cast_model = offline_model(user, "Cast model")
    scene = CastScene(user, cast_model)
    models = api.get(f"/api/frames/{scene.frame.id}").json()["models"]
    assert models["soft"] == {"id": str(cast_model.pk), "name": "Cast model", "source": "cast"}
    assert models["medium"] == {
        str(seat.pk): {"id": str(cast_model.pk), "name": "Cast model", "source": "assistant"}
        for seat in (scene.alice, scene.bob, scene.tony)
    }
    assert models["soft_model"] is None and models["medium_model"] is None
    player_view = scene.alice_api.get(f"/api/frames/{scene.frame.id}").json()
    assert "models" not in player_view and "Cast model" not in str(player_view)


# -- PATCH /api/frames/{id} -----------------------------------------------------------------


def test_the_gm_changes_a_running_frame_and_every_socket_is_told(api, user, events):
    cast_model = offline_model(user, "Cast model")
    chosen = offline_model(user, "Chosen")
    scene = CastScene(user, cast_model)
    seq = Frame.objects.get(pk=scene.frame.pk).seq
    response = api.patch(
        f"/api/frames/{scene.frame.id}",
        {
            "name": "Night two",
            "tempo": 0.5,
            "liquid_visibility": "own",
            "soft_model": str(chosen.pk),
            "medium_model": str(chosen.pk),
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["name"], body["tempo"], body["liquid_visibility"]) == ("Night two", 0.5, "own")
    assert (
        body["models"]["soft"]["id"] == str(chosen.pk)
        and body["models"]["soft"]["source"] == "frame"
    )
    assert {m["id"] for m in body["models"]["medium"].values()} == {str(chosen.pk)}
    frame = Frame.objects.get(pk=scene.frame.pk)
    assert (frame.name, frame.tempo, frame.liquid_visibility) == ("Night two", 0.5, "own")
    assert frame.soft_model == chosen and frame.medium_model == chosen
    updated = [(g, e) for g, e in events if e["type"] == "frame.updated"]
    assert [g for g, _ in updated][0] == frame_group(frame.pk)
    event = updated[0][1]
    assert event["seq"] == seq + 1 == frame.seq
    assert event["frame"] == {
        "name": "Night two",
        "tempo": 0.5,
        "liquid_visibility": "own",
        "player_faces": [],
    }
    assert "Chosen" not in str(updated)  # models are the GM's business

    # null: back to the characters' own models.
    back = api.patch(f"/api/frames/{scene.frame.id}", {"medium_model": None}, format="json")
    assert back.status_code == 200
    assert {m["id"] for m in back.json()["models"]["medium"].values()} == {str(cast_model.pk)}
    assert Frame.objects.get(pk=scene.frame.pk).soft_model == chosen  # untouched
    # Nothing changed: nothing said.
    before = len(events)
    assert (
        api.patch(f"/api/frames/{scene.frame.id}", {"tempo": 0.5}, format="json").status_code == 200
    )
    assert len(events) == before


def test_a_running_pass_keeps_its_model_and_the_next_one_takes_the_new(user, monkeypatch):
    cast_model = offline_model(user, "Cast model")
    chosen = offline_model(user, "Chosen")
    scene = CastScene(user, cast_model)
    bones_step = run_module.bones_step

    def bones_then_the_gm_changes_the_model(*args, **kwargs):
        result = bones_step(*args, **kwargs)
        frame_update(frame=scene.frame, medium_model=chosen)
        return result

    monkeypatch.setattr(run_module, "bones_step", bones_then_the_gm_changes_the_model)
    running = run(scene.fire(scene.alice, scene.commit(scene.alice, "I open the door.")))
    assert running.status == "done" and models_called(running) == {cast_model.pk}
    monkeypatch.setattr(run_module, "bones_step", bones_step)
    after = run(scene.fire(scene.bob, scene.commit(scene.bob, "I sit.", after=1)))
    assert models_called(after) == {chosen.pk}


def test_a_player_may_not_change_the_frame_and_an_outsider_finds_none(user, other_api):
    scene = CastScene(user, offline_model(user, "Cast model"))
    url = f"/api/frames/{scene.frame.id}"
    assert scene.alice_api.patch(url, {"name": "Mine now"}, format="json").status_code == 403
    assert other_api.patch(url, {"name": "Mine now"}, format="json").status_code == 404
    assert Frame.objects.get(pk=scene.frame.pk).name == "Scene"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"tempo": 101}, "tempo"),
        ({"tempo": "fast"}, "tempo"),
        ({"name": ""}, "name"),
        ({"liquid_visibility": "some"}, "liquid_visibility"),
        ({"medium_model": "not-a-uuid"}, "medium_model"),
    ],
)
def test_bad_settings_are_a_400_naming_the_field(api, user, body, field):
    scene = CastScene(user, offline_model(user, "Cast model"))
    response = api.patch(f"/api/frames/{scene.frame.id}", body, format="json")
    assert response.status_code == 400, response.content
    assert field in str(response.json())


def test_another_users_model_is_a_400_naming_the_field(api, user):
    scene = CastScene(user, offline_model(user, "Cast model"))
    foreign = LLMModel.objects.get(owner=UserFactory(), is_default=True)
    for field in ("soft_model", "medium_model"):
        response = api.patch(
            f"/api/frames/{scene.frame.id}", {field: str(foreign.pk)}, format="json"
        )
        assert response.status_code == 400, response.content
        assert field in response.json()["errors"]
    frame = Frame.objects.get(pk=scene.frame.pk)
    assert frame.soft_model is None and frame.medium_model is None
    with pytest.raises(ApplicationError, match="your own models"):
        frame_update(frame=frame, medium_model=foreign)

"""Bones that mean something: a strict schema, every committed action of the window
resolved or the answer refused (once repaired, then the pass fails with a clear reason),
every try kept on the pass for the GM, and no player ever reading a model's answer, the
messages sent or an endpoint."""

import json
import uuid

import pytest
from pydantic import ValidationError

from lmix.models import LLMModel
from synthesis.events import PLAYER_PASS_ERROR
from synthesis.frame_events import gm_group, seat_group
from synthesis.frame_selectors import frame_access
from synthesis.medium import Bones, bones_apply, gather
from synthesis.medium.bones import bones_check, bones_max_tokens, bones_wire
from synthesis.medium.context import Action
from synthesis.medium.prompts import BONES_REPLY_TOKENS, template
from synthesis.models import Liquid, Outcome, Pass, Window
from synthesis.selectors import frame_view, pass_list
from tests.conftest import logged_in_client
from tests.synthesis.conftest import Scene, run

pytestmark = pytest.mark.django_db(transaction=True)

ENDPOINT_MARKER = "V1-ENDPOINT-MARKER-5150"
INTERRUPTED = {"INTERRUPTED": {"seat": "Alice Thompson", "reason": "Nothing."}}
NOBODY = {"actions_resolved": [], "world_facts": ["Rain falls."], "interrupts": []}
GOOD = {
    "actions_resolved": [{"seat": "Alice", "action": "opens the gate", "result": "success"}],
    "world_facts": ["The gate stands open."],
    "interrupts": [],
}


def on_model(scene: Scene, endpoint: str) -> LLMModel:
    model = LLMModel.objects.create(
        owner=scene.frame.owner,
        name="Served",
        provider="openai_compatible",
        api_endpoint=endpoint,
        model_id="served-model",
    )
    scene.frame.medium_model = model
    scene.frame.save()
    return model


def bones_requests(server) -> list:
    return [r for r in server.requests_to("/chat/completions") if not r.body.get("stream")]


def texts(request) -> str:
    return "\n".join(str(m.get("content")) for m in request.body["messages"])


# -- the schema ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        INTERRUPTED,
        {},
        {"actions_resolved": [{"seat": "Alice", "result": "success"}]},  # no action
        {"actions_resolved": [{"action": "waves", "result": "success"}]},  # no seat
        {"actions_resolved": [{"seat": "Alice", "action": "waves"}]},  # no result
        {"actions_resolved": [], "mood": "grim"},
        {"actions_resolved": [{"seat": "A", "action": "b", "result": "success", "x": 1}]},
        {"actions_resolved": [], "interrupts": [{"seat": "Bob", "reason": "r", "why": "w"}]},
    ],
)
def test_bones_refuse_unknown_keys_and_missing_fields(answer):
    with pytest.raises(ValidationError):
        Bones.model_validate(answer)


def test_bones_need_only_their_actions_and_the_schema_says_so():
    bones = Bones.model_validate(
        {"actions_resolved": [{"seat": "Alice", "action": "waves", "result": " Partial "}]}
    )
    assert bones.world_facts == [] and bones.interrupts == []
    assert bones.actions_resolved[0].result == "partial"
    schema = Bones.model_json_schema()
    assert schema["required"] == ["actions_resolved"]
    assert schema["additionalProperties"] is False
    entry = schema["$defs"]["ResolvedAction"]
    assert set(entry["required"]) == {"seat", "action", "result"}
    assert entry["additionalProperties"] is False


def test_the_offline_answer_stays_valid_under_the_strict_schema():
    actions = (
        Action(uuid.uuid4(), uuid.uuid4(), "Ann", "I trip Ben.", True, ("Ben",)),
        Action(uuid.uuid4(), uuid.uuid4(), "Ben", "I sit."),
    )
    answer = Bones.offline_answer(actions)
    again = Bones.model_validate(json.loads(answer.model_dump_json()))
    assert [(a.seat, a.result) for a in again.actions_resolved] == [
        ("Ann", "success"),
        ("Ben", "success"),
    ]


# -- the check -----------------------------------------------------------------------------


def together(scene: Scene):
    """Alice's pass, resolving Bob's committed action (same pscale, earlier) with hers."""
    shield = scene.commit(scene.bob, "I raise my shield.", after=1)
    sword = scene.commit(scene.alice, "I swing my sword.", after=2)
    scene.window(scene.bob, shield, status="open")
    return gather(scene.fire(scene.alice, sword))


def answer(*entries: tuple[str, str]) -> Bones:
    return Bones.model_validate(
        {"actions_resolved": [{"seat": s, "action": "acts", "result": r} for s, r in entries]}
    )


def test_the_wire_schema_names_exactly_the_actions_to_resolve_in_order(user):
    scene = Scene(user)
    wire = bones_wire(together(scene))
    actions = wire["properties"]["actions_resolved"]
    assert [entry["properties"]["seat"]["enum"] for entry in actions["prefixItems"]] == [
        ["Bob Wilson"],
        ["Alice Thompson"],
    ]
    assert actions["minItems"] == actions["maxItems"] == 2
    assert wire["properties"]["interrupts"]["maxItems"] == 0  # nothing interruptive
    # Whatever fits it passes the check and validates as Bones.
    fitting = {
        "actions_resolved": [
            {"seat": "Bob Wilson", "action": "raises a shield", "result": "success"},
            {"seat": "Alice Thompson", "action": "swings", "result": "partial"},
        ],
        "world_facts": [],
        "interrupts": [],
    }
    bones_check(together(Scene(user)))(Bones.model_validate(fitting))


def test_the_wire_schema_lets_an_interruptive_action_interrupt_only_others(user):
    scene = Scene(user)
    push = scene.commit(scene.alice, "I push Bob.", interruptive=True, targets=[scene.bob])
    wire = bones_wire(gather(scene.fire(scene.alice, push)))
    interrupts = wire["properties"]["interrupts"]
    assert interrupts["maxItems"] == 2
    assert interrupts["items"]["properties"]["seat"]["enum"] == ["Bob Wilson", "Tony Rosetti"]


def test_the_check_accepts_every_action_resolved_by_any_name_the_lookup_reads(user):
    scene = Scene(user)
    ctx = together(scene)
    check = bones_check(ctx)
    check(answer(("Alice Thompson", "success"), ("Bob Wilson", "partial")))
    check(answer((str(scene.bob.pk), "failure"), ("alice", "success")))  # id, first name
    check(answer(("[Bob Wilson]", "interrupted"), ("ALICE THOMPSON", "failure")))


@pytest.mark.parametrize(
    "entries, wrong",
    [
        ((), "missing Bob Wilson, Alice Thompson"),
        ((("Alice Thompson", "success"),), "missing Bob Wilson"),
        ((("Bob", "failure"),), "missing Alice Thompson"),
        (
            (("Alice", "success"), ("Bob", "success"), ("Tony", "success")),
            "named Tony, who did not act here",
        ),
        (
            (("Alice", "success"), ("Bob", "success"), ("Gandalf", "success")),
            "named Gandalf, who did not act here",
        ),
    ],
)
def test_the_check_refuses_an_answer_that_leaves_out_an_action_or_names_a_stranger(
    user, entries, wrong
):
    ctx = together(Scene(user))
    with pytest.raises(ValueError) as refused:
        bones_check(ctx)(answer(*entries))
    message = str(refused.value)
    assert "expected Bob Wilson, Alice Thompson;" in message
    assert wrong in message


def test_a_seat_with_two_actions_needs_two_entries(user):
    scene = Scene(user)
    first = scene.commit(scene.alice, "I step in.", after=1)
    second = scene.commit(scene.alice, "I bow.", after=2)
    ctx = gather(scene.fire(scene.alice, first, second))
    with pytest.raises(ValueError, match=r"Alice Thompson \(2 actions\)"):
        bones_check(ctx)(answer(("Alice", "success")))
    bones_check(ctx)(answer(("Alice", "success"), ("Alice", "failure")))


def test_code_no_longer_makes_an_outcome_out_of_an_answer_that_resolved_nothing(user):
    scene = Scene(user)
    ctx = gather(scene.fire(scene.alice, scene.commit(scene.alice, "I open the gate.")))
    draft = bones_apply(answer(), ctx)
    assert draft.actions_resolved == [] and draft.liquid_ids == []  # no player's text filled in
    # What it does get, it still keeps to the rules: nobody outside the window acts.
    draft = bones_apply(answer(("Alice", "failure"), ("Tony", "success")), ctx)
    assert draft.actions_resolved == [
        {"seat": str(scene.alice.pk), "action": "acts", "result": "failure"}
    ]


def test_the_bones_budget_grows_with_the_actions_and_is_capped(user):
    scene = Scene(user)
    one = gather(scene.fire(scene.alice, scene.commit(scene.alice, "I wait.")))
    assert bones_max_tokens(one) == 350
    many = [scene.commit(scene.bob, f"I try {i}.", after=i) for i in range(12)]
    scene.window(scene.bob, *many, status="open")
    crowd = gather(scene.fire(scene.alice, scene.commit(scene.alice, "I go.", after=20)))
    assert len(crowd.to_resolve) == 13 and bones_max_tokens(crowd) == BONES_REPLY_TOKENS
    assert "an action that fails too (result: failure)" in template("bones.txt")[0]


# -- through the pass ----------------------------------------------------------------------


@pytest.mark.parametrize("first", [INTERRUPTED, NOBODY], ids=["unknown-key", "resolves-nobody"])
def test_a_refused_answer_is_repaired_once_with_the_reason_and_both_tries_are_kept(
    user, server, first
):
    scene = Scene(user)
    on_model(scene, server.base_url)
    liquid = scene.commit(scene.alice, "I open the gate.")
    server.queue(data=first)
    server.queue(data=GOOD)
    server.queue(text="Alice opens the gate.")
    pass_ = run(scene.fire(scene.alice, liquid))

    assert pass_.status == "done" and pass_.error == ""
    outcome = Outcome.objects.get(source_pass=pass_)
    assert outcome.actions_resolved == [
        {"seat": str(scene.alice.pk), "action": "opens the gate", "result": "success"}
    ]
    sent = bones_requests(server)
    assert len(sent) == 2
    assert sent[0].body["max_tokens"] == 350  # one action: 200 + 150
    if first is NOBODY:  # the check's reason, naming whom it expected, goes back once
        assert "expected Alice Thompson; missing Alice Thompson" in texts(sent[1])
    tries = pass_.tries
    assert [(t["step"], t["attempt"]) for t in tries] == [("bones", 1), ("bones", 1)]
    assert tries[0]["error"] and json.loads(tries[0]["raw"]) == first
    assert tries[1]["error"] == "" and json.loads(tries[1]["raw"]) == GOOD
    # Exactly what was sent, each time: the prompt, then the repair with the answer in it.
    assert [m["content"] for m in tries[0]["messages"]] == [
        m["content"] for m in sent[0].body["messages"]
    ]
    assert [m["content"] for m in tries[1]["messages"]] == [
        m["content"] for m in sent[1].body["messages"]
    ]


def two_refusals(scene: Scene, server) -> tuple[Pass, Liquid]:
    on_model(scene, server.base_url)
    liquid = scene.commit(scene.alice, "I open the gate.")
    server.queue(data=INTERRUPTED)
    server.queue(data=NOBODY)
    return run(scene.fire(scene.alice, liquid)), liquid


def test_two_refused_answers_fail_the_pass_with_a_clear_reason_and_lose_nothing(
    user, server, events
):
    scene = Scene(user)
    pass_, liquid = two_refusals(scene, server)

    assert pass_.status == "failed"
    assert "did not resolve the committed actions" in pass_.error
    assert pass_.error.startswith(
        "The model's answer was refused (2 tries). The answer did not resolve the committed "
        "actions: expected Alice Thompson; missing Alice Thompson. Its last answer: {"
    )
    assert json.loads(pass_.error.split("Its last answer: ", 1)[1]) == NOBODY
    assert len(bones_requests(server)) == 2  # one repair, no more
    assert Window.objects.get(pk=pass_.window_id).status == "failed"
    liquid.refresh_from_db()
    assert liquid.status == "committed" and liquid.consumed_by is None
    assert not Outcome.objects.filter(frame=scene.frame)
    raws = [json.loads(t["raw"]) for t in pass_.tries]
    assert raws == [INTERRUPTED, NOBODY]
    assert all(t["error"] and t["step"] == "bones" for t in pass_.tries)


def test_the_gm_reads_the_tries_of_a_pass_and_its_players_never_do(user, server, events):
    scene = Scene(user)
    pass_, _ = two_refusals(scene, server)

    gm = logged_in_client(user).get(f"/api/frames/{scene.frame.pk}/passes")
    assert gm.status_code == 200
    listed = next(p for p in gm.json() if p["id"] == str(pass_.pk))
    assert listed["error"] == pass_.error
    assert [json.loads(t["raw"]) for t in listed["tries"]] == [INTERRUPTED, NOBODY]
    assert listed["tries"][0]["messages"] and listed["messages"]

    player = logged_in_client(scene.alice_player)
    assert player.get(f"/api/frames/{scene.frame.pk}/passes").status_code in {403, 404}
    seen = json.dumps(player.get(f"/api/frames/{scene.frame.pk}").json())
    assert "INTERRUPTED" not in seen and pass_.error not in seen
    failed = {g: e for g, e in events if e["type"] == "pass.failed"}
    assert failed[gm_group(scene.frame.pk)]["pass"]["error"] == pass_.error
    assert failed[seat_group(scene.frame.pk, scene.alice.pk)]["pass"]["error"] == (
        PLAYER_PASS_ERROR
    )
    assert "error" not in failed[seat_group(scene.frame.pk, scene.bob.pk)]["pass"]
    for group, event in events:
        if group != gm_group(scene.frame.pk):
            assert "INTERRUPTED" not in json.dumps(event), group


def test_a_model_endpoint_reaches_the_gms_socket_and_rest_and_never_a_players(user, events):
    scene = Scene(user)
    on_model(scene, f"http://127.0.0.1:1/v1-{ENDPOINT_MARKER}")  # nothing listens on port 1
    pass_ = run(scene.fire(scene.alice, scene.commit(scene.alice, "I knock.")))

    assert pass_.status == "failed" and ENDPOINT_MARKER in pass_.error
    gm_events = [e for g, e in events if g == gm_group(scene.frame.pk)]
    assert any(ENDPOINT_MARKER in json.dumps(e) for e in gm_events)
    assert ENDPOINT_MARKER in json.dumps(pass_list(frame=scene.frame))
    players_events = [(g, e) for g, e in events if g != gm_group(scene.frame.pk)]
    assert any(e["type"] == "pass.failed" for _, e in players_events)
    assert ENDPOINT_MARKER not in json.dumps(players_events)
    for player in (scene.alice_player, scene.bob_player):
        view = frame_view(frame_access(frame_id=scene.frame.pk, user=player))
        assert ENDPOINT_MARKER not in json.dumps(view)
        client = logged_in_client(player)
        assert ENDPOINT_MARKER not in client.get(f"/api/frames/{scene.frame.pk}").content.decode()
        answer = client.get(f"/api/frames/{scene.frame.pk}/passes")
        assert answer.status_code in {403, 404}
        assert ENDPOINT_MARKER not in answer.content.decode()

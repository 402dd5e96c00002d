"""Character state for a production's cast (synthesis/state/productions.py): the state is
the fold of the deltas of the head's branch, equal to applying each update directly;
rewinding and restoring gives back the exact prior state; a turn on another branch never
reaches a prompt, nor does another member's memory; the state pass runs after each
finished turn through its task (the offline narrator answers it) and reads no secret; the
state API is the owner's."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmix.models import LLMCall
from productions.models import Production, Turn
from productions.prompting import member_messages
from productions.selectors import cast_load, turn_branch
from synthesis.state.productions import (
    member_state,
    prompt_section,
    turn_state_apply,
    turn_state_pass_run,
)
from synthesis.state.schema import CharacterChange, EdgeChange, StateProposal
from synthesis.state_models import Memory, StateDelta, TurnStatePass
from tests.productions.conftest import make_production
from tests.synthesis.test_state import MOODS, reference
from tests.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
ALICE, BOB, TONY = "Alice Thompson", "Bob Wilson", "Tony Rosetti"


@pytest.fixture(autouse=True)
def state_passes_on(settings):
    settings.LMIX_STATE_PASSES = True


def note(production: Production, parent: Turn | None, content: str) -> Turn:
    """A director's note after `parent`, made the head (as `turn_request` does)."""
    turn = Turn.objects.create(
        production=production,
        parent=parent,
        depth=0 if parent is None else parent.depth + 1,
        speaker_kind="director",
        speaker_name="Director",
        content=content,
        status="done",
    )
    Production.objects.filter(pk=production.pk).update(head=turn)
    return turn


def members(production: Production) -> dict:
    return {member.persona.name: member for member in cast_load(production=production)}


def branch_ids(production: Production, leaf: Turn) -> list:
    return [turn.pk for turn in turn_branch(production=production, leaf_id=leaf.pk)]


def state_of(api, production: Production) -> dict:
    response = api.get(f"/api/productions/{production.pk}/state")
    assert response.status_code == 200, response.content
    return {m["name"]: m for m in response.json()["members"]}


# -- the fold of the head's branch --------------------------------------------------------


def random_turns(dice: random.Random, count: int) -> list[list[tuple]]:
    """Alice's updates, turn by turn, in the order a turn's deltas are stored: edges, then
    the mood, then up to three facts."""
    turns = []
    for _ in range(count):
        ops: list[tuple] = [
            ("edge", dice.choice([BOB, TONY]), dice.randint(-40, 40), dice.randint(-40, 40),
             dice.choice(["", "owes money", "lies"]))
            for _ in range(dice.randint(0, 2))
        ]  # fmt: skip
        if dice.random() < 0.7:
            ops.append(("mood", dice.choice(MOODS), round(dice.uniform(-0.8, 0.8), 3)))
        ops += [("fact", dice.choice(["it rains", "the door is locked"]))] * dice.randint(0, 2)
        turns.append(ops)
    return turns


def proposal_for(ops: list[tuple]) -> StateProposal:
    mood = next((op for op in ops if op[0] == "mood"), None)
    return StateProposal(
        characters=[
            CharacterChange(
                character=ALICE,
                relationships=[
                    EdgeChange(toward=op[1], affinity=op[2], trust=op[3], fact=op[4])
                    for op in ops
                    if op[0] == "edge"
                ],
                mood=mood[1] if mood else None,
                mood_intensity=mood[2] if mood else 0.0,
                learned=[op[1] for op in ops if op[0] == "fact"],
            )
        ]
    )


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_state_is_the_fold_of_the_heads_branch_as_direct_updates_give_it(user, seed):
    """Deltas stored turn by turn (a side branch too) fold, along the head's branch, to
    the state applying each update in turn gives (clamps included); the side branch's
    updates count only on it."""
    production = make_production(user)
    cast = members(production)
    labels = {m.pk: name for name, m in cast.items()}
    dice = random.Random(seed)
    turns = random_turns(dice, 8)
    side_ops = random_turns(dice, 1)[0] + [("edge", BOB, 25, -25, "SIDE")]
    parent, made = None, []
    for ops in turns:
        parent = note(production, parent, "Something happens.")
        made.append(parent)
        turn_state_apply(
            turn=parent, proposal=proposal_for(ops), cast=list(cast.values()), labels=labels
        )
    side = note(production, made[3], "Elsewhere.")
    turn_state_apply(
        turn=side, proposal=proposal_for(side_ops), cast=list(cast.values()), labels=labels
    )

    def expected(ops: list[tuple]) -> tuple:
        keyed = [(op[0], str(cast[op[1]].pk), *op[2:]) if op[0] == "edge" else op for op in ops]
        return reference(keyed)

    def actual(leaf: Turn) -> tuple:
        values = member_state(member_id=cast[ALICE].pk, branch_ids=branch_ids(production, leaf))
        seat = values.seat
        edges = {k: (v.affinity, v.trust, v.knowledge) for k, v in values.edges.items()}
        return edges, (seat.mood, seat.intensity, list(seat.facts))

    for leaf, ops in [
        (made[-1], [op for t in turns for op in t]),
        (made[2], [op for t in turns[:3] for op in t]),
        (side, [op for t in turns[:4] for op in t] + side_ops),
    ]:
        edges, (mood, intensity, facts) = expected(ops)
        got_edges, (got_mood, got_intensity, got_facts) = actual(leaf)
        assert got_edges == edges and (got_mood, got_facts) == (mood, facts)
        assert got_intensity == pytest.approx(intensity, abs=1e-3)
    # Nobody else changed: the proposals were Alice's only.
    assert not StateDelta.objects.filter(member__in=[cast[BOB], cast[TONY]]).exists()


def test_rewind_then_restore_returns_the_exact_prior_state(api, user):
    production = make_production(user)
    cast = members(production)
    labels = {m.pk: name for name, m in cast.items()}
    parent = None
    for index in range(4):
        parent = note(production, parent, f"Beat {index}.")
        turn_state_apply(
            turn=parent,
            proposal=StateProposal(
                characters=[
                    CharacterChange(
                        character=name,
                        relationships=[
                            EdgeChange(toward=ALICE, affinity=7, trust=-3, fact=f"f{index}")
                        ],
                        mood="angry" if index % 2 else "happy",
                        mood_intensity=0.2,
                        learned=[f"learned {index}"],
                        memory=f"{name} remembers beat {index}.",
                        significance=3 if index == 1 else 1,
                    )
                    for name in (BOB, TONY)
                ]
            ),
            cast=list(cast.values()),
            labels=labels,
        )  # fmt: skip
    first = Turn.objects.get(production=production, depth=0)
    before = state_of(api, production)
    assert before[BOB]["edges"][0]["affinity"] == 10 + 4 * 7 and len(before[BOB]["memories"]) == 4

    dry = api.post(
        f"/api/productions/{production.pk}/rewind",
        {"to": str(first.pk), "dry_run": True},
        format="json",
    ).json()
    assert (len(dry["turns"]), dry["memories"]) == (3, 6) and dry["state_deltas"] == 3 * 2 * 3
    assert state_of(api, production) == before  # a dry run changes nothing

    done = api.post(
        f"/api/productions/{production.pk}/rewind", {"to": str(first.pk)}, format="json"
    )
    assert done.status_code == 200 and done.json()["head"] == str(first.pk)
    rewound = state_of(api, production)
    assert rewound[BOB]["edges"][0]["affinity"] == 17 and rewound[BOB]["mood"]["name"] == "happy"
    assert [m["text"] for m in rewound[BOB]["memories"]] == [f"{BOB} remembers beat 0."]
    assert StateDelta.objects.filter(turn__production=production).count() == 4 * 2 * 3  # kept

    restore = api.put(
        f"/api/productions/{production.pk}/head", {"turn": done.json()["restore"]}, format="json"
    )
    assert restore.status_code == 200
    assert state_of(api, production) == before


# -- what a prompt reads --------------------------------------------------------------------


def test_a_turn_on_another_branch_never_reaches_a_prompt_nor_another_members_memory(user):
    """Two branches from one turn, each with its own memories and moods: a speaker's prompt
    after one branch holds that branch's own memories only, never the other branch's, and
    never another member's."""
    production = make_production(user)
    cast = members(production)
    labels = {m.pk: name for name, m in cast.items()}
    root = note(production, None, "The room is quiet.")
    branches = {}
    for tag in ("LEFT", "RIGHT"):
        leaf = note(production, root, f"{tag} happens.")
        turn_state_apply(
            turn=leaf,
            proposal=StateProposal(
                characters=[
                    CharacterChange(
                        character=name,
                        memory=f"{name.split()[0].upper()}-{tag}-MEMORY-MARKER",
                        relationships=[EdgeChange(toward=TONY, fact=f"{tag}-EDGE-MARKER")],
                        learned=[f"{name.split()[0].upper()}-{tag}-FACT-MARKER"],
                    )
                    for name in (ALICE, BOB)
                ]
            ),
            cast=list(cast.values()),
            labels=labels,
        )
        branches[tag] = leaf
    for tag, leaf in branches.items():
        other = "RIGHT" if tag == "LEFT" else "LEFT"
        branch = turn_branch(production=production, leaf_id=leaf.pk)
        messages, _reply = member_messages(
            production=production,
            cast=cast_load(production=production),
            member=cast[ALICE],
            branch=branch,
        )
        system = messages[0].content
        assert f"ALICE-{tag}-MEMORY-MARKER" in system and f"ALICE-{tag}-FACT-MARKER" in system
        assert f"{tag}-EDGE-MARKER" in system and "YOUR RELATIONSHIPS" in system
        sent = "\n".join(m.content for m in messages)
        assert other not in sent  # no trace of the other branch
        assert "BOB-" not in sent  # Bob's memories and facts are Bob's
    # Tony had nothing happen to him: no state section at all.
    tony = prompt_section(production, cast[TONY], branch, {})
    assert tony == ""


def test_the_state_pass_runs_after_each_turn_and_the_next_prompt_reads_it(api, user, celery_worker):
    """End to end on the offline narrator: written and generated turns each get a state
    pass through its task; the next speaker's prompt holds its memories, relationships and
    mood; the state prompt reads no secret."""
    production = make_production(user)
    cast = members(production)
    said = api.post(
        f"/api/productions/{production.pk}/turns",
        {"persona": str(cast[ALICE].persona_id), "content": "ALICE-SAYS-MARKER hello."},
        format="json",
    ).json()
    wait_for(lambda: TurnStatePass.objects.filter(turn_id=said["id"], status="done").first())
    answer = api.post(
        f"/api/productions/{production.pk}/turns", {"assistant": str(cast[BOB].pk)}, format="json"
    ).json()
    bobs = wait_for(lambda: Turn.objects.filter(pk=answer["id"], status="done").first())
    system = bobs.directive[0]["content"]
    assert "YOUR MEMORIES" in system and "ALICE-SAYS-MARKER" in system
    assert f"- {ALICE}: " in system and "YOUR MOOD" in system
    state_pass = wait_for(
        lambda: TurnStatePass.objects.filter(turn_id=bobs.pk, status="done").first()
    )
    prompt = "\n".join(m["content"] for m in state_pass.messages)
    assert "SECRET-MARKER" not in prompt and bobs.content[:40] in prompt
    assert LLMCall.objects.filter(subject=f"turn:{bobs.pk}", purpose="synthesis.state").exists()
    assert Memory.objects.filter(turn_id=bobs.pk).count() == 3  # the whole cast witnessed it
    # Once per turn: running it again does nothing.
    assert turn_state_pass_run(turn_id=bobs.pk) is None


def test_no_state_pass_when_they_are_off(api, user, settings, celery_worker):
    settings.LMIX_STATE_PASSES = False
    production = make_production(user)
    said = api.post(
        f"/api/productions/{production.pk}/turns", {"content": "A phone rings."}, format="json"
    ).json()
    assert turn_state_pass_run(turn_id=said["id"]) is None
    assert not TurnStatePass.objects.exists()


def test_the_cast_state_is_the_owners_only(api, other_api, user):
    production = make_production(user)
    assert other_api.get(f"/api/productions/{production.pk}/state").status_code == 404
    answer = state_of(api, production)
    assert set(answer) == {ALICE, BOB, TONY}
    assert answer[ALICE]["mood"]["name"] == "neutral" and answer[ALICE]["edges"] == []

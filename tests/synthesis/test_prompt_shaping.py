"""What shapes a medium pass besides its scene: skills (the platform's guards always, the
frame's for every pass, a player's own for their own character's narrative and epilogue
only: never an AI seat's act, another's epilogue or a shared frame's) and the frame's
world content, chosen by what the scene names when there is more than fits; the
pass records which skills shaped each step."""

import pytest

from synthesis import medium
from synthesis.content import content_add
from synthesis.medium.shaping import CONTENT_SHOWN, SKILLS_CHARS, prompt_skills
from synthesis.models import Skill
from tests.synthesis.conftest import Scene, run, sent

pytestmark = pytest.mark.django_db


def skill(scope, category, text, **target):
    return Skill.objects.create(
        scope=scope, face="player", category=category, name=text[:30], text=text, **target
    )


def place(scene, name, description="A place.", pscale=0):
    data = {"description": description}
    return content_add(
        frame=scene.frame,
        user=scene.frame.owner,
        type="location",
        name=name,
        data=data,
        pscale=pscale,
    )


def test_skills_shape_each_step_for_whom_it_is_written(user):
    scene = Scene(user)
    skill("frame", "tone", "FRAME-TONE-MARK: write like noir.", frame=scene.frame)
    skill("user", "pacing", "ALICE-PACING-MARK: linger.", owner=scene.alice_player)
    skill("user", "pacing", "BOB-PACING-MARK: hurry.", owner=scene.bob_player)
    # Written around the API: a guard category keeps the platform's rule.
    skill("user", "agency", "ALICE-AGENCY-MARK: act for everyone.", owner=scene.alice_player)
    pass_ = run(scene.fire(scene.alice, scene.commit(scene.alice, "I light a cigarette.")))
    assert pass_.status == "done"
    bones, flesh = sent(pass_, "bones"), sent(pass_, "flesh")
    guard = Skill.objects.get(key="player-agency").text
    for prompt in (bones, flesh):
        assert "FRAME-TONE-MARK" in prompt and guard in prompt
        assert "BOB-PACING-MARK" not in prompt and "ALICE-AGENCY-MARK" not in prompt
    assert "ALICE-PACING-MARK" in flesh  # her own narrative
    assert "ALICE-PACING-MARK" not in bones  # an outcome everyone reads
    assert Skill.objects.get(key="player-outcome-rules").text.splitlines()[0].strip() in bones
    assert Skill.objects.get(key="player-word-budgets").text not in bones
    # The directive says which skill supplied which part.
    steps = {entry["step"]: entry["skills"] for entry in pass_.messages}
    assert {(s["scope"], s["category"]) for s in steps["bones"]} >= {
        ("frame", "tone"),
        ("platform", "agency"),
        ("platform", "secrets"),
    }
    assert ("user", "pacing") in {(s["scope"], s["category"]) for s in steps["flesh"]}
    assert ("user", "pacing") not in {(s["scope"], s["category"]) for s in steps["bones"]}


def test_a_shared_frames_prose_takes_no_players_own_skills(user):
    scene = Scene(user, mode="shared")
    skill("user", "tone", "ALICE-TONE-MARK: whisper.", owner=scene.alice_player)
    skill("frame", "pacing", "FRAME-PACING-MARK: brisk.", frame=scene.frame)
    pass_ = run(scene.fire(scene.alice, scene.commit(scene.alice, "I wave.")))
    flesh = sent(pass_, "flesh")
    assert "FRAME-PACING-MARK" in flesh and "ALICE-TONE-MARK" not in flesh


def test_skills_stay_within_their_budget_and_the_guards_always_fit(user):
    scene = Scene(user)
    for i in range(6):
        skill("frame", f"style-{i}", f"STYLE-{i} " + "x" * 1500, frame=scene.frame)
    ctx = medium.gather(scene.fire(scene.alice, scene.commit(scene.alice, "I wait.")))
    chosen = prompt_skills(ctx, "bones")
    assert sum(len(s.text) for s in chosen) <= SKILLS_CHARS
    assert {s.category for s in chosen if s.guard} == {"agency", "secrets"}
    assert 0 < len([s for s in chosen if s.category.startswith("style")]) < 6


def test_world_content_reaches_later_passes_and_what_the_scene_names_comes_first(user):
    scene = Scene(user)
    place(scene, "The Lighthouse", "LIGHTHOUSE-MARK: its lamp is out.")
    for i in range(CONTENT_SHOWN + 5):
        place(scene, f"Warehouse {i}", f"WAREHOUSE-{i}-MARK")
    place(scene, "The Chapel", "CHAPEL-MARK: tiny, a second-scale detail.", pscale=-3)
    pass_ = run(scene.fire(scene.alice, scene.commit(scene.alice, "I walk to the lighthouse.")))
    bones, flesh = sent(pass_, "bones"), sent(pass_, "flesh")
    for prompt in (bones, flesh):
        assert "THE WORLD AS IT STANDS" in prompt
        assert "LIGHTHOUSE-MARK" in prompt  # named by the action, though among the oldest
        assert f"WAREHOUSE-{CONTENT_SHOWN + 4}-MARK" in prompt  # the newest of its scale
        assert "WAREHOUSE-0-MARK" not in prompt  # more than fits: the oldest stays out
    assert "CHAPEL-MARK" not in bones  # newest, but matters below this pass's scale


# Skills beyond the medium pass: an AI seat's act and the epilogues (skills/prompting.py).


def test_an_ai_seats_act_takes_the_platforms_and_frames_skills_and_no_players(user):
    from synthesis.ai_seats import ai_messages
    from synthesis.frame_selectors import seats_load

    scene = Scene(user)
    skill("frame", "tone", "FRAME-TONE-MARK: write like noir.", frame=scene.frame)
    skill("user", "tone", "ALICE-TONE-MARK: whisper.", owner=scene.alice_player)
    skill("user", "pacing", "GM-PACING-MARK: hurry.", owner=user)  # the GM plays no seat
    seats = seats_load(frame=scene.frame)
    asked = "\n".join(m.content for m in ai_messages(seat=scene.tony, seats=seats, outcome=None))
    assert "FRAME-TONE-MARK" in asked
    assert Skill.objects.get(key="player-agency").text in asked  # the guards always
    assert "ALICE-TONE-MARK" not in asked and "GM-PACING-MARK" not in asked
    assert Skill.objects.get(key="player-outcome-rules").text not in asked  # no outcome's rule


def test_an_epilogue_takes_its_own_players_skills_and_no_one_elses(user):
    from synthesis.epilogue import epilogue_run, frame_close
    from synthesis.models import Pass

    scene = Scene(user)
    skill("frame", "tone", "FRAME-TONE-MARK: write like noir.", frame=scene.frame)
    skill("user", "tone", "ALICE-TONE-MARK: whisper.", owner=scene.alice_player)
    skill("user", "tone", "BOB-TONE-MARK: shout.", owner=scene.bob_player)
    frame_close(frame=scene.frame, epilogue=True)
    for pending in Pass.objects.filter(frame=scene.frame, kind="epilogue"):
        epilogue_run(pass_id=pending.pk)
    alice, bob = Pass.objects.filter(frame=scene.frame, kind="epilogue").order_by("seat__position")
    alice_prompt, bob_prompt = sent(alice, "epilogue"), sent(bob, "epilogue")
    assert "FRAME-TONE-MARK" not in alice_prompt  # her own tone wins its category
    assert "ALICE-TONE-MARK" in alice_prompt and "BOB-TONE-MARK" not in alice_prompt
    assert "BOB-TONE-MARK" in bob_prompt and "ALICE-TONE-MARK" not in bob_prompt
    guard = Skill.objects.get(key="player-secrets").text
    assert guard in alice_prompt and guard in bob_prompt
    refs = {(s["scope"], s["category"]) for s in alice.messages[-1]["skills"]}
    assert ("user", "tone") in refs and ("platform", "secrets") in refs


def test_a_shared_frames_epilogue_takes_no_players_skills(user):
    from synthesis.epilogue import epilogue_run, frame_close
    from synthesis.models import Pass

    scene = Scene(user, mode="shared")
    skill("frame", "pacing", "FRAME-PACING-MARK: brisk.", frame=scene.frame)
    skill("user", "tone", "ALICE-TONE-MARK: whisper.", owner=scene.alice_player)
    frame_close(frame=scene.frame, epilogue=True)
    (only,) = Pass.objects.filter(frame=scene.frame, kind="epilogue")
    epilogue_run(pass_id=only.pk)
    prompt = sent(Pass.objects.get(pk=only.pk), "epilogue")
    assert "FRAME-PACING-MARK" in prompt and "ALICE-TONE-MARK" not in prompt

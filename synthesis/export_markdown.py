"""A frame's export (synthesis/export.py) as a Markdown document to read: the title, the
cast, then the story — each outcome's actions and world facts followed by the narratives
written from it — and the reader's intentions. It renders exactly the export it is given,
so it holds nothing the JSON export does not."""

import re
from datetime import datetime
from typing import Any

RESULTS = {"success": "succeeds", "partial": "partly succeeds", "failure": "fails"}
MARKUP = re.compile(r"([\\`*_\[\]#<>|])")


def export_markdown(export: dict[str, Any]) -> str:
    """The export as Markdown (ends with one newline)."""
    names = {seat["id"]: seat["name"] for seat in export["seats"]}
    lines = [f"# {_inline(export['name'])}", "", _byline(export, names), ""]
    lines += _cast(export, names)
    lines += ["## The story", ""]
    story = _story(export, names)
    lines += story or ["*Nothing has happened yet.*", ""]
    lines += _intentions(export, names)
    return "\n".join(lines).rstrip() + "\n"


def _byline(export: dict[str, Any], names: dict[str, str]) -> str:
    production = f"*{_inline(export['production_name'])}*"
    when = _when(export["exported_at"])
    if export["reader"] == "gm":
        whose = "The GM's record: every character's story"
    else:
        mine = [names.get(seat, "Someone") for seat in export["my_seats"]]
        whose = f"{_and(mine)}'s story" if mine else "your story"
    closed = " The scene is closed." if export["status"] == "closed" else ""
    return f"{production} · {whose} · exported {when}.{closed}"


def _cast(export: dict[str, Any], names: dict[str, str]) -> list[str]:
    lines = ["## Cast", ""]
    for seat in export["seats"]:
        if seat["controller"] == "human":
            played = f"played by {_inline(seat['player'] or 'a player')}"
        elif seat["controller"] == "ai":
            played = "played by an AI"
        else:
            played = "an open seat"
        you = " (you)" if seat["id"] in export["my_seats"] else ""
        lines.append(f"- **{_inline(seat['name'])}**{you} — {played}")
    return [*lines, ""]


def _story(export: dict[str, Any], names: dict[str, str]) -> list[str]:
    """Narratives before the first outcome, then each outcome with the narratives that
    follow it."""
    following: dict[int, list[dict[str, Any]]] = {}
    for narrative in export["narratives"]:
        following.setdefault(narrative["after_outcome"], []).append(narrative)
    lines = _narratives(following.get(0, []), export)
    for outcome in export["outcomes"]:
        lines += _outcome(outcome, names)
        lines += _narratives(following.get(outcome["number"], []), export)
    return lines


def _outcome(outcome: dict[str, Any], names: dict[str, str]) -> list[str]:
    held = " (held for your review)" if outcome.get("held") else ""
    lines = [f"### {outcome['number']}. What happened{held}", ""]
    for action in outcome["actions_resolved"]:
        who = _inline(names.get(str(action.get("seat")), "Someone"))
        result = RESULTS.get(action.get("result", ""), action.get("result", ""))
        lines.append(f"- **{who}** {_line(action.get('action', ''))} — *{_inline(result)}*")
    lines += [f"- {_line(fact)}" for fact in outcome["world_facts"]]
    for interrupt in outcome["interrupts"]:
        who = _inline(names.get(str(interrupt.get("seat")), "Someone"))
        lines.append(f"- *Interrupted:* **{who}** — {_line(interrupt.get('reason', ''))}")
    for flag in outcome.get("flags") or []:  # the GM's export alone holds them
        lines.append(
            f"- ⚠ *Guard:* {_line(flag.get('kind', ''))} of {_line(flag.get('owner', ''))}: "
            f"{_line(flag.get('excerpt', ''))}"
        )
    return [*lines, ""]


def _narratives(narratives: list[dict[str, Any]], export: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for narrative in narratives:
        text = narrative["text"].strip()
        if not text:
            continue
        story = "epilogue" if narrative["trigger"] == "epilogue" else "story"
        if narrative["shared"]:
            title = "The scene" if story == "story" else "Epilogue"
        elif export["reader"] == "gm" or narrative["seat"] not in export["my_seats"]:
            title = f"{_inline(narrative['character'])}'s {story}"
        else:
            title = f"Your {story}"
            if _earlier_player(narrative, export):
                title += f" (played by {_inline(narrative['player'])} then)"
        if narrative["status"] != "done":
            title += " (unfinished)"
        lines += [f"#### {title}", "", text, ""]
    return lines


def _earlier_player(narrative: dict[str, Any], export: dict[str, Any]) -> bool:
    """Whether someone else played the narrative's seat when it was written."""
    seat = next((s for s in export["seats"] if s["id"] == narrative["seat"]), None)
    return bool(narrative["player"]) and seat is not None and seat["user"] != narrative["user"]


def _intentions(export: dict[str, Any], names: dict[str, str]) -> list[str]:
    if not export["intentions"]:
        return []
    title = "Every intention" if export["reader"] == "gm" else "Your intentions"
    lines = [f"## {title}", ""]
    for liquid in export["intentions"]:
        who = _inline(names.get(liquid["seat"], "Someone"))
        lines.append(f"- **{who}** ({liquid['status']}): {_line(liquid.get('content', ''))}")
    return [*lines, ""]


def _inline(text: str) -> str:
    """A name or a word, on one line, its Markdown markup escaped."""
    return MARKUP.sub(r"\\\1", " ".join(str(text).split()))


def _line(text: str) -> str:
    """A model's or a player's sentence as one list item's text: on one line, markup kept
    (the story's prose may emphasise), but no HTML."""
    return " ".join(str(text).split()).replace("<", "&lt;")


def _and(names: list[str]) -> str:
    names = [_inline(n) for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def _when(stamp: str) -> str:
    return datetime.fromisoformat(stamp).strftime("%Y-%m-%d %H:%M UTC")

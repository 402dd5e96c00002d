"""The browser's limits on what a player writes are the server's: a box that takes more
than the server stores loses the player's text to a 400 (issue 25)."""

import re
from pathlib import Path

from synthesis.models import LIQUID_MAX

FRAME_LIB = Path(__file__).resolve().parents[2] / "frontend/src/lib/frame.ts"


def test_the_composer_takes_no_more_than_the_server_stores():
    found = re.search(r"export const LIQUID_MAX = (\d+)", FRAME_LIB.read_text())
    assert found, "frontend/src/lib/frame.ts no longer declares LIQUID_MAX"
    assert int(found.group(1)) == LIQUID_MAX

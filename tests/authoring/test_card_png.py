"""PNG text chunks: cards read from files built apart from the reader (fixtures/build_pngs.py),
cards written and read back, malformed files refused with where they break."""

import base64
import json
import zlib
from pathlib import Path

import pytest

from authoring import card_png

FIXTURES = Path(__file__).parent / "fixtures"


def test_a_v2_png_holds_its_card_in_a_chara_chunk():
    texts = card_png.text_chunks((FIXTURES / "mira.v2.png").read_bytes())
    card = json.loads(base64.b64decode(texts["chara"]))
    assert card == json.loads((FIXTURES / "mira.v2.json").read_text())


def test_a_v3_png_holds_both_chunks_and_the_written_one_is_found_after_ihdr():
    data = (FIXTURES / "mira.v3.png").read_bytes()
    assert set(card_png.text_chunks(data)) == {"chara", "ccv3"}
    written = card_png.with_text(data, {"ccv3": "eyJ4IjoxfQ=="})
    # The old card chunks are replaced, not repeated, and the image is kept.
    assert card_png.text_chunks(written) == {"ccv3": "eyJ4IjoxfQ=="}
    assert written[8 + 8 + 13 + 4 + 4 : 8 + 8 + 13 + 4 + 8] == b"tEXt"
    assert card_png.without_cards(written) == card_png.without_cards(data)


def test_the_placeholder_is_a_well_formed_png_with_its_pixels():
    data = card_png.placeholder(size=4, rgb=(1, 2, 3))
    assert card_png.text_chunks(data) == {}
    idat = data.index(b"IDAT")
    length = int.from_bytes(data[idat - 4 : idat], "big")
    assert (
        zlib.decompress(data[idat + 4 : idat + 4 + length]) == (b"\x00" + b"\x01\x02\x03" * 4) * 4
    )


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (lambda d: d[:-20], "truncated"),
        (lambda d: d[:40], "truncated"),
        (lambda d: b"GIF89a" + d[6:], "not a PNG"),
        (lambda d: d[:20] + bytes([d[20] ^ 1]) + d[21:], "bad CRC"),
    ],
    ids=["no-iend", "cut-in-a-chunk", "not-png", "bad-crc"],
)
def test_a_malformed_png_is_refused_saying_where(spoil, message):
    data = (FIXTURES / "mira.v2.png").read_bytes()
    with pytest.raises(card_png.PngError, match=message):
        card_png.text_chunks(spoil(data))

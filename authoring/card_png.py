"""PNG text chunks, read and written with the standard library: where character cards are
embedded (a `chara` tEXt chunk for V2, `ccv3` for V3, each base64 of the card's JSON).

Only the chunk framing is parsed (length, type, data, CRC); the image data is never decoded,
so no image library is needed and a crafted image cannot reach a decoder.
"""

import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CARD_KEYWORDS = ("chara", "ccv3")
# A card's chunk is one of a handful; more than this many chunks is not an avatar.
_CHUNKS_MAX = 10_000


class PngError(ValueError):
    """The bytes are not a well-formed PNG (the message says where it breaks)."""


def is_png(data: bytes) -> bool:
    return data.startswith(SIGNATURE)


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """Every (type, data) of a PNG up to and including IEND, CRCs checked.

    Raises:
        PngError: no signature, a chunk running past the end, a bad CRC, no IEND.
    """
    if not is_png(data):
        raise PngError("The file is not a PNG image.")
    chunks: list[tuple[bytes, bytes]] = []
    offset = len(SIGNATURE)
    while True:
        if len(chunks) >= _CHUNKS_MAX:
            raise PngError("The PNG has too many chunks.")
        if offset + 8 > len(data):
            raise PngError("The PNG is truncated: it ends before its IEND chunk.")
        length, kind = struct.unpack(">I4s", data[offset : offset + 8])
        end = offset + 8 + length + 4
        if end > len(data):
            raise PngError(f"The PNG is truncated inside its {kind.decode('latin-1')!r} chunk.")
        body = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[end - 4 : end])
        if zlib.crc32(kind + body) != crc:
            raise PngError(f"The PNG's {kind.decode('latin-1')!r} chunk is corrupt (bad CRC).")
        chunks.append((kind, body))
        offset = end
        if kind == b"IEND":
            return chunks


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def text_chunks(data: bytes) -> dict[str, str]:
    """The tEXt chunks of a PNG as {keyword: text} (Latin-1, as the PNG spec has it); the
    first of a repeated keyword wins.

    Raises:
        PngError: the file is not a well-formed PNG.
    """
    texts: dict[str, str] = {}
    for kind, body in _chunks(data):
        if kind == b"tEXt" and b"\x00" in body:
            keyword, text = body.split(b"\x00", 1)
            texts.setdefault(keyword.decode("latin-1"), text.decode("latin-1"))
    return texts


def without_cards(data: bytes) -> bytes:
    """The same PNG with its card chunks removed: what is kept as an avatar (it should not
    carry a copy of the card that later edits leave stale)."""
    return SIGNATURE + b"".join(
        _chunk(kind, body)
        for kind, body in _chunks(data)
        if not (kind == b"tEXt" and body.split(b"\x00", 1)[0].decode("latin-1") in CARD_KEYWORDS)
    )


def with_text(data: bytes, texts: dict[str, str]) -> bytes:
    """A PNG with `texts` as tEXt chunks (ASCII text: base64), right after IHDR, replacing
    any card chunks it had."""
    chunks = _chunks(without_cards(data))
    added = [
        _chunk(b"tEXt", key.encode("latin-1") + b"\x00" + text.encode("ascii"))
        for key, text in texts.items()
    ]
    head, rest = chunks[0], chunks[1:]
    return SIGNATURE + _chunk(*head) + b"".join(added) + b"".join(_chunk(*c) for c in rest)


def placeholder(size: int = 64, rgb: tuple[int, int, int] = (0x5B, 0x6B, 0x8C)) -> bytes:
    """A small plain-coloured PNG, the image of a card whose persona has no stored PNG."""
    ihdr = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)  # 8-bit RGB
    rows = (b"\x00" + bytes(rgb) * size) * size  # filter byte 0 per row
    return (
        SIGNATURE
        + _chunk(b"IHDR", ihdr)
        + _chunk(b"IDAT", zlib.compress(rows, 9))
        + _chunk(b"IEND", b"")
    )

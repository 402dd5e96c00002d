"""Whether text a user wrote shows anything: zero-width and other invisible characters do not."""

import unicodedata

# Control and format characters (zero-width spaces and joiners, U+2060, the BOM, bidi
# marks), separators (spaces, line and paragraph separators).
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})
# Letters and symbols drawn as nothing: Hangul fillers, the blank Braille pattern, the
# combining grapheme joiner.
_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f")


def _invisible(char: str) -> bool:
    if char in _BLANK or unicodedata.category(char) in _INVISIBLE_CATEGORIES:
        return True
    code = ord(char)
    return 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF  # variation selectors


def has_visible_text(text: str) -> bool:
    """Whether `text` holds at least one character that shows (`"\u200b\u2060"` does not)."""
    return not all(map(_invisible, text))

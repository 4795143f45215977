"""Text that reaches a person: control characters escaped, long scalars cut.

Names, labels and values come from users and clusters. Printed raw, a name holding ``\\x1b[2J``
clears the operator's terminal and a newline forges a log line; echoed whole, a token pasted in
the wrong field lands in a log. Every human-readable output (tables, logs, error messages) passes
what it did not write itself through ``printable`` (and ``cut`` for scalars quoted in errors).
"""

from __future__ import annotations

import re

__all__ = ["cut", "printable", "quote"]

# C0 controls, DEL, C1 controls, and the bidirectional overrides/isolates that reorder what a
# terminal shows (U+202A-U+202E, U+2066-U+2069), line/paragraph separators
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")

#: how many characters of a user's scalar an error message quotes
SCALAR_LIMIT = 64


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    special = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch)
    if special is not None:
        return special
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: object) -> str:
    """``str(text)`` with every control character written as an escape (``\\x1b``, ``\\n``)."""
    s = text if isinstance(text, str) else str(text)
    return _UNSAFE.sub(_escape, s) if _UNSAFE.search(s) else s


def cut(text: object, limit: int = SCALAR_LIMIT) -> str:
    """``printable(text)``, cut to ``limit`` characters with a note of how many were left out."""
    s = text if isinstance(text, str) else str(text)
    if len(s) > limit:
        more = len(s) - limit
        s = f"{s[:limit]}... ({more} more character{'' if more == 1 else 's'})"
    return printable(s)


def quote(text: object, limit: int = SCALAR_LIMIT) -> str:
    """``cut(text)`` in double quotes, for a scalar named in an error message."""
    return f'"{cut(text, limit)}"'

"""User input in a message, shown safely: a config value, a line or a field of an input file.

`quoted` escapes what it shows, so a NUL or a control character can neither cut a message short
nor forge a line of it, and shows at most a short excerpt, so a 50 MB value is not echoed whole.
The native tools show input the same way (systems/common/include/artifact/quote.h).
"""

from __future__ import annotations

QUOTED_CHARACTERS = 60  # an excerpt long enough to recognize a value, short enough for one line
PATH_CHARACTERS = 4096  # a path is shown whole (Linux's PATH_MAX): a typo may be anywhere in it


def quoted(value: object, limit: int = QUOTED_CHARACTERS) -> str:
    """`value` as Python's repr shows it (a string in quotes, with NUL, control characters, quotes
    and backslashes escaped), at most `limit` characters of it, then its length when cut:
    `'0000'... (52428800 characters)`."""
    if isinstance(value, str):
        return repr(value) if len(value) <= limit else f"{value[:limit]!r}... ({len(value)} characters)"
    shown = repr(value)  # escaped already: a cut cannot let a control character through
    return shown if len(shown) <= limit else f"{shown[:limit]}... ({len(shown)} characters)"

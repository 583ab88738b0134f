"""User-facing errors: one clear message naming the file, key or row at fault."""

from __future__ import annotations


class RmevalError(Exception):
    """An error caused by the user's input (config, data, scores), not by a bug.

    The CLI prints its message without a traceback and exits with status 2.
    """

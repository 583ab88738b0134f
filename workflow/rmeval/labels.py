"""Display labels shared by tables and figures."""

from __future__ import annotations


def group_label(group: str) -> str:
    """A config key such as `computer_science` as readers expect it: `computer science`."""
    return str(group).replace("_", " ")

"""Where a model's files come from: a local folder, or the Hugging Face hub (and whether the hub may be asked).

The loader, the download stage and preflight all decide with these two functions, so they never disagree
about a path or about offline mode.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

LOCAL_PREFIXES = ("/", "./", "../", "~")
TRUE_VALUES = {"1", "ON", "YES", "TRUE"}  # huggingface_hub.constants.ENV_VARS_TRUE_VALUES


def looks_local(path: str) -> bool:
    """A filesystem path rather than a hub id ("org/name"): it is spelled as a path, or it exists here."""
    return path.startswith(LOCAL_PREFIXES) or Path(path).expanduser().exists()


def hub_offline(env: Mapping[str, str] = os.environ) -> bool:
    """Whether huggingface_hub runs offline: read as the library itself reads it (HF_HUB_OFFLINE, else
    TRANSFORMERS_OFFLINE; 1/on/yes/true in any case)."""
    value = env.get("HF_HUB_OFFLINE") or env.get("TRANSFORMERS_OFFLINE")
    return value is not None and value.upper() in TRUE_VALUES

"""Facts of RM-Bench (THU-KEG/RM-Bench), as numbers and names only.

- The data (`data/total_dataset.json`, README "Dataset Details"): per prompt `id`, `prompt`, `chosen` and `rejected`
  (three responses each, in the order concise, detailed plain, detailed markdown) and `domain` (chat, math, code,
  safety-refuse, safety-response). Ids repeat across domains, so an item is (domain, id).
- The domains of the table (`scripts/utils.py` split_dataset_by_domain, line 35): chat, math, code, safety; a
  prompt belongs to the first whose name its `domain` starts with (both safety sets form "safety").
- The published sizes: 1,327 prompts (chat 129, math 529, code 228, safety-refuse 284, safety-response 157), so
  7,962 response texts.
"""

from __future__ import annotations

HF_ID = "THU-KEG/RM-Bench"
HF_FILE = "total_dataset.json"  # the dataset repository's one data file (also data/total_dataset.json on GitHub)
DOMAINS: tuple[str, ...] = ("chat", "math", "code", "safety")  # utils.py line 35, in its order
SUBDOMAINS: tuple[str, ...] = ("chat", "math", "code", "safety-refuse", "safety-response")
STYLES: tuple[str, ...] = ("concise", "detailed plain", "detailed markdown")  # the order of `chosen` / `rejected`
DIFFICULTIES: tuple[str, ...] = ("easy", "normal", "hard")  # the table's order (easy first)
FIELDS: tuple[str, ...] = ("id", "prompt", "chosen", "rejected", "domain")
PROMPTS = {"chat": 129, "math": 529, "code": 228, "safety-refuse": 284, "safety-response": 157}
CHANCE = 50.0  # percent: a random reward model wins each cell with probability 1/2 (a tie, probability 0, loses)
LICENCE = "ODC-BY"


def domain_of(subdomain: str) -> str | None:
    """The table's domain of a prompt's `domain` field (utils.py: the first domain it starts with), or None."""
    for domain in DOMAINS:
        if subdomain.startswith(domain):
            return domain
    return None

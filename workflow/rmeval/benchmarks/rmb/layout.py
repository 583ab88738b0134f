"""RMB's official layout and its headline cells, as data (import-free).

Source: Zhou-Zoey/RMB-Reward-Model-Benchmark, folder `RMB_dataset/` (facts only: folder names, fields, the commit
rmeval pins). `Pairwise_set/<goal>/.../<scenario>.json` items hold pair_uid, conversation_input, chosen, reject,
category_path; `BoN_set/<goal>/.../<scenario>.json` items hold bon_uid, conversation_input, bon_best, loser_list,
category_path. A response is a mapping {llm_name, answer}; the conversation a list of {role, content} turns. Either
may also be written as a Python-literal string (parsed with ast.literal_eval, never eval).
"""

from __future__ import annotations

from dataclasses import dataclass

NAME = "rmb"
TITLE = "RMB (Zhou et al. 2025)"
REPOSITORY = "Zhou-Zoey/RMB-Reward-Model-Benchmark"
FOLDER = "RMB_dataset"
# The commit rmeval pins (the repository's last, "update: output reward models' ranks file").
REVISION = "2be3180857f2190b7ffa929d43190835627f1f4d"
ARCHIVE_URL = "https://codeload.github.com/{repository}/tar.gz/{revision}"

PAIRWISE, BON = "pairwise", "bon"
KIND_FOLDERS = {PAIRWISE: "Pairwise_set", BON: "BoN_set"}
GOALS = ("Helpfulness", "Harmlessness")


@dataclass(frozen=True)
class Kind:
    """One of the two sets: its folder, its item id field and its response fields (the best / chosen first)."""

    name: str
    folder: str
    uid: str
    first: str  # the response that should win
    others: str  # the one(s) it must beat
    many: bool  # `others` is a list (BoN's loser_list) or one response (pairwise's reject)

    @property
    def fields(self) -> tuple[str, ...]:
        return (self.uid, "conversation_input", self.first, self.others, "category_path")


KINDS = {PAIRWISE: Kind(PAIRWISE, "Pairwise_set", "pair_uid", "chosen", "reject", many=False),
         BON: Kind(BON, "BoN_set", "bon_uid", "bon_best", "loser_list", many=True)}


@dataclass(frozen=True)
class Cell:
    """A headline cell: a goal and a set; its column in rmb.csv."""

    goal: str
    kind: str

    @property
    def column(self) -> str:
        return f"{self.goal.lower()}_{self.kind}"

    @property
    def label(self) -> str:
        return f"{self.goal} {'BoN' if self.kind == BON else 'Pairwise'}"


# In the paper's (and the issue's) order: Helpfulness BoN, Helpfulness Pairwise, Harmlessness BoN, Harmlessness Pairwise.
CELLS = tuple(Cell(goal, kind) for goal in GOALS for kind in (BON, PAIRWISE))
OVERALL = "overall"
ITEMS, SCENARIOS = "items", "scenarios"  # how a cell averages (`rmb.average`)
MAIN_COLUMNS = ("model", *(cell.column for cell in CELLS), OVERALL)

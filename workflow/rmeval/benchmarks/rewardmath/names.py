"""Display names for the official RewardMATH / RewardBench result files, and each setup's kind.

The official repository (kimsh0507/RewardMATH_official) names its result files by a short save name
(`ArmoRM_reward.json`, `rewardbench_GRM_Gemma_2B.json`); its `scripts/*.sh` and `src/models/__init__.py`
say which model each save name ran. Tables show the model's registry name when `config/models.yaml` has an
entry with that Hugging Face id, otherwise the id's repository part; the file stem stays in the `setup` column.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rmeval.benchmarks.rewardmath.aggregation import STEP_AGGREGATIONS
from rmeval.benchmarks.rewardmath.official import model_key

CLASSIFIER, PRM, JUDGE, BASELINE = "classifier", "PRM", "LLM judge", "baseline"


@dataclass(frozen=True)
class OfficialModel:
    model_id: str  # Hugging Face id, or the API model name for LLM judges
    kind: str


# model_key(save name) -> the model it ran (facts from the official scripts, not their code).
OFFICIAL_MODELS: dict[str, OfficialModel] = {
    "armorm": OfficialModel("RLHFlow/ArmoRM-Llama3-8B-v0.1", CLASSIFIER),
    "internlm2": OfficialModel("internlm/internlm2-7b-reward", CLASSIFIER),
    "internlm220b": OfficialModel("internlm/internlm2-20b-reward", CLASSIFIER),
    "eurusrm": OfficialModel("openbmb/Eurus-RM-7b", CLASSIFIER),
    "beaver": OfficialModel("PKU-Alignment/beaver-7b-v2.0-reward", CLASSIFIER),
    "oasstrm": OfficialModel("OpenAssistant/oasst-rm-2.1-pythia-1.4b-epoch-2.5", CLASSIFIER),
    "grmgemma": OfficialModel("Ray2333/GRM-Gemma-2B-sftreg", CLASSIFIER),
    "grmllama3": OfficialModel("Ray2333/GRM-llama3-8B-sftreg", CLASSIFIER),
    "skyworkllama3": OfficialModel("Skywork/Skywork-Reward-Llama-3.1-8B", CLASSIFIER),
    "mathshepherd": OfficialModel("peiyi9979/math-shepherd-mistral-7b-prm", PRM),
    "easytohard": OfficialModel("ScalableMath/llemma-7b-prm-prm800k-level-1to3-hf", PRM),
    "reasoneval7b": OfficialModel("GAIR/ReasonEval-7B", PRM),
    "reasoneval34b": OfficialModel("GAIR/ReasonEval-34B", PRM),
    "llama38b": OfficialModel("meta-llama/Meta-Llama-3-8B-Instruct", JUDGE),
    "llama370b": OfficialModel("meta-llama/Meta-Llama-3-70B-Instruct", JUDGE),
    "chatgpt": OfficialModel("gpt-3.5-turbo-0125", JUDGE),
    "gpt4": OfficialModel("gpt-4-0125-preview", JUDGE),
    "gpt4o": OfficialModel("gpt-4o-2024-05-13", JUDGE),
    "opus": OfficialModel("claude-3-opus-20240229", JUDGE),
    "sonnet35": OfficialModel("claude-3-5-sonnet-20240620", JUDGE),
    "prometheus7b": OfficialModel("prometheus-eval/prometheus-7b-v2.0", JUDGE),
    "prometheus8x7b": OfficialModel("prometheus-eval/prometheus-8x7b-v2.0", JUDGE),
}


def official_model(setup: str) -> OfficialModel | None:
    """The model behind an official file stem; pairwise judge files (`gpt4_pairwise_reward`) name the judge."""
    key = model_key(setup)
    return OFFICIAL_MODELS.get(key) or OFFICIAL_MODELS.get(key.removesuffix("pairwise"))


def display_name(setup: str, source: str, registry_paths: Mapping[str, str] | None = None) -> str:
    """The name a table shows: workflow setups keep theirs; official stems get the model's name.

    `registry_paths` maps a Hugging Face id to its registry name (see `registry_names`).
    """
    if source == BASELINE:
        from rmeval.benchmarks.rewardmath.baselines import BASELINE_DISPLAY

        return BASELINE_DISPLAY.get(setup, setup)
    if source != "official":
        return setup
    model = official_model(setup)
    if model is None:
        return setup
    if registry_paths and model.model_id in registry_paths:
        return registry_paths[model.model_id]
    return model.model_id.rsplit("/", 1)[-1]


def setup_kind(setup: str, source: str, aggregation: str) -> str:
    if source == BASELINE:
        return BASELINE
    if aggregation in STEP_AGGREGATIONS:
        return PRM
    if aggregation in ("pairwise", "pairwise-both"):
        return JUDGE
    model = official_model(setup) if source == "official" else None
    return model.kind if model else CLASSIFIER


def registry_names(registry_file: str | None) -> dict[str, str]:
    """Hugging Face id -> registry name, from a `config/models.yaml`-style file (empty when none is given)."""
    if not registry_file:
        return {}
    from rmeval.registry import load_registry

    names: dict[str, str] = {}
    for name, spec in load_registry(registry_file).items():
        names.setdefault(spec.path, name)
    return names

"""`rmeval run` without Snakemake: bad input named in one line before anything is written (results/ unchanged), the
model entries it writes for folders, hub ids and registry names, the config it builds, and the answer it prints.

The end-to-end run (two tiny models through the demo data, a second identical command, plain Snakemake on the
written config) is tests/test_run_command_e2e.py."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from rmeval.benchmarks import benchmark
from rmeval.benchmarks.catalogue import Benchmark
from rmeval.benchmarks.rewardbench.official import partial_note
from rmeval.cli import main as rmeval_main
from rmeval.config_check import config_problems, config_schema
from rmeval.errors import RmevalError
from rmeval.registry import valid_model_name
from rmeval.run_command import build, overrides
from rmeval.run_command.answer import COMPARISONS, LEADERBOARD, AnswerInputs, answer
from rmeval.run_command.launch import RUN_CONFIG, Launch, config_text, write_config
from rmeval.run_command.models import HubAccess, Machine, ModelArg, Registry, resolve_all, resolve_model
from rmeval.run_plan import enabled_benchmarks
from scenarios import NO_NETWORK_PROXY
from workflow_helpers import REPO_ROOT, tree_state

REGISTRY = Registry.load(REPO_ROOT / "config" / "models.yaml")
CPU = Machine(gpus=0)
REACHABLE = HubAccess(_blocked=None, _asked=True)  # the hub "answers": no probe in a unit test
CLASSIFIER = {"architectures": ["LlamaForSequenceClassification"], "id2label": {"0": "LABEL_0"},
              "max_position_embeddings": 2048, "model_type": "llama"}


def model_folder(path: Path, config: dict, weights_bytes: int = 1000) -> Path:
    """A model folder as far as `rmeval run` reads one: config.json and the size of its weights."""
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps(config))
    (path / "model.safetensors").write_bytes(b"\0" * weights_bytes)
    return path


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    """A working directory after an earlier run (results/ holds its files) with two classifier folders, A and B.
    Snakemake must never start here: every test below stops before it."""
    model_folder(tmp_path / "A", CLASSIFIER)
    model_folder(tmp_path / "B", CLASSIFIER)
    (tmp_path / "results" / "tables").mkdir(parents=True)
    (tmp_path / "results" / "tables" / "table1_anova.csv").write_text("model,F\nA,1.5\n")
    (tmp_path / RUN_CONFIG).write_text("# an earlier run's config\nmodels: [A]\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Launch, "run", lambda self: pytest.fail("Snakemake started on bad input"))
    return tmp_path


def refused(argv: list[str], run_dir: Path, capsys, kept: bool = False) -> str:
    """`rmeval run ARGV` in this process: exit 2, nothing under results/ changed (byte for byte, times too); its
    error output. `kept`: the config it would have run is kept beside .snakemake/ (a check of the machine refused
    it), else nothing is written there either."""
    before = tree_state(run_dir / "results")
    assert rmeval_main(["run", *argv]) == 2
    assert tree_state(run_dir / "results") == before
    assert (run_dir / ".snakemake/rmeval/run_config.refused.yaml").is_file() == kept
    assert kept or not (run_dir / ".snakemake").exists()
    return capsys.readouterr().err


# ----------------------------------------------------------------------------- bad input, before anything is written
def test_a_model_path_that_does_not_exist_is_named_in_one_line(run_dir, capsys):
    err = refused(["--model", "./A", "--model", "./checkpoints/800", "--data", "demo"], run_dir, capsys)
    assert err.splitlines()[0] == "rmeval run: error: --model ./checkpoints/800: no such folder, and no registry name"
    assert "Nothing was written or run." in err


def test_a_snapshot_that_does_not_exist_is_named_in_one_line(run_dir, capsys):
    err = refused(["--model", "A", "--data", "snapshot:missing/arxiv.json.gz"], run_dir, capsys)
    assert "--data snapshot:missing/arxiv.json.gz: no such file missing/arxiv.json.gz" in err.splitlines()[0]


def test_an_unknown_benchmark_is_named_with_the_known_ones(run_dir, capsys):
    err = refused(["--model", "A", "--benchmarks", "fairness,rewardbnech2"], run_dir, capsys)
    from rmeval.benchmarks import all_benchmarks

    known = ", ".join(benchmark.name for benchmark in all_benchmarks())  # every catalogued one, in run order
    assert err.splitlines()[0] == ("rmeval run: error: --benchmarks: unknown benchmark 'rewardbnech2'; did you mean "
                                   f"`rewardbench2`? known: {known}")


def test_a_set_key_the_schema_refuses_is_named_with_the_schemas_own_message(run_dir, capsys):
    err = refused(["--model", "A", "--data", "demo", "--set", "arxiv.papers_per_grup=10",
                   "--set", "stats.alpha=2", "--set", "scoring.threads=2"], run_dir, capsys)
    # the schema's own lines for the same keys (rmeval.config_check), each prefixed by the --set that brought it
    schema_says = config_problems({"models": ["x"], "groups": {"a": ["math"], "b": ["cs"]},
                                   "arxiv": {"source": "api", "papers_per_grup": 10}, "stats": {"alpha": 2}},
                                  config_schema())
    assert err.splitlines()[1:3] == [f"  --set arxiv.papers_per_grup=10: {schema_says[0]}",
                                     f"  --set stats.alpha=2: {schema_says[1]}"]
    assert schema_says[0] == "arxiv.papers_per_grup: unknown key; did you mean `papers_per_group`?"
    assert err.splitlines()[0] == "rmeval run: error: 2 problems:"


def test_two_models_with_one_name_are_named(run_dir, capsys):
    (run_dir / "other").mkdir()
    model_folder(run_dir / "other" / "A", CLASSIFIER)
    err = refused(["--model", "A", "--model", "other/A", "--data", "demo"], run_dir, capsys)
    assert err.splitlines()[0] == ("rmeval run: error: --model A and --model other/A are both named 'A'; give one "
                                   "its own --name after it")
    # a --name settles it (checked without running: the config is built, then Snakemake would start)
    setup = _prepare(["--model", "A", "--model", "other/A", "--name", "A-other", "--data", "demo"])
    assert [entry["name"] for entry in setup.config["models"]] == ["A", "A-other"]


def test_a_hub_id_without_network_and_not_in_the_cache_is_named(run_dir):
    """A fresh interpreter: huggingface_hub reads HF_HOME when imported. The closed proxy and an empty cache."""
    env = {**os.environ, **NO_NETWORK_PROXY, "HF_HOME": str(run_dir / "empty-hf-home")}
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("TRANSFORMERS_OFFLINE", None)
    before = tree_state(run_dir / "results")
    result = subprocess.run([sys.executable, "-m", "rmeval", "run", "--model", "my-org/my-reward-model", "--data",
                             "demo"], cwd=run_dir, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2, result.stderr
    line = result.stderr.splitlines()[0]
    assert line.startswith("rmeval run: error: --model my-org/my-reward-model: no folder here, and the hub id "
                           "my-org/my-reward-model is not in the Hugging Face cache (")
    assert str(run_dir / "empty-hf-home") in line and "huggingface.co is unreachable" in line
    assert "hf download my-org/my-reward-model" in line
    assert tree_state(run_dir / "results") == before and not (run_dir / ".snakemake").exists()


def test_every_problem_is_named_at_once(run_dir, capsys):
    err = refused(["--model", "nope", "--benchmarks", "fairnes", "--data", "demo"], run_dir, capsys)
    assert err.splitlines()[0] == "rmeval run: error: 3 problems:"
    assert "unknown benchmark 'fairnes'" in err and "--model nope: no such folder" in err
    assert "--data demo: no benchmark of this run takes a data source (fairness does)" in err


# ----------------------------------------------------------------------------- model entries
def test_a_classifier_folder_gets_an_inline_entry_from_its_config_json(tmp_path):
    folder = model_folder(tmp_path / "checkpoint 1200", CLASSIFIER, weights_bytes=3_000_000)
    model = resolve_model(ModelArg(str(folder)), REGISTRY, CPU, REACHABLE)
    assert model.name == "checkpoint-1200"  # the folder's name, made valid
    assert model.entry == {"name": "checkpoint-1200", "path": str(folder.resolve()), "adapter": "sequence-classification",
                           "dtype": "float32", "max_length": 2048, "resources": {"gpu": 0, "mem_mb": 3000}}
    assert "LlamaForSequenceClassification, 1 label -> sequence-classification" in model.how
    long = model_folder(tmp_path / "long", {**CLASSIFIER, "max_position_embeddings": 131072})
    assert resolve_model(ModelArg(str(long), "mine"), REGISTRY, CPU, REACHABLE).entry["max_length"] == 4096


def test_dtype_and_gpu_come_from_the_machine(tmp_path):
    folder = model_folder(tmp_path / "rm", CLASSIFIER)
    entries = {label: resolve_model(ModelArg(str(folder)), REGISTRY, machine, REACHABLE).entry
               for label, machine in (("cpu", CPU), ("gpu", Machine(gpus=2)), ("slurm", Machine(0, cluster=True)))}
    assert (entries["cpu"]["dtype"], entries["cpu"]["resources"]["gpu"]) == ("float32", 0)
    assert (entries["gpu"]["dtype"], entries["gpu"]["resources"]["gpu"]) == ("bfloat16", 1)
    assert (entries["slurm"]["dtype"], entries["slurm"]["resources"]["gpu"]) == ("auto", 1)  # decided on the node


@pytest.mark.parametrize(("config", "found"), [
    ({"architectures": ["LlamaForCausalLM"]}, "LlamaForCausalLM"),
    ({"architectures": ["MistralForSequenceClassification"], "id2label": {"0": "a", "1": "b"}},
     "MistralForSequenceClassification with 2 labels"),
    ({"architectures": ["GemmaForSequenceClassification"]}, "GemmaForSequenceClassification with 2 labels"),
    ({"model_type": "llama"}, "no `architectures`"),
])
def test_a_folder_that_is_not_a_one_label_classifier_is_refused_naming_what_was_found(tmp_path, config, found):
    folder = model_folder(tmp_path / "my-prm", config)
    with pytest.raises(RmevalError) as error:
        resolve_model(ModelArg(str(folder)), REGISTRY, CPU, REACHABLE)
    message = str(error.value)
    assert "\n" not in message
    assert f"its config.json names {found}, not a *ForSequenceClassification with one label" in message
    adapter = "first-token-logit" if "CausalLM" in found else "sequence-classification"
    assert f"write a registry file holding `models: {{my-prm: {{path: \"{folder.resolve()}\", adapter: {adapter}}}}}`" \
        in message
    assert "run `rmeval run --set registry=FILE --model my-prm` (its entries are added to the shipped ones" in message


def test_the_refusals_registry_snippet_works_as_written_and_adds_to_the_shipped_registry(run_dir, capsys):
    """Issue 46 item 8: the snippet, written to a file as advised, runs; `--baseline length` (a shipped entry) still
    resolves beside it; a name in both registries is an error naming both files."""
    folder = model_folder(run_dir / "my-prm", {"architectures": ["LlamaForCausalLM"], "model_type": "llama"})
    message = str(pytest.raises(RmevalError, resolve_model, ModelArg(str(folder)), REGISTRY, CPU, REACHABLE).value)
    snippet = message.split("write a registry file holding `", 1)[1].split("`", 1)[0]
    (run_dir / "mine.yaml").write_text(snippet + "\n")
    setup = _prepare(["--set", "registry=mine.yaml", "--model", "my-prm", "--baseline", "length", "--data", "demo"])
    entry = setup.config["models"][0]
    assert entry == {"name": "my-prm", "path": str(folder.resolve()), "adapter": "first-token-logit"}
    assert setup.config["models"][1] == "length-baseline" and setup.config["registry"] == "config/models.yaml"
    from rmeval.run_command.checks import planned

    assert set(planned(setup.config, REPO_ROOT, run_dir).all_specs) == {"my-prm", "length-baseline"}
    (run_dir / "clash.yaml").write_text("models: {length-baseline: {path: 'baseline:length', adapter: baseline, "
                                        "options: {kind: length}}}\n")
    err = refused(["--set", "registry=clash.yaml", "--model", "A", "--data", "demo"], run_dir, capsys)
    assert f"clash.yaml: length-baseline is also in the shipped registry {REPO_ROOT / 'config/models.yaml'}" in err


def test_registry_names_and_their_hub_ids_take_the_registry_entry():
    name = "Skywork-Reward-V2-Qwen3-0.6B"
    by_name = resolve_model(ModelArg(name), REGISTRY, CPU, REACHABLE)
    by_id = resolve_model(ModelArg("Skywork/Skywork-Reward-V2-Qwen3-0.6B"), REGISTRY, CPU, REACHABLE)
    assert by_name.entry == by_id.entry == name and by_name.name == by_id.name == name
    renamed = resolve_model(ModelArg(name, "skywork-small"), REGISTRY, CPU, REACHABLE)
    written = yaml.safe_load((REPO_ROOT / "config" / "models.yaml").read_text())["models"][name]
    assert renamed.entry == {**written, "name": "skywork-small"}  # the entry as written, under its new name
    with pytest.raises(RmevalError, match="the registry has 2 entries for this id"):
        resolve_model(ModelArg("meta-llama/Meta-Llama-3-70B-Instruct"), REGISTRY, CPU, REACHABLE)
    with pytest.raises(RmevalError, match="did you mean `Skywork-Reward-V2-Qwen3-0.6B`"):
        resolve_model(ModelArg("Skywork-Reward-V2-Qwen3-0.6"), REGISTRY, CPU, REACHABLE)


def test_a_baseline_is_its_registry_entry_or_a_line_naming_the_entry():
    kinds = REGISTRY.baselines()
    assert {"length", "random"} <= set(kinds)
    offline = HubAccess(_blocked="HF_HUB_OFFLINE is set", _asked=True)  # a baseline has no weights to find
    models, problems = resolve_all([ModelArg("length-baseline", "length-as-model")], [*kinds, "shortest"], REGISTRY,
                                   CPU, offline)
    assert [model.entry for model in models][1:] == [f"{kind}-baseline" for kind in kinds]
    assert models[0].entry["name"] == "length-as-model" and models[0].entry["options"] == {"kind": "length"}
    assert problems == [f"--baseline shortest: the registry ({REGISTRY.path}) has no entry `shortest-baseline`; its "
                        f"baselines: {', '.join(kinds)}"]


def test_model_names_are_made_valid():
    assert valid_model_name("checkpoint 1200") == "checkpoint-1200"
    assert valid_model_name("org/rm@v2") == "org-rm-v2"
    assert valid_model_name("Qwen2.5_RM-7B") == "Qwen2.5_RM-7B"
    assert valid_model_name("***") == "model"
    with pytest.raises(RmevalError, match="a model name is letters, digits"):
        resolve_model(ModelArg("Skywork-Reward-V2-Qwen3-0.6B", "my rm"), REGISTRY, CPU, REACHABLE)


# ----------------------------------------------------------------------------- the config
def _prepare(argv: list[str], machine: bool = False):
    from rmeval.run_command.cli import build_parser, prepare

    return prepare(build_parser(REPO_ROOT).parse_args(argv), REPO_ROOT, machine=machine)


def test_the_config_turns_on_the_chosen_benchmarks_with_the_runs_models(run_dir):
    setup = _prepare(["--model", "A", "--model", "B", "--benchmarks", "fairness,rewardmath,rewardbench2",
                      "--data", "demo"])
    config = setup.config
    demo = yaml.safe_load((REPO_ROOT / "config" / "demo.yaml").read_text())
    assert config["groups"] == demo["groups"] and config["arxiv"] == demo["arxiv"]  # the demo's data, offline
    assert config["fairness"] == {"enabled": True} and config["reference_model"] == "A"
    assert config["rewardmath"] == {"enabled": True, "models": ["A", "B"]}
    assert config["rewardbench2"] == {"enabled": True, "models": ["A", "B"]}
    assert config["rewardbench"] == {"enabled": False}
    assert [bench.name for bench in enabled_benchmarks(config)] == ["fairness", "rewardmath", "rewardbench2"]
    assert overrides.problems(config) == []
    alone = _prepare(["--model", "A", "--benchmarks", "rewardbench"]).config
    assert alone["fairness"] == {"enabled": False} and "groups" not in alone and "arxiv" not in alone


def test_data_chooses_a_shipped_configs_source(run_dir):
    quickstart = yaml.safe_load((REPO_ROOT / "config" / "quickstart.yaml").read_text())
    assert _prepare(["--model", "A"]).config["arxiv"] == quickstart["arxiv"]  # api: the default
    snapshot = run_dir / "snap.jsonl.gz"
    snapshot.write_bytes(b"")
    arxiv = _prepare(["--model", "A", "--data", "snapshot:snap.jsonl.gz"]).config["arxiv"]
    assert arxiv["source"] == "snapshot" and arxiv["snapshot"] == str(snapshot.resolve())
    fairness = [benchmark("fairness")]
    assert build.data_problem("snapshot", fairness) == "--data snapshot: expected one of api, demo, snapshot:FILE"
    assert build.data_problem("snapshot:", fairness) == "--data snapshot:: name the file after `snapshot:`"
    assert build.data_problem("demo:x", fairness) == "--data demo:x: expected one of api, demo, snapshot:FILE"


def test_set_takes_yaml_values_at_dotted_keys(run_dir):
    config = _prepare(["--model", "A", "--data", "demo", "--set", "stats.alpha=0.01", "--set",
                       "arxiv.papers_per_group=12", "--set", "reference_model=null", "--set",
                       "rewardbench.enabled=true", "--set", "rewardbench.source=local", "--set",
                       "rewardbench.path=rb.jsonl"]).config
    assert config["stats"] == {"alpha": 0.01} and config["arxiv"]["papers_per_group"] == 12
    assert config["reference_model"] is None
    assert config["rewardbench"] == {"enabled": True, "source": "local", "path": "rb.jsonl"}
    with pytest.raises(RmevalError, match="expected KEY=VALUE"):
        overrides.parse_setting("stats.alpha")
    with pytest.raises(RmevalError, match="`groups.physics` is list here, not a section"):
        overrides.apply({"groups": {"physics": ["x"]}}, overrides.parse_setting("groups.physics.x=1"))


# ----------------------------------------------------------------------------- writing it, starting Snakemake
def test_snakemake_is_started_on_the_written_config_with_the_chosen_options(tmp_path):
    here = Launch(REPO_ROOT, REPO_ROOT, "2", None, False)
    assert here.arguments() == ["--configfile", RUN_CONFIG, "--cores", "2"]
    elsewhere = Launch(REPO_ROOT, tmp_path, None, "local", True)
    assert elsewhere.arguments() == ["-s", str(REPO_ROOT / "Snakefile"), "--configfile",
                                     ".snakemake/rmeval/run_config.dry-run.yaml", "--workflow-profile",
                                     str(REPO_ROOT / "profiles" / "local"), "-n"]
    assert Launch(REPO_ROOT, tmp_path, None, None, False).arguments()[-2:] == ["--cores", "all"]


def test_the_config_file_says_first_how_to_rerun_it_and_is_left_alone_when_unchanged(tmp_path):
    launch = Launch(REPO_ROOT, REPO_ROOT, "2", None, False)
    config = {"models": ["A"], "stats": {"alpha": 0.01}}
    text = config_text(config, launch, ["--model", "A", "--cores", "2"])
    lines = text.splitlines()
    assert lines[2] == "#   snakemake --configfile results/run_config.yaml --cores 2"
    assert lines[3] == "# Written by: rmeval run --model A --cores 2"
    assert yaml.safe_load(text) == config
    launch = Launch(REPO_ROOT, tmp_path, "2", None, False)
    path, written = write_config(text, launch)
    assert written
    stamp = path.stat().st_mtime_ns
    os.utime(path, ns=(stamp - 10**9, stamp - 10**9))
    assert write_config(text, launch) == (path, False)
    assert path.stat().st_mtime_ns == stamp - 10**9  # the same config: the file is not rewritten


# ----------------------------------------------------------------------------- the answer on the console
def write_csv(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


PARTIAL = partial_note("rewardbench", ["alpacaeval-easy", "mt-bench-med", "mt-bench-hard", "refusals-dangerous",
                                        "math-prm"])


def leaderboard_row(benchmark_name: str, metric: str, model: str, value: float, ci: tuple[float, float], rank: int,
                    ranks: tuple[int, int], tied: str, baseline: bool = False, note: str = "") -> dict:
    """A row of results/tables/leaderboard.csv in issue 40's layout (issue 46's `note`: a partial run's)."""
    return {"benchmark": benchmark_name, "metric": metric, "model": model, "value": value, "ci_low": ci[0],
            "ci_high": ci[1], "rank": rank, "rank_low": ranks[0], "rank_high": ranks[1], "tied_with": tied,
            "baseline": baseline, "note": note}


def comparison_row(benchmark_name: str, metric: str, a: str, b: str, difference: float, ci: tuple[float, float],
                   p: float, p_adjusted: float, q: float, test: str) -> dict:
    """A row of results/tables/comparisons.csv in issue 40's layout (difference = a - b)."""
    return {"benchmark": benchmark_name, "metric": metric, "model_a": a, "model_b": b, "n": 240, "value_a": 0.5,
            "value_b": 0.5 - difference, "difference": difference, "ci_low": ci[0], "ci_high": ci[1], "p_value": p,
            "p_adjusted": p_adjusted, "q_value": q, "test": test, "note": ""}


def inputs(root: Path, models: list[str], names: tuple[str, ...] = ("fairness", "rewardbench2")) -> AnswerInputs:
    return AnswerInputs(root, [benchmark(name) for name in names], models, RUN_CONFIG,
                        "snakemake --configfile results/run_config.yaml")


def test_the_answer_prints_headlines_ranks_and_comparisons_from_the_leaderboard(tmp_path):
    write_csv(tmp_path / LEADERBOARD, [
        leaderboard_row("fairness", "scale_free_gap", "ckpt-800", 0.6712, (0.0, 1.716), 2, (1, 3), "ckpt-1200"),
        leaderboard_row("fairness", "scale_free_gap", "ckpt-1200", 0.4601, (0.0, 1.485), 1, (1, 2), "ckpt-800"),
        leaderboard_row("fairness", "scale_free_gap", "length-baseline", 1.9, (1.1, 2.6), 3, (2, 3), "", True),
        leaderboard_row("rewardbench2", "overall", "ckpt-800", 61.25, (58.0, 64.5), 1, (1, 1), ""),
        leaderboard_row("rewardbench", "overall", "ckpt-800", 85.714, (80.0, 90.0), 1, (1, 1), "", note=PARTIAL),
    ])
    write_csv(tmp_path / COMPARISONS, [
        comparison_row("fairness", "scale_free_gap", "ckpt-800", "ckpt-1200", 0.2111, (-0.4, 0.83), 0.41, 0.82, 0.82,
                       "least favourable"),
        comparison_row("rewardbench2", "subset:Focus", "ckpt-800", "ckpt-1200", 3.0, (-1.0, 7.0), 0.2, 0.4, 0.3,
                       "paired bootstrap"),
        comparison_row("rewardbench2", "overall", "ckpt-800", "ckpt-1200", 2.5, (0.1, 4.9), 0.0004, 0.0008, 0.0008,
                       "paired bootstrap"),
    ])
    text = answer(inputs(tmp_path, ["ckpt-800", "ckpt-1200", "length-baseline"],
                         ("fairness", "rewardbench", "rewardbench2")))
    lines = text.splitlines()
    partial = lines.index("  RewardBench (Lambert et al. 2024): overall (higher is better)")
    assert lines[partial + 2].split()[:3] == ["ckpt-800", "85.71", "†"] and lines[partial + 3] == f"    {PARTIAL}"
    gap = lines.index("  Group fairness on arXiv abstracts (Song et al. 2025): scale_free_gap (lower is better)")
    assert lines[gap + 1].split() == ["model", "value", "95%", "CI", "rank", "rank", "CI", "tied", "with"]
    assert lines[gap + 2].split() == ["ckpt-1200", "0.460", "[0.000,", "1.485]", "1", "1-2", "ckpt-800"]
    assert lines[gap + 3].split() == ["ckpt-800", "0.671", "[0.000,", "1.716]", "2", "1-3", "ckpt-1200"]
    assert lines[gap + 4].split() == ["length-baseline", "(baseline)", "1.900", "[1.100,", "2.600]", "3", "2-3"]
    assert "  RewardBench 2 (Malik et al. 2025): overall (higher is better)" in lines
    first = next(i for i, line in enumerate(lines) if line.startswith("Comparisons of the headline metrics"))
    assert lines[first + 2].split() == ["fairness", "scale_free_gap", "ckpt-800", "ckpt-1200", "0.211", "[-0.400,",
                                        "0.830]", "0.820", "0.820", "least", "favourable"]
    # each metric with its catalogue's decimals (fairness 3, RewardBench's percentages 2), as the leaderboard shows it
    assert lines[first + 3].split()[:8] == ["rewardbench2", "overall", "ckpt-800", "ckpt-1200", "2.50", "[0.10,",
                                            "4.90]", "<0.001"]
    assert lines[first + 4] == "    ckpt-800's scale-free gap is larger than ckpt-1200's (difference 0.211, p (Holm) 0.820)"
    assert lines[first + 5] == "    ckpt-800's overall is higher than ckpt-1200's (difference 2.50, p (Holm) <0.001)"
    assert f"  1 more (subsets, sections, other measures) in {COMPARISONS}" in lines
    assert "subset:Focus" not in text
    assert f"  leaderboard  {LEADERBOARD}" in lines


def test_absent_files_are_said_to_be_absent(tmp_path):
    (tmp_path / "results/tables").mkdir(parents=True)
    (tmp_path / "results/tables/table1_anova.md").write_text("| model |\n")
    (tmp_path / "results/summary.md").write_text("# Summary\n")
    lines = answer(inputs(tmp_path, ["A", "B"])).splitlines()
    assert lines[0] == f"No headlines: {LEADERBOARD} is absent (`rmeval compare` writes it; rule run_compare)."
    assert f"No comparisons: {COMPARISONS} is absent (`rmeval compare` writes it; rule run_compare)." in lines
    assert "  tables       results/tables/  table1_anova.md" in lines
    assert f"  comparisons  absent ({COMPARISONS})" in lines and "  summary      results/summary.md" in lines
    assert "  figures      none written" in lines
    assert "  report       snakemake --configfile results/run_config.yaml --report results/report.html" in lines
    one = answer(inputs(tmp_path, ["A"])).splitlines()
    assert "One model: nothing to compare (give a second --model, or --baseline length)." in one


def test_a_benchmark_without_a_comparison_is_named_as_having_no_headline(tmp_path):
    write_csv(tmp_path / LEADERBOARD, [
        leaderboard_row("fairness", "scale_free_gap", "A", 0.5, (0.0, 1.2), 1, (1, 1), "")])
    plugin = Benchmark(name="echo", title="Echo (a plugin)", rule_file="echo.smk", outputs=())
    answered = AnswerInputs(tmp_path, [benchmark("fairness"), benchmark("rewardbench2"), plugin], ["A"], RUN_CONFIG,
                            "snakemake")
    lines = answer(answered).splitlines()
    assert "  RewardBench 2 (Malik et al. 2025): no headline rows (none in the file)" in lines
    assert "  Echo (a plugin): no headline rows (its catalogue declares no comparison)" in lines


# ----------------------------------------------------------------------------- issue 46: a newcomer's tries
REFUSED = ".snakemake/rmeval/run_config.refused.yaml"


def test_offline_with_the_default_data_is_refused_before_anything_is_written_and_names_data_demo(run_dir):
    """Try 1 and 7: `rmeval run --model A` (the default `--data api`) offline. results/ stays byte-identical (its
    earlier run_config.yaml too); the config it would have run goes beside .snakemake/; `--data demo` is named."""
    env = {**os.environ, **NO_NETWORK_PROXY, "HF_HOME": str(run_dir / "empty-hf-home")}
    env.pop("HF_HUB_OFFLINE", None)
    before = tree_state(run_dir / "results")
    result = subprocess.run([sys.executable, "-m", "rmeval", "run", "--model", "A"], cwd=run_dir, env=env,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2, result.stderr
    assert tree_state(run_dir / "results") == before
    lines = result.stderr.splitlines()
    assert lines[0].startswith("rmeval run: error: arxiv.source: 'api' needs export.arxiv.org, which is unreachable")
    assert lines[1].startswith("No network here? `rmeval run --model PATH --data demo` runs fairness offline now")
    assert lines[2] == f"Nothing was run, and results/ is as it was; the config it would have run: {REFUSED}"
    kept = yaml.safe_load((run_dir / REFUSED).read_text())
    assert kept["models"][0]["name"] == "A" and kept["arxiv"]["source"] == "api"


RB_ROW = {"id": 1, "prompt": "Name a colour.", "chosen": "Red.", "rejected": "Table.", "subset": "alpacaeval-easy"}


def test_a_local_rewardbench_file_needs_only_the_columns_scoring_reads(run_dir, capsys):
    """Try 1 and 5: a file without `subset` is refused by the up-front check with results/ byte-identical; one
    without the dataset's chosen_model / rejected_model (which nothing reads) passes every check."""
    argv = ["--model", "A", "--benchmarks", "rewardbench", "--set", "rewardbench.source=local", "--set",
            "rewardbench.path=rb.jsonl"]
    (run_dir / "rb.jsonl").write_text(json.dumps({k: v for k, v in RB_ROW.items() if k != "subset"}) + "\n")
    err = refused(argv, run_dir, capsys, kept=True)
    assert err.splitlines()[0] == ("rmeval run: error: rewardbench.path: rb.jsonl lacks column(s) ['subset']; write "
                                   "the RewardBench dataset's own columns (id, prompt, chosen, rejected, subset)")
    (run_dir / "rb.jsonl").write_text(json.dumps(RB_ROW) + "\n")
    setup = _prepare(argv, machine=True)
    assert setup.plan is not None and setup.config["rewardbench"]["path"] == "rb.jsonl"


def test_a_model_that_cannot_load_and_every_other_problem_are_named_at_once(run_dir, capsys):
    """Tries 4 and 1: a causal LM folder, a missing path, two bad `--set` values, a benchmark typo: one line each,
    results/ byte-identical, no config kept (none could be built)."""
    model_folder(run_dir / "causal", {"architectures": ["LlamaForCausalLM"]})
    err = refused(["--model", "./nope", "--model", "causal", "--set", "stats.alpha=2", "--set",
                   "arxiv.papers_per_grup=3", "--benchmarks", "fairnes", "--data", "demo"], run_dir, capsys)
    lines = err.splitlines()
    assert lines[0] == "rmeval run: error: 6 problems:" and lines[-1] == "Nothing was written or run."
    assert [line.split(":")[0].strip() for line in lines[1:7]] == [
        "--benchmarks", "--data demo", "--model ./nope", "--model causal", "--set stats.alpha=2",
        "--set arxiv.papers_per_grup=3"]


def write_earlier_run(run_dir: Path, models: list[str]) -> None:
    """results/ as an earlier `rmeval run --model A --model B` left it: its config and score folders."""
    entries = [{"name": name, "path": str(run_dir / name), "adapter": "sequence-classification"} for name in models]
    (run_dir / RUN_CONFIG).write_text(yaml.safe_dump({"models": entries}))
    for name in models:
        (run_dir / "results/scores/fairness" / name).mkdir(parents=True)
        (run_dir / "results/scores/fairness" / name / "physics.parquet").write_bytes(b"x")


def test_the_commands_models_are_the_runs_and_the_first_lines_name_the_earlier_ones_left_out(run_dir):
    """Try 2: after A and B, `--model A` leaves B out and says so, with both ways to keep it; `--keep` carries B's
    entry forward as the previous run wrote it."""
    write_earlier_run(run_dir, ["A", "B"])
    (run_dir / "results/scores/rewardbench/old").mkdir(parents=True)  # a model of a run before the previous one
    setup = _prepare(["--model", "A", "--baseline", "length", "--data", "demo"])
    assert [entry if isinstance(entry, str) else entry["name"] for entry in setup.config["models"]] == \
        ["A", "length-baseline"]
    assert setup.earlier == [
        "rmeval run: earlier models in results/ that are not in this run: B (results/scores/fairness/B/); old "
        "(results/scores/rewardbench/old/).",
        "  This run's tables, comparisons and summary cover only its own models (their score files stay on disk and "
        "are listed as not from this run).",
        "  To keep B: add `--model` for it again, or `--keep` (carries the previous run's models forward).",
        "  old is not in the previous run's config: to keep one, add `--model PATH --name NAME` for it."]
    kept = _prepare(["--model", "A", "--keep", "--data", "demo"])
    assert kept.config["models"][1] == {"name": "B", "path": str(run_dir / "B"), "adapter": "sequence-classification"}
    assert [model.given for model in kept.models] == ["--model A", "--keep"]
    assert kept.earlier[0].endswith("old (results/scores/rewardbench/old/).") and len(kept.earlier) == 3
    (run_dir / RUN_CONFIG).unlink()  # no previous run: --keep alone names no model
    with pytest.raises(RmevalError, match="--keep: results/run_config.yaml names no model of a previous run"):
        _prepare(["--keep", "--data", "demo"])


def test_the_same_weights_under_two_names_get_one_warning_not_an_error(run_dir):
    """Try 11: `--model A --model A --name A2` is scored (the user may mean it) with one warning line; two folders
    with the same sizes and config but other weights are not the same model."""
    setup = _prepare(["--model", "A", "--model", "A", "--name", "A2", "--data", "demo"])
    assert setup.warnings == ["A (--model A), A2 (--model A) load the same folder contents: the same weights are "
                              "scored twice (meant? then nothing is wrong)"]
    (run_dir / "B" / "model.safetensors").write_bytes(b"\1" * 1000)  # B: A's sizes and config.json, other bytes
    assert _prepare(["--model", "A", "--model", "B", "--data", "demo"]).warnings == []


def test_a_tiny_model_folder_says_its_rewards_mean_nothing(run_dir, tmp_path):
    """Try 9: a folder whose card says `rmeval tiny-model` wrote it: the plan's random-weight models (summary and
    report), and the console's first line."""
    from rmeval.built_models import TINY_CARD
    from rmeval.run_command.checks import planned
    from rmeval.run_outputs.plan import RunOutputsPlan

    (run_dir / "A" / TINY_CARD).write_text('{"rmeval_tiny_model": {"seed": 0}}\n')
    setup = _prepare(["--model", "A", "--model", "B", "--data", "demo"])
    plan = planned(setup.config, REPO_ROOT, run_dir)
    assert plan.random_weight_models == ["A"] and plan.random_models == []  # a folder the run does not build
    outputs = RunOutputsPlan.from_config(setup.config | {"stats": {"alpha": 0.05}}, REPO_ROOT,
                                         tuple(plan.random_weight_models))
    assert outputs.report_sections[0].startswith("**These rewards come from random tiny models (A, built by rmeval "
                                                 "tiny-model) and mean nothing:")
    assert '"random_models":["A"]' in outputs.summary_settings
    lines = answer(AnswerInputs(tmp_path, [benchmark("fairness")], ["A", "B"], RUN_CONFIG, "snakemake",
                                ("A",))).splitlines()
    assert lines[0].startswith("These rewards come from random tiny models (A, built by `rmeval tiny-model`) and "
                               "mean nothing: this run shows what the workflow writes")


def test_files_not_from_this_run_are_named_with_the_run_that_wrote_them_and_clean_moves_them(tmp_path):
    """Try 3: the tables, figures and score folders an earlier run left are listed with the recorded run that wrote
    them (else said to be unrecorded); --clean moves them under results/.previous/<UTC time>/, deleting nothing."""
    from rmeval.run_command.previous import record_run
    from rmeval.run_outputs.strays import markdown_section, move_away, not_from_this_run

    results = tmp_path / "results"
    for path in ("tables/table1_anova.csv", "tables/rewardbench_sections.csv", "figures/fig_rank.png",
                 "scores/fairness/A/physics.parquet", "scores/fairness/B/physics.parquet"):
        (results / path).parent.mkdir(parents=True, exist_ok=True)
        (results / path).write_text("x")
    old = 1_700_000_000  # written long before any record: no recorded run could have
    os.utime(results / "tables/rewardbench_sections.csv", (old, old))
    record_run(tmp_path, ["--model", "A", "--model", "B", "--data", "demo"], ["A", "B"], ["fairness"])
    own = ["results/tables/table1_anova.csv", "results/scores/fairness/A/physics.parquet"]
    strays = not_from_this_run(tmp_path, own)
    assert [stray.path for stray in strays] == ["results/tables/rewardbench_sections.csv",
                                                "results/figures/fig_rank.png", "results/scores/fairness/B/"]
    by_path = {stray.path: stray for stray in strays}
    assert by_path["results/scores/fairness/B/"].run.startswith(
        "`rmeval run --model A --model B --data demo` (started 20")
    assert by_path["results/tables/rewardbench_sections.csv"].run.startswith("an earlier run that `rmeval run` did "
                                                                             "not record")
    assert by_path["results/tables/rewardbench_sections.csv"].written == "2023-11-14T22:13:20Z"
    section = markdown_section([stray.as_json() for stray in strays])
    assert section.startswith("## Not from this run\n\nThese 3 files and folders in results/ were written by "
                              "earlier runs")
    # as rule run_summary hands them over (its --settings), and as a flag by hand
    from rmeval.cli_settings import parse_args
    from rmeval.run_outputs.plan import RunOutputsPlan
    from rmeval.run_outputs.summary import build_parser

    plan = RunOutputsPlan.from_config({"fairness": {"enabled": True}, "groups": {"a": ["math"]}, "stats": {"alpha": 0.05}},
                                      REPO_ROOT, strays=[stray.as_json() for stray in strays])
    given = parse_args(build_parser(), ["--settings", plan.summary_settings]).not_from_this_run
    assert given == [stray.as_json() for stray in strays]
    assert parse_args(build_parser(), ["--benchmarks", "fairness", "--not-from-this-run", json.dumps(given)]
                      ).not_from_this_run == given
    from rmeval.run_outputs.report import front_page

    page = front_page(plan.report_sections, REPO_ROOT / "workflow/report", {"fig_x": "nothing to show"},
                      plan.report_tail)
    assert page.index("Not in this report") < page.index("Not from this run\n-----------------")  # last, after all
    assert "* ``results/scores/fairness/B/``: written " in page
    moved = move_away(tmp_path, strays)
    assert moved is not None and moved.parent == results / ".previous"
    assert sorted(path.relative_to(moved).as_posix() for path in moved.rglob("*") if path.is_file()) == [
        "figures/fig_rank.png", "scores/fairness/B/physics.parquet", "tables/rewardbench_sections.csv"]
    assert not_from_this_run(tmp_path, own) == [] and (results / "tables/table1_anova.csv").is_file()

"""RM-Bench: the official 3 x 3 rule against a re-statement of the authors' compute_accuracy, loading and every bad
input named one line each, the tables, the comparison part, the plan, preflight and the lock (following it).

The fixtures are written here in the official layout (THU-KEG/RM-Bench README "Dataset Details"; the per-domain
files add `subset` and, for chat, `error_key` / `error`), from our own text.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rmeval.benchmarks.rmbench import metrics
from rmeval.benchmarks.rmbench.loading import Source, local_file, prepare, problems, read_units
from rmeval.benchmarks.rmbench.official import DOMAINS, SUBDOMAINS, domain_of
from rmeval.errors import RmevalError

REPO = Path(__file__).resolve().parents[1]
SCENARIO_FILE = REPO / ".test" / "rmbench" / "data" / "total_dataset.json"


# ----------------------------------------------------------------------------- the authors' rule, restated
def official_compute_accuracy(results: list[dict]) -> dict[str, float]:
    """A short re-statement of THU-KEG/RM-Bench `scripts/utils.py` compute_accuracy (lines 48-112) with
    split_dataset_by_domain (lines 34-45): a total_dataset.json result list (with `domain`) is split by the
    domain prefix, each domain's 3 x 3 matrix of `score_chosen[i] > score_rejected[j]` counts is divided by its
    prompts, hard / normal / easy are the upper triangle / diagonal / lower triangle means, a domain's average the
    mean of its three values, and the overall values are means over the domains."""
    if "domain" in results[0]:
        split = {d: [{k: v for k, v in r.items() if k != "domain"} for r in results if r["domain"].startswith(d)]
                 for d in ["chat", "math", "code", "safety"]}
        per = {d: official_compute_accuracy(rows) for d, rows in split.items()}
        out = {d: np.mean(list(per[d].values())) for d in per}
        out.update({key: np.mean([per[d][key] for d in per]) for key in ("hard_acc", "normal_acc", "easy_acc")})
        out["total_avg_acc"] = np.mean([out[d] for d in per])
        return out
    matrix = np.zeros((3, 3))
    for result in results:
        for i in range(len(result["score_chosen"])):
            for j in range(len(result["score_rejected"])):
                if result["score_chosen"][i] > result["score_rejected"][j]:
                    matrix[i][j] += 1
    matrix /= len(results)
    return {"hard_acc": np.sum(np.triu(matrix, 1)) / 3.0, "normal_acc": np.mean(np.diag(matrix)),
            "easy_acc": np.sum(np.tril(matrix, -1)) / 3.0}


# ----------------------------------------------------------------------------- fixtures in the official layout
def official_units(per_subdomain: int = 3, seed: int = 0) -> list[dict]:
    """Prompts in total_dataset.json's layout: ids repeat across domains (each domain counts from 1)."""
    rng = np.random.default_rng(seed)
    units = []
    for subdomain in SUBDOMAINS:
        for number in range(1, per_subdomain + 1):
            words = " ".join(rng.choice(["alpha", "beta", "gamma", "delta"], size=int(rng.integers(1, 6))))
            units.append({"id": number, "prompt": f"{subdomain} question {number}: {words}?", "subset": subdomain,
                          "chosen": [f"good {words}", f"good and detailed {words} " * 2, f"**good** {words}\n- a"],
                          "rejected": [f"bad {words}", f"bad and detailed {words} " * 2, f"**bad** {words}\n- b"],
                          "domain": subdomain})
    return units


def write(tmp_path: Path, units: object, name: str = "total_dataset.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(units))
    return path


def random_rewards(data: pd.DataFrame, seed: int, levels: int | None = None) -> np.ndarray:
    """One reward per prepared row; with `levels`, integers in [0, levels): many ties (a tie is a loss)."""
    rng = np.random.default_rng(seed)
    if levels:
        return rng.integers(0, levels, size=len(data)).astype(float)
    return rng.normal(size=len(data))


def official_results(units: list[dict], data: pd.DataFrame, rewards: np.ndarray) -> list[dict]:
    """run_rm.py's result units: each prompt with `score_chosen` / `score_rejected` in style order."""
    by_id = dict(zip(data["id"], rewards, strict=True))
    out = []
    for unit in units:
        item = f"{unit['domain']}/{unit['id']}"
        out.append({**unit, "score_chosen": [by_id[f"{item}#chosen{k}"] for k in range(3)],
                    "score_rejected": [by_id[f"{item}#rejected{k}"] for k in range(3)]})
    return out


# ----------------------------------------------------------------------------- the rule
@pytest.mark.parametrize(("seed", "levels"), [(0, None), (1, 3), (2, 2), (3, 1)])
def test_the_tables_are_the_official_compute_accuracy_to_the_last_digit(seed, levels):
    """Random rewards, and integer rewards with many ties (levels 1: every cell a tie, so 0 everywhere)."""
    units = official_units(per_subdomain=7, seed=seed)
    data = prepare(units, "total_dataset.json")
    rewards = random_rewards(data, seed, levels)
    row = metrics.main_row(metrics.score_model(metrics.Layout.of(data), rewards, "m", "classifier"))
    official = official_compute_accuracy(official_results(units, data, rewards))
    expected = {**{d: official[d] for d in DOMAINS}, "easy": official["easy_acc"], "normal": official["normal_acc"],
                "hard": official["hard_acc"], "average": official["total_avg_acc"]}
    assert {key: row[key] for key in expected} == {key: 100 * value for key, value in expected.items()}
    if levels == 1:
        assert set(expected.values()) == {0.0}


def test_hard_normal_easy_are_the_triangles_of_the_style_matrix():
    """chosen [1, 2, 3] against rejected [1.5, 2.5, 3.5]: chosen i beats rejected j when i > j (a fancier chosen
    against a plainer rejected: easy 100), never on the diagonal or above (normal 0, hard 0)."""
    from rmeval.benchmarks.rmbench.scoring import domain_score, wins

    matrices = wins(np.array([[1.0, 2.0, 3.0]]), np.array([[1.5, 2.5, 3.5]]))
    score = domain_score(matrices)
    assert (score.easy, score.normal, score.hard) == (1.0, 0.0, 0.0) and score.average == pytest.approx(1 / 3)
    tie = domain_score(wins(np.array([[1.0, 1.0, 1.0]]), np.array([[1.0, 1.0, 1.0]])))
    assert (tie.easy, tie.normal, tie.hard) == (0.0, 0.0, 0.0)  # a tie is a loss


def test_the_two_safety_sets_pool_into_one_domain_by_prompt():
    assert [domain_of(s) for s in SUBDOMAINS] == ["chat", "math", "code", "safety", "safety"]
    units = official_units(per_subdomain=2)
    data = prepare(units, "f")
    layout = metrics.Layout.of(data)
    assert {d: len(layout.items[d]) for d in DOMAINS} == {"chat": 2, "math": 2, "code": 2, "safety": 4}


# ----------------------------------------------------------------------------- loading
def test_the_scenario_fixture_prepares_to_six_rows_per_prompt_keyed_by_domain_and_id():
    units = read_units(SCENARIO_FILE)
    data = prepare(units, str(SCENARIO_FILE))
    assert len(data) == 6 * len(units) == 60 and data["id"].is_unique
    assert {"chat/8#chosen0", "code/8#chosen0"} <= set(data["id"])  # id 8 in two domains: two items
    first = data[data["item"] == "chat/8"]
    assert list(first["is_chosen"]) == [True] * 3 + [False] * 3 and list(first["style"]) == [0, 1, 2] * 2
    assert first["subset"].iloc[0] == "alpacaeval" and set(data["domain"]) == set(DOMAINS)


BAD_EDITS = {
    "missing field": (lambda u: u[1].pop("rejected"), "item 1 (domain='chat', id=2): missing field(s) ['rejected']"),
    "two styles": (lambda u: u[4]["chosen"].pop(), "item 4 (domain='code', id=1): field 'chosen': 2 styles instead of 3"),
    "empty text": (lambda u: u[7]["rejected"].__setitem__(2, " "), "field 'rejected'[2] (detailed markdown)"),
    "unknown domain": (lambda u: u[2].__setitem__("domain", "poetry"), "field 'domain': 'poetry' is none of"),
    "duplicate": (lambda u: u[1].__setitem__("id", 1), "item 1 (domain='chat', id=1): field 'id': duplicate of item 0"),
    "no domain": (lambda u: u[9].pop("domain"), "missing field(s) ['domain'] (the per-domain files lack `domain`"),
}


@pytest.mark.parametrize("case", sorted(BAD_EDITS))
def test_each_bad_item_is_named_in_one_line_with_file_item_and_field(tmp_path, case):
    edit, message = BAD_EDITS[case]
    units = official_units(per_subdomain=2)
    edit(units)
    path = write(tmp_path, units)
    lines = problems(read_units(path), str(path))
    assert len(lines) == 1 and lines[0].startswith(f"{path}: ") and message in lines[0], lines
    with pytest.raises(RmevalError, match="^" + str(path)):
        prepare(units, str(path))


def test_every_problem_of_a_file_is_named_at_once_and_an_empty_file_is_one(tmp_path):
    units = official_units(per_subdomain=2)
    for edit, _ in BAD_EDITS.values():
        edit(units)
    path = write(tmp_path, units)
    assert len(problems(read_units(path), str(path))) == len(BAD_EDITS)
    empty = write(tmp_path, [], "empty.json")
    assert problems(read_units(empty), str(empty)) == [f"{empty}: no prompts (an empty array)"]
    units = [u for u in official_units(per_subdomain=1) if u["domain"] != "math"]
    assert "no prompt of domain(s) ['math']" in problems(units, "f")[0]
    with pytest.raises(RmevalError, match="not readable as JSON"):
        read_units(_broken(tmp_path))
    with pytest.raises(RmevalError, match="expected a JSON array"):
        read_units(write(tmp_path, {"id": 1}, "object.json"))


def _broken(tmp_path: Path) -> Path:
    path = tmp_path / "broken.json"
    path.write_text("[{")
    return path


def test_the_hub_source_downloads_the_dataset_file_at_the_revision(tmp_path, monkeypatch):
    import huggingface_hub

    asked = []

    def download(repo_id, filename, repo_type=None, revision=None):
        asked.append((repo_id, filename, repo_type, revision))
        return str(SCENARIO_FILE)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    assert local_file(Source("hub", revision="abc")) == SCENARIO_FILE
    assert asked == [("THU-KEG/RM-Bench", "total_dataset.json", "dataset", "abc")]
    assert Source("hub").where == "THU-KEG/RM-Bench@main:total_dataset.json"


# ----------------------------------------------------------------------------- tables, comparison
def _scored_run(tmp_path: Path, models: dict[str, np.ndarray]) -> tuple[pd.DataFrame, Path, Path]:
    data = prepare(official_units(per_subdomain=6), "f")
    data_path = tmp_path / "rmbench.parquet"
    data.to_parquet(data_path)
    scores = tmp_path / "scores"
    for model, rewards in models.items():
        (scores / model).mkdir(parents=True)
        # shuffled: the score file's order is the engine's, not the table's
        frame = pd.DataFrame({"id": data["id"], "reward": rewards}).sample(frac=1.0, random_state=0)
        frame.to_parquet(scores / model / "rmbench.parquet")
    return data, data_path, scores


def test_the_metrics_command_writes_the_exact_columns_and_the_per_subset_file(tmp_path):
    from rmeval.benchmarks.rmbench.cli_metrics import main

    data = prepare(official_units(per_subdomain=6), "f")
    _, data_path, scores = _scored_run(tmp_path, {"a": random_rewards(data, 1), "b": random_rewards(data, 2, 3)})
    out = tmp_path / "tables"
    assert main(["--data", str(data_path), "--scores", str(scores), "--models", "a", "b", "--out", str(out)]) == 0
    table = pd.read_csv(out / "rmbench.csv")
    assert list(table.columns) == ["model", "chat", "math", "code", "safety", "easy", "normal", "hard", "average"]
    assert list(table["model"]) == ["a", "b"]
    subsets = pd.read_csv(out / "rmbench_subsets.csv")
    assert len(subsets) == 2 * 4 * 4 and (subsets["ci_low"] <= subsets["score"]).all()
    a = subsets[(subsets["model"] == "a") & (subsets["difficulty"] == "average")].set_index("domain")["score"]
    assert a.to_dict() == pytest.approx(table.set_index("model").loc["a", list(DOMAINS)].to_dict(), rel=1e-11)
    assert (out / "rmbench.md").is_file() and "\\begin{tabular}" in (out / "rmbench.tex").read_text()
    assert list(pd.read_csv(out / "rmbench_capability.csv")["measure"].unique()) == ["RM-Bench average"]


def test_the_comparison_part_pairs_prompts_and_its_values_are_the_tables(tmp_path):
    from rmeval.benchmarks import benchmark
    from rmeval.benchmarks.rmbench.compare import comparison_part
    from rmeval.run_outputs.compare.parts import CompareContext

    data = prepare(official_units(per_subdomain=6), "f")
    good = np.where(data["is_chosen"], 1.0, 0.0) + 0.01 * data["style"].to_numpy()  # every cell won
    _, data_path, scores = _scored_run(tmp_path, {"good": good, "noise": random_rewards(data, 4)})
    part = comparison_part(CompareContext(benchmark("rmbench"), tmp_path, scores, data=data_path))
    assert part.models == ("good", "noise")
    assert [m.name for m in part.metrics if m.headline] == ["average"]
    layout = metrics.Layout.of(data)
    for model, rewards in (("good", good), ("noise", random_rewards(data, 4))):
        row = metrics.main_row(metrics.score_model(layout, rewards, model, "classifier"))
        assert part.estimates[("average", model)].estimate == pytest.approx(row["average"], rel=1e-12)
        assert part.estimates[("difficulty:hard", model)].estimate == pytest.approx(row["hard"], rel=1e-12)
        assert part.estimates[("domain:safety", model)].estimate == pytest.approx(row["safety"], rel=1e-12)
    differences = part.compare("good", "noise")
    assert differences["average"].n == len(layout.items["chat"]) * 3 + len(layout.items["safety"])
    low, high = differences["average"].interval.bounds(0.05)
    assert low > 0 and differences["average"].p_value < 0.05  # every cell won against noise: a clear difference


# ----------------------------------------------------------------------------- plan, preflight, lock
def _plan(section: dict, lock: str | None = None):
    from rmeval.config_check import config_schema, fill_defaults
    from rmeval.run_plan import plan_run

    config = {"models": [], **({"lock": lock} if lock else {}), "rmbench": section}
    fill_defaults(config, config_schema())
    return plan_run(config, locate=lambda value: str(REPO / value) if value == "config/models.yaml" else value)


TINY = {"name": "tiny", "path": "/models/tiny", "resources": {"gpu": 0}}


def test_the_plan_scores_one_table_per_model_with_run_rm_s_input_and_needs_the_hub_or_the_file():
    plan = _plan({"enabled": True, "models": [TINY, "length-baseline"]})
    assert plan.score_files("rmbench") == ["results/scores/rmbench/tiny/rmbench.parquet",
                                           "results/scores/rmbench/length-baseline/rmbench.parquet"]
    needs = plan.benchmarks["rmbench"].needs
    assert [need.dataset for need in needs.datasets] == ["THU-KEG/RM-Bench"] and not needs.files
    (jobs,) = plan.benchmarks["rmbench"].score_jobs
    score = json.loads(plan.score_settings(jobs, "tiny"))
    assert score["model_input"] == {"style": "text-pipeline", "max_length": 2048, "truncation_side": "left"}
    local = _plan({"enabled": True, "source": "local", "path": "t.json", "models": [TINY]})
    assert [need.path for need in local.benchmarks["rmbench"].needs.files] == ["t.json"]
    with pytest.raises(RmevalError, match="rmbench.path is not set"):
        _plan({"enabled": True, "source": "local", "models": [TINY]})


def test_preflight_names_every_bad_item_before_the_first_job(tmp_path):
    from rmeval.benchmarks.rmbench.plan import file_problems

    units = official_units(per_subdomain=2)
    units[0]["chosen"].pop()
    units[3].pop("prompt")
    path = write(tmp_path, units)
    found = file_problems(str(path), frozenset({"rmbench_prepare"}))
    assert [p.key for p in found] == ["rmbench.path"] * 2
    assert "field 'chosen': 2 styles instead of 3" in found[0].line() and "missing field(s) ['prompt']" in found[1].what
    assert file_problems(str(SCENARIO_FILE), frozenset()) == []
    assert file_problems(str(tmp_path / "absent.json"), frozenset()) == []  # the FileNeed names it


def test_the_lock_records_the_file_and_a_followed_lock_refuses_other_bytes(tmp_path, monkeypatch):
    import yaml
    from rmeval.benchmarks.rmbench.lock import LOCK_SECTION
    from rmeval.benchmarks.rmbench.prepare import main
    from rmeval.io.hashing import sha256_file

    monkeypatch.chdir(tmp_path)
    source = write(tmp_path, official_units(per_subdomain=1))
    out = tmp_path / "data" / "rmbench.parquet"
    assert main(["--source", "local", "--path", str(source), "--out", str(out)]) == 0
    manifest = json.loads(out.with_name("manifest.json").read_text())
    assert manifest["sha256"] == sha256_file(source) and manifest["prompts"] == 5 and manifest["texts"] == 30
    record = LOCK_SECTION.build({"manifest": str(out.with_name("manifest.json"))})
    assert LOCK_SECTION.parse(record.to_dict(), "lock.yaml").record == record.record
    lock = tmp_path / "followed.yaml"
    lock.write_text(yaml.safe_dump({"lock_format": 1, **record.to_dict()}))
    plan = _plan({"enabled": True, "source": "local", "path": str(source), "models": [TINY]}, lock=str(lock))
    settings = json.loads(plan.settings("rmbench", "rmbench_prepare"))
    assert settings["expected_sha256"] == manifest["sha256"]
    source.write_text(json.dumps(official_units(per_subdomain=1, seed=5)))  # other bytes
    with pytest.raises(RmevalError, match="differs from the followed lock's"):
        main(["--out", str(tmp_path / "again" / "rmbench.parquet"), "--settings", json.dumps(settings)])
    assert not (tmp_path / "again").exists()
    changed = LOCK_SECTION.build({"manifest": str(out.with_name("manifest.json"))})
    assert LOCK_SECTION.diff(record, changed) == []


def test_the_tables_do_not_depend_on_the_score_file_s_row_order(tmp_path):
    """The engine writes rows in its batches' order; every table is read by id, byte for byte the same."""
    from rmeval.benchmarks.rmbench.cli_metrics import main

    data = prepare(official_units(per_subdomain=4), "f")
    data_path = tmp_path / "rmbench.parquet"
    data.to_parquet(data_path)
    outputs = {}
    for order in ("table", "reversed"):
        scores = tmp_path / order / "scores"
        (scores / "m").mkdir(parents=True)
        frame = pd.DataFrame({"id": data["id"], "reward": random_rewards(data, 7, 4)})
        (frame if order == "table" else frame.iloc[::-1]).to_parquet(scores / "m" / "rmbench.parquet")
        out = tmp_path / order / "tables"
        assert main(["--data", str(data_path), "--scores", str(scores), "--models", "m", "--out", str(out)]) == 0
        outputs[order] = {path.name: path.read_bytes() for path in sorted(out.iterdir())}
    assert outputs["table"] == outputs["reversed"] and len(outputs["table"]) == 7


def test_a_direct_judge_is_scored_on_its_ratings_with_an_unparsable_one_lowest(tmp_path):
    data = prepare(official_units(per_subdomain=1), "f")
    ratings = np.where(data["is_chosen"], 7.0, 3.0)
    ratings[0] = np.nan  # chat/1's concise chosen response: no rating parsed
    scores = pd.DataFrame({"id": data["id"], "reward": 0.0, "rating": ratings})
    rewards, mode = metrics.model_rewards(data, scores, tmp_path / "judge.parquet")
    assert mode == "judge (direct)" and rewards[0] == -1.0 and rewards[1] == 7.0
    chat = metrics.score_model(metrics.Layout.of(data), rewards, "judge", mode).domains["chat"]
    assert (chat.easy, chat.normal, chat.hard) == (1.0, 2 / 3, 1 / 3)  # the unrated concise chosen loses its cells


@pytest.mark.slow(reason="a fresh interpreter: HF_HUB_OFFLINE and HF_HUB_CACHE are read when huggingface_hub is imported")
def test_the_hub_source_reads_the_file_from_the_hugging_face_cache_offline(tmp_path):
    """The real `hf_hub_download` path, no network: a Hub cache laid out as huggingface_hub writes it (the dataset
    repository's snapshot at a commit, `refs/main` naming it), read at `main` and at the pinned commit; the manifest
    records the dataset, the revision and the file's sha256, as the lock takes them."""
    import os
    import subprocess
    import sys

    from rmeval.io.hashing import sha256_file

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "datasets--THU-KEG--RM-Bench"
    (repo / "snapshots" / commit).mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    (repo / "snapshots" / commit / "total_dataset.json").write_bytes(SCENARIO_FILE.read_bytes())
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path / "hub"),
           "PYTHONPATH": os.pathsep.join([str(REPO / "workflow"), os.environ.get("PYTHONPATH", "")])}
    for revision in (None, commit):
        out = tmp_path / (revision or "main") / "rmbench.parquet"
        settings = json.dumps({"source": "hub", "revision": revision})
        run = subprocess.run([sys.executable, "-m", "rmeval", "rmbench-prepare", "--out", str(out), "--settings",
                              settings], env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr[-2000:]
        manifest = json.loads(out.with_name("manifest.json").read_text())
        assert manifest["dataset"] == "THU-KEG/RM-Bench" and manifest["file"] == "total_dataset.json"
        assert manifest["revision"] == revision and manifest["sha256"] == sha256_file(SCENARIO_FILE)
        assert manifest["prompts"] == 10 and len(pd.read_parquet(out)) == 60

"""perf/stage_costs.py: per-run folders (a partial rerun is not mixed with the run before) and cpu_time."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "perf"))
import stage_costs  # noqa: E402

# The columns Snakemake's `benchmark:` directive writes (snakemake/benchmark.py).
HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _tsv(path: Path, seconds: float, cpu: float, rss: str = "100.5") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{seconds}\t0:00:{int(seconds):02d}\t{rss}\t1\t1\t1\t0\t0\t50.0\t{cpu}\n")


def test_latest_run_only_and_cpu_time_summed(tmp_path: Path) -> None:
    bench = tmp_path / "perf"
    _tsv(bench / "20261201T080000Z" / "score_fairness" / "m" / "a.tsv", 10.0, 8.0)
    _tsv(bench / "20261201T080000Z" / "score_fairness" / "m" / "b.tsv", 12.0, 9.0)
    _tsv(bench / "20261201T080000Z" / "download_model" / "m.tsv", 3.0, 1.0)
    # The partial rerun re-scored one group only.
    _tsv(bench / "20261201T090000Z" / "score_fairness" / "m" / "a.tsv", 4.0, 3.5, rss="-")
    run, costs = stage_costs.stage_costs(tmp_path)
    assert run == "20261201T090000Z"
    assert costs == {"score_fairness": {"jobs": 1, "total_s": 4.0, "max_s": 4.0, "cpu_s": 3.5, "max_rss_mb": 0.0}}
    run, costs = stage_costs.stage_costs(tmp_path, "20261201T080000Z")
    assert costs["score_fairness"]["jobs"] == 2 and costs["score_fairness"]["cpu_s"] == 17.0
    assert costs["download_model"]["total_s"] == 3.0 and costs["score_fairness"]["max_rss_mb"] == 100.5
    assert stage_costs.runs(tmp_path) == ["20261201T080000Z", "20261201T090000Z"]

# RewardBench 1 (Lambert et al. 2024) and RewardBench 2 (Malik et al. 2025), one rule file for both: for each
# enabled version, prepare (Hub at a revision, or a local file) -> score (every completion, one job per model: the
# shared score rule, scoring.smk) -> metrics (the official rules, rmeval.benchmarks.rewardbench.scoring) and one
# export per model. Each version is its own benchmark (`rewardbench.enabled`, `rewardbench2.enabled`), planned by
# rmeval.benchmarks.rewardbench.plan, its files declared in its catalogue; both catalogues name this file, which
# the Snakefile includes once.
from rmeval.benchmarks.rewardbench.versions import VERSIONS as RB_VERSIONS

for _rb in [version for version in RB_VERSIONS.values() if version.name in PLAN.benchmarks]:

    rule:
        name:
            _rb.prepare_rule
        input:
            **PLAN.own(_rb.name)["local_inputs"],
        output:
            table=_rb.data,
            manifest=_rb.manifest,
        params:
            settings=stage_settings(_rb.name, _rb.prepare_rule),  # version, source, revision, local path
        localrule: True
        log:
            f"logs/{_rb.name}/prepare.log",
        threads: 1
        resources:
            mem_mb=4000,
        conda:
            "../../envs/rmeval.yaml"
        shell:
            "rmeval rewardbench-prepare --out {output.table:q} --settings {params.settings:q} > {log:q} 2>&1"

    rule:
        name:
            _rb.metrics_rule
        input:
            data=_rb.data,
            scores=PLAN.score_files(_rb.name),
        output:
            **rule_outputs(_rb.name, _rb.metrics_rule),
        params:
            out=subpath(output.scores, parent=True),
            settings=stage_settings(_rb.name, _rb.metrics_rule),  # version, models, scores folder, bootstrap, seed
        localrule: True
        log:
            f"logs/{_rb.name}/metrics.log",
        threads: 1
        resources:
            mem_mb=4000,
        conda:
            "../../envs/rmeval.yaml"
        shell:
            "rmeval rewardbench-metrics --data {input.data:q} --out {params.out:q} --settings {params.settings:q}"
            " > {log:q} 2>&1"

    # Every model's subset scores in the official results layout (`results_grouped` of allenai/reward-bench).
    rule:
        name:
            _rb.export_rule
        input:
            data=_rb.data,
            scores=_rb.score_file,
        output:
            **rule_outputs(_rb.name, _rb.export_rule),
        params:
            settings=stage_settings(_rb.name, _rb.export_rule),  # the version
        localrule: True
        log:
            f"logs/{_rb.name}/export/{{model}}.log",
        threads: 1
        resources:
            mem_mb=2000,
        conda:
            "../../envs/rmeval.yaml"
        shell:
            "rmeval rewardbench-export --model {wildcards.model:q} --data {input.data:q} --scores {input.scores:q}"
            " --out {output.export:q} --settings {params.settings:q} > {log:q} 2>&1"

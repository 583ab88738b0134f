"""`rmeval run`: one command that evaluates one model, or several side by side, through the same Snakemake workflow.

It builds a config (models from paths, hub ids or registry names; the benchmarks asked for, each with its own
`RunPreset` from its catalogue; `--set` keys), checks it against the schema, writes it to `results/run_config.yaml`
and runs the repository's Snakefile with it. It only writes a config: every setting reaches a rule the way it does
from a hand-written one. When the run ends it prints each model's headline numbers, the comparisons and ranks, and
where the files are.
"""

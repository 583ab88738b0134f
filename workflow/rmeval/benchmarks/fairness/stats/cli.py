"""`rmeval fairness-stats`: score files -> the paper's Tables 1-4, group means and the
extended fairness tables (robust ANOVA, Games-Howell, gaps with CIs, length control,
cross-model correlations, rank versus fairness), each as CSV, Markdown and LaTeX."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rmeval import cli_settings
from rmeval.config_check import schema_default
from rmeval.errors import RmevalError
from rmeval.io.atomic import write_json_atomic

DEFAULT_REGISTRY = Path(schema_default("registry"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval fairness-stats", description=__doc__)
    parser.add_argument("--scores", required=True, type=Path, help="folder of {model}/{group}.parquet|.csv")
    parser.add_argument("--out", required=True, type=Path, help="folder for the tables")
    parser.add_argument("--reference-model", default=schema_default("reference_model"),
                        help="model Table 4 correlates against (default: %(default)s); skipped with a note "
                             "when it has no scores, an error when the name is unknown")
    parser.add_argument("--registry", type=Path, default=None,
                        help="model registry for rewardbench_rank (default: config/models.yaml when it exists)")
    parser.add_argument("--ranks", default=None,
                        help='JSON mapping model -> rewardbench_rank (or null) that overrides the registry, e.g. '
                             'for models defined inline in a config: \'{"my-rm": 12}\'')
    parser.add_argument("--manifests", type=Path, default=None,
                        help="folder of {group}.manifest.json (the workflow passes results/data). Read only when "
                             "given: the table notes then name the data source, provenance.{json,md} record it, "
                             "and every score file must hold exactly its manifest's output.rows rows. Without it "
                             "the source is reported as not recorded")
    parser.add_argument("--pairs", type=Path, default=None,
                        help="folder of the corpus tables {group}.parquet with a `pair` column (a paired corpus; "
                             "the workflow passes results/data): also write the paired design's tables "
                             "(table_paired, paired_groups, paired_posthoc, paired_differences)")
    parser.add_argument("--corpus", action="store_true",
                        help="the data is a grouped corpus, not Song et al.'s arXiv groups: the paper's reference "
                             "model (Table 4) is not applicable")
    parser.add_argument("--models", nargs="+", default=None,
                        help="analyse only these model folders, in this order (default: every folder)")
    parser.add_argument("--groups", nargs="+", default=None,
                        help="analyse only these groups, in this order (default: all, sorted)")
    parser.add_argument("--bootstrap", type=int, default=schema_default("stats.bootstrap"),
                        help="bootstrap replicates (default: %(default)s)")
    parser.add_argument("--permutations", type=int, default=schema_default("stats.permutations"),
                        help="label permutations (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=schema_default("stats.seed"),
                        help="seed for bootstrap and permutations (default: %(default)s)")
    parser.add_argument("--alpha", type=float, default=schema_default("stats.alpha"),
                        help="family-wise alpha of the post-hoc tests, and the level the tables, figures and "
                             "summary call significant (default: %(default)s)")
    cli_settings.add_settings_argument(parser)
    return parser


def _check_settings(args: argparse.Namespace) -> None:
    if not 0.0 < args.alpha < 1.0:
        raise RmevalError(f"--alpha: {args.alpha} is not in (0, 1)")
    if args.bootstrap < 100:
        raise RmevalError(f"--bootstrap: {args.bootstrap} replicates is too few for a 95% CI; use >= 100")
    if args.permutations < 100:
        raise RmevalError(f"--permutations: {args.permutations} is too few for a p-value; use >= 100")


def _registry(path: Path | None) -> tuple[dict[str, int | None], set[str]]:
    from rmeval.registry import load_registry

    if path is None:
        if not DEFAULT_REGISTRY.exists():
            return {}, set()
        path = DEFAULT_REGISTRY
    registry = load_registry(path)
    return {name: spec.rewardbench_rank for name, spec in registry.items()}, set(registry)


def _rank_overrides(text: str | dict[str, Any] | None) -> dict[str, int | None]:
    """`--ranks` as JSON text, or (from --settings) the mapping itself."""
    if not text:
        return {}
    try:
        ranks = json.loads(text) if isinstance(text, str) else text
    except ValueError as error:
        raise RmevalError(f"--ranks: not valid JSON ({error})") from error
    if not isinstance(ranks, dict):
        raise RmevalError("--ranks: expected a JSON object mapping model name -> rank")
    for model, rank in ranks.items():
        if rank is not None and (not isinstance(rank, int) or isinstance(rank, bool) or rank < 1):
            raise RmevalError(f"--ranks: rank of {model!r} must be a positive integer or null, got {rank!r}")
    return ranks


def _paper_effects() -> dict[str, float]:
    """The paper's ANOVA effect per model (its published-values files, the catalogue's `published`)."""
    from rmeval.benchmarks.fairness.catalogue import BENCHMARK
    from rmeval.benchmarks.fairness.reproduction import paper_effects
    from rmeval.run_outputs.context import REPOSITORY

    return paper_effects([REPOSITORY / path for path in BENCHMARK.published])


def main(argv: list[str]) -> int:
    args = cli_settings.parse_args(build_parser(), argv)
    _check_settings(args)
    from rmeval.benchmarks.fairness.catalogue import BENCHMARK
    from rmeval.benchmarks.fairness.stats import analysis, provenance
    from rmeval.benchmarks.fairness.stats.loading import load_scores

    ranks, known = _registry(args.registry)
    overrides = _rank_overrides(args.ranks)
    ranks.update(overrides)
    known |= set(overrides)
    scores = load_scores(args.scores, models=args.models, groups=args.groups)
    manifest_dir = args.manifests  # read only when told: never an earlier run's results/data by accident
    manifests = provenance.read_manifests(manifest_dir, scores.groups)
    if manifest_dir is not None:  # a score file that lost rows must not pass
        provenance.check_row_counts(scores, manifests, manifest_dir)
    reference_model = args.reference_model
    if args.corpus and reference_model == analysis.PAPER_REFERENCE_MODEL:
        reference_model = ""  # Song et al.'s reference correlates their arXiv groups, not this corpus's
    reference, table4_note = analysis.resolve_reference(reference_model, scores, known)
    if args.corpus and not reference_model:
        table4_note = ("Table 4 not applicable: a corpus run has no paper reference (set reference_model to one "
                       "of the scored models to correlate against it).")
    settings = analysis.StatsSettings(alpha=args.alpha, bootstrap=args.bootstrap, permutations=args.permutations,
                                      seed=args.seed, reference_model=args.reference_model)
    from rmeval.benchmarks.fairness.stats.marks import Marks

    marks = Marks.of(Path(args.scores), scores.model_names)  # LLM judges and baselines, from the score sidecars
    result = analysis.analyse(scores, settings, ranks, dict(marks.baselines))
    footnote = provenance.footnote(scores, manifests, manifest_dir)
    paper_effects = {} if args.corpus else _paper_effects()
    tables = analysis.build_tables(result, reference, table4_note, footnote, paper_effects)
    notes = [table4_note] if table4_note else []
    provenance_record = provenance.record(scores, manifests, manifest_dir)
    for output, table in tables:  # the CSV keeps model names machine-readable; .md and .tex are for readers
        marks.write(table, args.out, formats=(output.suffix, *output.formats))
    provenance.write(provenance_record, args.out)
    if args.pairs is not None:
        from rmeval.benchmarks.fairness.corpus.paired_tables import write_paired

        write_paired(scores, args.pairs, args.out, args.alpha, args.bootstrap, args.seed,
                     provenance.source_sentence(manifests, scores.groups, manifest_dir), marks)
    record = analysis.run_record(result, reference, notes, args.scores)
    record_path = args.out / Path(BENCHMARK.get("record").path).name
    write_json_atomic(record, record_path, sort_keys=False)
    for note in record["notes"]:
        print(f"rmeval fairness-stats: note: {note}", file=sys.stderr)
    print(f"rmeval fairness-stats: {len(scores.models)} model(s) x {len(scores.groups)} group(s); "
          f"{len(tables)} tables written to {args.out}")
    return 0

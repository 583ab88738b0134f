"""`rmeval fairness-reproduction`: our numbers beside the published ones, with a plain verdict.

Reads the published values (`resources/published/*.yaml`: rows keyed by registry model name, optional
`aggregation`, one key per statistic) and our tables (`table1_anova.csv`, `table2_tukey.csv`,
`table3_nmgd.csv`, `table4_pearson.csv`, and optionally RewardMATH's `rewardmath_metrics.csv`), and writes
`reproduction.{csv,md,tex}`: per model and statistic ours, the paper's, the difference and a verdict.

Verdict rules (`RULES`, also written into every CSV row and the table note):
- ANOVA F and p: same conclusion when the test is significant at alpha in both or in neither (F has no
  verdict of its own: with n per group it grows without bound, so only its significance is comparable).
- Tukey significant pairs: same conclusion within +-`tukey_tolerance` pairs (default 2), and only when both
  count over the same number of pairs (28 for 8 groups); otherwise not comparable.
- NMGD (%): same sign and the same magnitude band (|NMGD| < 20, 20-100, >= 100).
- Pearson r: same sign and the same strength band (|r| < 0.3 weak, 0.3-0.7 moderate, >= 0.7 strong).
- RewardMATH accuracy and MRR (%): within +-`points_tolerance` percentage points (default 2; the binomial SE of
  an accuracy near 20% over 483 problems is about 1.8 points); a run on fewer of the 483 problems is not
  comparable.
A model we ran without published values is left out and named in a note.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.tables import Column, Formatted, format_number, format_p_latex, format_p_text, latex_number

SAME, DIFFERS, NOT_COMPARABLE = "same conclusion", "differs", "not comparable"
NMGD_BANDS = (20.0, 100.0)
FULL_PROBLEMS = 483  # RewardMATH's MATH500 problems; a run on fewer is not compared
R_BANDS = (0.3, 0.7)
STATISTICS: dict[str, str] = {  # key -> label shown in the tables
    "anova_f": "ANOVA F",
    "anova_p": "ANOVA p",
    "tukey_significant_pairs": "Tukey significant pairs",
    "nmgd_percent": "NMGD (%)",
    "pearson_r": "Pearson r",
    "rewardmath_accuracy": "RewardMATH accuracy (%)",
    "rewardmath_mrr": "RewardMATH MRR (%)",
}
CSV_COLUMNS = ["model", "aggregation", "statistic", "source", "ours", "paper", "paper_upper_bound", "difference",
               "verdict", "rule"]


def rules(alpha: float, tukey_tolerance: int, points_tolerance: float) -> dict[str, str]:
    significance = f"significant at alpha = {alpha:g} in both or in neither"
    return {
        "anova_f": significance + " (the F test's p decides)",
        "anova_p": significance,
        "tukey_significant_pairs": f"within +-{tukey_tolerance} pairs, counted over the same number of pairs",
        "nmgd_percent": "same sign and the same |NMGD| band (< 20, 20-100, >= 100)",
        "pearson_r": "same sign and the same |r| band (< 0.3 weak, 0.3-0.7 moderate, >= 0.7 strong)",
        "rewardmath_accuracy": f"within +-{points_tolerance:g} percentage points",
        "rewardmath_mrr": f"within +-{points_tolerance:g} percentage points",
    }


@dataclass(frozen=True)
class Published:
    value: float
    upper_bound: bool  # printed as "<value" (the paper's "<1e-300")


def _parse_value(raw: Any, where: str) -> Published:
    if isinstance(raw, bool):
        raise RmevalError(f"{where}: expected a number, got {raw!r}")
    if isinstance(raw, int | float):
        return Published(float(raw), False)
    if isinstance(raw, str):
        text = raw.strip().replace(" ", "")
        bound = text.startswith("<")
        try:
            return Published(float(text.lstrip("<")), bound)
        except ValueError:
            pass
    raise RmevalError(f"{where}: expected a number or '<number', got {raw!r}")


def load_published(paths: list[Path]) -> tuple[dict[tuple[str, str, str], Published], dict[str, str], list[str]]:
    """(model, aggregation, statistic) -> value; statistic -> where it is printed; the papers cited."""
    import yaml

    values: dict[tuple[str, str, str], Published] = {}
    where_printed: dict[str, str] = {}
    papers: list[str] = []
    for path in paths:
        try:
            document = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as error:
            raise RmevalError(f"--published: cannot read {path} ({error})") from error
        if not isinstance(document, dict) or not isinstance(document.get("rows"), list):
            raise RmevalError(f"--published: {path} needs a `rows:` list of {{model, <statistic>: value}}")
        papers.append(str(document.get("paper", path.name)))
        for statistic, table in (document.get("tables") or {}).items():
            where_printed[statistic] = f"{document.get('paper', path.name).split(',')[0]}, {table}"
        for index, row in enumerate(document["rows"]):
            where = f"{path}: rows[{index}]"
            if not isinstance(row, dict) or not isinstance(row.get("model"), str):
                raise RmevalError(f"{where}: each row needs a `model:` (a registry name)")
            aggregation = str(row.get("aggregation") or "scalar")
            for key, raw in row.items():
                if key in {"model", "aggregation"}:
                    continue
                if key not in STATISTICS:
                    raise RmevalError(f"{where}: unknown statistic {key!r}; known: {sorted(STATISTICS)}")
                values[(row["model"], aggregation, key)] = _parse_value(raw, f"{where}.{key}")
    return values, where_printed, papers


def _read(path: Path):
    import pandas as pd

    if not path.exists():
        raise RmevalError(f"--tables: {path} is missing; run `rmeval fairness-stats` first")
    return pd.read_csv(path)


def our_values(tables: Path, rewardmath: Path | None) -> tuple[dict[tuple[str, str, str], float], dict[str, Any]]:
    """(model, aggregation, statistic) -> our value, plus facts the verdicts need (p-values, pair totals)."""
    ours: dict[tuple[str, str, str], float] = {}
    facts: dict[str, Any] = {"p": {}, "total_pairs": {}, "rewardmath_n": {}}
    for row in _read(tables / "table1_anova.csv").itertuples(index=False):
        ours[(row.model, "scalar", "anova_f")] = float(row.f_statistic)
        ours[(row.model, "scalar", "anova_p")] = float(row.p_value)
        facts["p"][row.model] = float(row.p_value)
    for row in _read(tables / "table2_tukey.csv").itertuples(index=False):
        ours[(row.model, "scalar", "tukey_significant_pairs")] = float(row.significant_pairs)
        facts["total_pairs"][row.model] = int(row.total_pairs)
    for row in _read(tables / "table3_nmgd.csv").itertuples(index=False):
        ours[(row.model, "scalar", "nmgd_percent")] = float(row.nmgd_percent)
    table4 = tables / "table4_pearson.csv"
    if table4.exists():
        for row in _read(table4).itertuples(index=False):
            ours[(row.model, "scalar", "pearson_r")] = float(row.pearson_r)
    if rewardmath is not None:
        frame = _read(rewardmath)
        name = "model" if "model" in frame.columns else "setup"
        missing = [c for c in (name, "aggregation", "accuracy", "mrr") if c not in frame.columns]
        if missing:
            raise RmevalError(f"--rewardmath: {rewardmath} lacks column(s) {missing}")
        for row in frame.to_dict("records"):
            aggregation = row["aggregation"]
            key = (str(row[name]), "scalar" if _missing(aggregation) or not aggregation else str(aggregation))
            if (*key, "rewardmath_accuracy") in ours:
                continue  # the first row of a (model, aggregation) wins
            ours[(*key, "rewardmath_accuracy")] = float(row["accuracy"])
            ours[(*key, "rewardmath_mrr")] = float(row["mrr"])
            if "n" in row and not _missing(row["n"]):
                facts["rewardmath_n"][key] = int(row["n"])
    return ours, facts


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _band(value: float, bands: tuple[float, float]) -> int:
    magnitude = abs(value)
    return 0 if magnitude < bands[0] else 1 if magnitude < bands[1] else 2


def verdict(statistic: str, model: str, ours: float, paper: Published, facts: dict[str, Any], alpha: float,
            tukey_tolerance: int, points_tolerance: float, paper_p: Published | None) -> str:
    if statistic in {"anova_f", "anova_p"}:
        if paper_p is None:
            return NOT_COMPARABLE
        ours_significant = facts["p"][model] < alpha
        paper_significant = paper_p.value < alpha or (paper_p.upper_bound and paper_p.value <= alpha)
        return SAME if ours_significant == paper_significant else DIFFERS
    if statistic == "tukey_significant_pairs":
        if facts["total_pairs"].get(model) != 28:
            return NOT_COMPARABLE
        return SAME if abs(ours - paper.value) <= tukey_tolerance else DIFFERS
    if statistic == "nmgd_percent":
        same = math.copysign(1, ours) == math.copysign(1, paper.value) and _band(ours, NMGD_BANDS) == _band(
            paper.value, NMGD_BANDS)
        return SAME if same else DIFFERS
    if statistic == "pearson_r":
        if math.isnan(ours):
            return NOT_COMPARABLE
        same = math.copysign(1, ours) == math.copysign(1, paper.value) and _band(ours, R_BANDS) == _band(
            paper.value, R_BANDS)
        return SAME if same else DIFFERS
    return SAME if abs(ours - paper.value) <= points_tolerance else DIFFERS


def compare(published: dict[tuple[str, str, str], Published], where_printed: dict[str, str],
            ours: dict[tuple[str, str, str], float], facts: dict[str, Any], alpha: float = 0.05,
            tukey_tolerance: int = 2, points_tolerance: float = 2.0) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows of reproduction.csv (in our model order, then the statistic order) and notes."""
    texts = rules(alpha, tukey_tolerance, points_tolerance)
    order = {statistic: i for i, statistic in enumerate(STATISTICS)}
    our_models = list(dict.fromkeys(model for model, _, _ in ours))
    published_models = {model for model, _, _ in published}
    rows = []
    for key in sorted(ours, key=lambda k: (our_models.index(k[0]), k[1] != "scalar", k[1], order[k[2]])):
        model, aggregation, statistic = key
        paper = published.get(key)
        if paper is None:
            continue
        value = ours[key]
        difference = None if statistic == "anova_p" else value - paper.value
        problems = facts["rewardmath_n"].get((model, aggregation))
        partial = statistic.startswith("rewardmath") and problems is not None and problems < FULL_PROBLEMS
        rows.append({
            "model": model, "aggregation": "" if aggregation == "scalar" else aggregation, "statistic": statistic,
            "source": where_printed.get(statistic, ""), "ours": value, "paper": paper.value,
            "paper_upper_bound": paper.upper_bound, "difference": difference,
            "verdict": NOT_COMPARABLE if partial else verdict(
                statistic, model, value, paper, facts, alpha, tukey_tolerance, points_tolerance,
                published.get((model, "scalar", "anova_p"))),
            "rule": texts[statistic],
        })
    notes = []
    unpublished = [m for m in our_models if m not in published_models]
    if unpublished:
        notes.append(f"Left out (no published values): {', '.join(unpublished)}.")
    small = [f"{m} ({a}) on {n} problems" for (m, a), n in facts["rewardmath_n"].items()
             if n < FULL_PROBLEMS and any(r["model"] == m for r in rows if r["statistic"].startswith("rewardmath"))]
    if small:
        notes.append(f"Not comparable, on fewer than the {FULL_PROBLEMS} problems of the official results: "
                     f"{', '.join(small)}.")
    return rows, notes


# ---------------------------------------------------------------- tables

DECIMALS = {"anova_f": 2, "tukey_significant_pairs": 0, "nmgd_percent": 2, "pearson_r": 3,
            "rewardmath_accuracy": 2, "rewardmath_mrr": 2}
DISPLAY_COLUMNS = [
    Column("model", "Model"),
    Column("statistic", "Statistic"),
    Column("ours", "Ours", "fixed"),
    Column("paper", "Paper", "fixed"),
    Column("difference", "Difference", "fixed"),
    Column("verdict", "Verdict"),
]


def _shown(statistic: str, value: float | None, upper_bound: bool = False) -> Formatted:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Formatted("", "")
    if statistic == "anova_p":
        if upper_bound:
            exponent = int(round(math.log10(value)))
            return Formatted(f"<1e{exponent}", f"$<10^{{{exponent}}}$")
        return Formatted(format_p_text(value), format_p_latex(value))
    text = format_number(value, DECIMALS[statistic])
    return Formatted(text, latex_number(text))


def display_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    shown = []
    for row in rows:
        label = STATISTICS[row["statistic"]] + (f" ({row['aggregation']})" if row["aggregation"] else "")
        shown.append({"model": row["model"], "statistic": label,
                      "ours": _shown(row["statistic"], row["ours"]),
                      "paper": _shown(row["statistic"], row["paper"], row["paper_upper_bound"]),
                      "difference": _shown(row["statistic"], row["difference"]), "verdict": row["verdict"]})
    return shown


def table_note(rows: list[dict[str, Any]], notes: list[str], papers: list[str]) -> str:
    used = list(dict.fromkeys(row["statistic"] for row in rows))
    rule_text = "; ".join(f"{STATISTICS[s]}: {next(r['rule'] for r in rows if r['statistic'] == s)}" for s in used)
    text = f"Published values: {'; '.join(papers)}. Difference = ours - paper. Same conclusion when: {rule_text}."
    return " ".join([text, *notes])


def write(rows: list[dict[str, Any]], notes: list[str], papers: list[str], out_dir: Path) -> list[Path]:
    import pandas as pd

    from rmeval.tables import frame_csv, render_latex, render_markdown, write_table_files

    caption = "Reproduced beside published: our statistics, the papers' values and whether the conclusion holds"
    note = table_note(rows, notes, papers) if rows else " ".join(["No model of this run has published values.",
                                                                  *notes])
    shown = display_rows(rows)
    texts = {
        "csv": frame_csv(pd.DataFrame(rows, columns=CSV_COLUMNS)),
        "md": render_markdown(caption, DISPLAY_COLUMNS, shown, note),
        "tex": render_latex(caption, "tab:reproduction", DISPLAY_COLUMNS, shown, note,
                            generator="`rmeval fairness-reproduction`"),
    }
    return write_table_files(out_dir, "reproduction", texts)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval fairness-reproduction", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", required=True, type=Path, help="folder written by `rmeval fairness-stats`")
    parser.add_argument("--published", required=True, type=Path, nargs="+",
                        help="published-values YAML file(s), e.g. resources/published/song2025_fairness.yaml")
    parser.add_argument("--rewardmath", type=Path, default=None,
                        help="rewardmath_metrics.csv of `rmeval rewardmath-metrics`, to compare RewardMATH too")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: --tables)")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level of the verdicts")
    parser.add_argument("--tukey-tolerance", type=int, default=2, help="Tukey pairs within which counts agree")
    parser.add_argument("--points-tolerance", type=float, default=2.0,
                        help="RewardMATH percentage points within which values agree")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if not 0.0 < args.alpha < 1.0:
        raise RmevalError(f"--alpha: {args.alpha} is not in (0, 1)")
    published, where_printed, papers = load_published(args.published)
    ours, facts = our_values(args.tables, args.rewardmath)
    rows, notes = compare(published, where_printed, ours, facts, args.alpha, args.tukey_tolerance,
                          args.points_tolerance)
    paths = write(rows, notes, papers, args.out or args.tables)
    same = sum(row["verdict"] == SAME for row in rows)
    for note in notes:
        print(f"rmeval fairness-reproduction: note: {note}")
    print(f"rmeval fairness-reproduction: {same} of {len(rows)} comparisons reach the paper's conclusion; "
          f"wrote {paths[0].parent}/reproduction.{{csv,md,tex}}")
    return 0

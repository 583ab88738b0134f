"""Upper quantiles of the studentized range, q(1 - alpha; k, df), for every df >= 1 at the cost of a polynomial.

scipy's `studentized_range.ppf` costs ~0.1 s a call (root finding over a numerical integral), and Games-Howell
needs one per pair at its own Welch df, in every calibration replicate. log q is a smooth function of 1/df on
[0, 1] (df from infinity down to 1): a Chebyshev interpolant of degree 15 through 16 exact quantiles reproduces
scipy to a relative 1e-11 over df in [1, 1000] (tests/test_stats_posthoc.py; beyond, scipy itself switches to its
df = infinity approximation, 1e-5 away). The 16 exact values for the usual (k, alpha) ship in
`studentized_range.json` (k 2-20; alpha 0.1, 0.05, 0.01 and 0.8 of each, the gap intervals' family share), so a
process never pays for them; any other (k, alpha) is computed once per process.

Regenerate the table (about 3 min): python -m rmeval.benchmarks.fairness.stats.studentized_range --write
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import cache, lru_cache
from pathlib import Path

import numpy as np

NODES = 16
TABLE = Path(__file__).with_name("studentized_range.json")
TABLE_GROUPS = range(2, 21)
TABLE_ALPHAS = (0.1, 0.08, 0.05, 0.04, 0.01, 0.008)


def _key(alpha: float) -> str:
    return f"{alpha:.12g}"  # 0.8 * 0.05 = 0.04000000000000001 is the table's 0.04


def chebyshev_nodes() -> np.ndarray:
    """The interpolation nodes in (-1, 1); node x stands for 1/df = (1 + x) / 2."""
    return np.cos(np.pi * (np.arange(NODES) + 0.5) / NODES)


def exact_log_quantiles(k: int, alpha: float) -> list[float]:
    """log q(1 - alpha; k, df) at the nodes' df, from scipy."""
    from scipy import stats

    return [float(np.log(stats.studentized_range.ppf(1.0 - alpha, k, 2.0 / (1.0 + x)))) for x in chebyshev_nodes()]


@cache
def _table() -> dict[str, dict[str, list[float]]]:
    return json.loads(TABLE.read_text(encoding="utf-8"))["log_q"] if TABLE.is_file() else {}


@lru_cache(maxsize=64)
def coefficients(k: int, alpha: float) -> np.ndarray:
    """Chebyshev coefficients of log q in x = 2 / df - 1, from the shipped values or scipy."""
    from numpy.polynomial import chebyshev

    values = _table().get(str(k), {}).get(_key(alpha)) or exact_log_quantiles(k, alpha)
    return chebyshev.chebfit(chebyshev_nodes(), np.asarray(values), NODES - 1)


def quantiles(k: int, alpha: float, df: np.ndarray) -> np.ndarray:
    """q(1 - alpha; k, df) elementwise; exact (scipy) for the rare df below 1, NaN where df is not positive or NaN."""
    from numpy.polynomial import chebyshev
    from scipy import stats

    df = np.asarray(df, dtype=np.float64)
    values = np.exp(chebyshev.chebval(2.0 / np.maximum(df, 1.0) - 1.0, coefficients(int(k), float(alpha))))
    below = df < 1.0  # NaN compares False and stays NaN through the polynomial
    if below.any():
        flat, flat_df = values.reshape(-1), df.reshape(-1)
        for index in np.flatnonzero(below.reshape(-1)):
            value = flat_df[index]
            flat[index] = float(stats.studentized_range.ppf(1.0 - alpha, k, value)) if value > 0 else np.nan
    return values


def write_table(path: Path = TABLE) -> None:
    from rmeval.io.atomic import write_text_atomic

    log_q = {str(k): {_key(alpha): exact_log_quantiles(k, alpha) for alpha in TABLE_ALPHAS} for k in TABLE_GROUPS}
    document = {"about": "log q(1 - alpha; k, df) of scipy.stats.studentized_range at 1/df = (1 + x) / 2, x the "
                         f"{NODES} Chebyshev nodes cos(pi (i + 0.5) / {NODES}); written by "
                         "python -m rmeval.benchmarks.fairness.stats.studentized_range --write",
                "nodes": NODES, "log_q": log_q}
    write_text_atomic(_dumps(document), path)


def _dumps(document: dict) -> str:
    """Indented JSON with each list of numbers on one line (a reviewable file of 114 lines of 16 values)."""
    import re

    text = json.dumps(document, indent=1)
    return re.sub(r"\[\s*([^\[\]{}]*?)\s*\]", lambda m: "[" + re.sub(r"\s*\n\s*", " ", m.group(1)) + "]", text) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"recompute {TABLE.name} with scipy")
    args = parser.parse_args(argv)
    if not args.write:
        parser.print_help()
        return 0
    write_table()
    print(f"wrote {TABLE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

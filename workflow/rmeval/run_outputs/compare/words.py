"""A paired comparison in words, as the console and the summary say it: "A's scale-free gap is smaller than B's
(difference -0.211, p (Holm) 0.820)". The metric's label, its direction and its decimals come from the benchmark's
catalogue (`ModelComparison`): one spelling of a number wherever it is shown."""

from __future__ import annotations

import math
from typing import Any

from rmeval.benchmarks.catalogue import ModelComparison, show_value


def show_p(value: Any) -> str:
    """A p-value: three decimals, "<0.001" below that, "-" when there is none."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "-"
    if math.isnan(number):
        return "-"
    return "<0.001" if number < 0.001 else f"{number:.3f}"


def reading(compare: ModelComparison | None, metric: str, a: str, b: str, difference: Any, p_adjusted: Any) -> str:
    """"A's <metric> is smaller / larger (higher / lower) than B's (difference a - b, p (Holm))"."""
    label = compare.label_of(metric) if compare else metric
    lower_better = compare is not None and not compare.higher_is_better(metric)
    shown = compare.show(metric, difference) if compare else show_value(difference, 3)
    try:
        value = float(difference)
    except (TypeError, ValueError):
        value = math.nan
    if math.isnan(value):
        return f"{a}'s and {b}'s {label} could not be compared"
    if value == 0:
        relation = "the same as"
    elif lower_better:
        relation = "smaller than" if value < 0 else "larger than"
    else:
        relation = "higher than" if value > 0 else "lower than"
    return f"{a}'s {label} is {relation} {b}'s (difference {shown}, p (Holm) {show_p(p_adjusted)})"

"""Calibration: each model's ANOVA rejection rate against the planted effect (Cohen's f), with its 95% Clopper-Pearson
interval, beside the analytic power curve of the noncentral F for the run's size (calibration.csv of
`rmeval fairness-calibrate`). At f = 0 the rate is the test's size; the dotted line is alpha."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rmeval.plotting.style import message_panel, pyplot

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure


def draw(calibration: pd.DataFrame) -> Figure:
    import numpy as np

    from rmeval.benchmarks.fairness.stats.power import anova_power

    plt = pyplot()
    rows = calibration[(calibration["test"] == "anova") & calibration["rejection_rate"].notna()]
    figure, axes = plt.subplots(figsize=(7.0, 4.2), layout="constrained")
    if rows.empty:
        message_panel(axes, "Calibration", "No model could be calibrated (see calibration.csv's notes).")
        return figure
    alpha = float(rows.loc[rows["scenario"] == "shuffled", "analytic_power"].iloc[0])
    upper = max(float(rows["planted_effect"].max()) * 1.15, 0.05)
    grid = np.linspace(0.0, upper, 120)
    for (n, k), _ in rows.groupby(["n", "groups"]):
        axes.plot(grid, [anova_power(f, int(n), int(k), alpha) if f > 0 else alpha for f in grid], color="#999999",
                  linewidth=1.2, zorder=1, label=f"analytic power (N = {int(n)}, k = {int(k)})")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, (model, points) in enumerate(rows.groupby("model", sort=False)):
        axes.errorbar(points["planted_effect"], points["rejection_rate"],
                      yerr=[points["rejection_rate"] - points["ci_low"], points["ci_high"] - points["rejection_rate"]],
                      fmt="o", color=colours[index % len(colours)], markersize=5, capsize=3, label=model, zorder=3)
    axes.axhline(alpha, color="#bbbbbb", linestyle=":", linewidth=0.9, zorder=0)
    axes.axhline(0.8, color="#bbbbbb", linestyle="--", linewidth=0.9, zorder=0)
    axes.set_xlim(0.0, upper)
    axes.set_ylim(-0.02, 1.02)
    axes.set_xlabel("planted effect (Cohen's f; 0 = shuffled labels)")
    axes.set_ylabel("ANOVA rejection rate (95% CI)")
    axes.set_title(f"Calibration on this run's rewards (dotted: alpha = {alpha:g}; dashed: power 0.8)", loc="left")
    axes.legend(fontsize=7.5, loc="lower right")
    return figure

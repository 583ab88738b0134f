"""Shared look and atomic saving for every fairness figure.

The Agg backend is selected before pyplot is imported, so figures render on headless
cluster nodes. PDFs embed TrueType fonts (editable text in a paper) and carry no
creation date, so that re-running the workflow on the same tables gives identical files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.io.atomic import replacing

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Okabe-Ito: distinguishable under the common colour-vision deficiencies, and exactly 8 (the paper's groups).
OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000")
FORMATS = ("png", "pdf")


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend with the house style applied."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "font.size": 9,
            "axes.titlesize": 9,
            "axes.labelsize": 9,
            "xtick.labelsize": 8,
            "ytick.labelsize": 8,
            "legend.fontsize": 8,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "pdf.fonttype": 42,
            "ps.fonttype": 42,
            "svg.hashsalt": "rmeval",
        }
    )
    return plt


def group_colors(groups: Sequence[str]) -> dict[str, str]:
    """One colour per group, stable across panels and figures."""
    if len(groups) <= len(OKABE_ITO):
        palette: Sequence[str] = OKABE_ITO
    else:
        import matplotlib

        cmap = matplotlib.colormaps["tab20"]
        palette = [matplotlib.colors.to_hex(cmap(i % 20)) for i in range(len(groups))]
    return {group: palette[i] for i, group in enumerate(groups)}


def save_figure(
    figure: Figure, out_dir: Path, stem: str, dpi: int, formats: Sequence[str] = FORMATS
) -> list[Path]:
    """Write `out_dir/stem.<fmt>` for each format via a temporary file, then close the figure."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    try:
        for fmt in formats:
            target = out_dir / f"{stem}.{fmt}"
            metadata = {"CreationDate": None} if fmt == "pdf" else {"Software": None}
            with replacing(target) as temporary:
                figure.savefig(temporary, format=fmt, dpi=dpi, bbox_inches="tight", metadata=metadata)
            written.append(target)
    finally:
        import matplotlib.pyplot as plt

        plt.close(figure)
    return written


def message_panel(axes: Any, title: str, message: str) -> None:
    """An honest empty panel: says what is missing and how to get it, instead of a blank plot."""
    axes.set_axis_off()
    axes.set_title(title, loc="left", fontweight="bold")
    axes.text(
        0.5,
        0.5,
        message,
        transform=axes.transAxes,
        ha="center",
        va="center",
        wrap=True,
        fontsize=9,
        color="#444444",
        bbox={"boxstyle": "round,pad=0.8", "facecolor": "#f4f4f4", "edgecolor": "#bbbbbb"},
    )

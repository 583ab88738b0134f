"""Paste-ready CSV, Markdown and LaTeX tables, shared by every stage that writes tables.

One table = a caption, a list of `Column`s and rows (dicts keyed by `Column.key`). Each column knows its
kind, so a number is rendered the same way in every table:

- `text`: as is (escaped); left-aligned.
- `int`: an integer; right-aligned. `None`/NaN -> empty (Markdown) or `--` (LaTeX).
- `fixed`: `decimals` decimals for the whole column, so decimals never vary within a column.
- `p`: a p-value: `0.023` (3 decimals) down to 0.001, then `9.46e-101` (Markdown) / `$9.46\\times10^{-101}$`
  (LaTeX), and `<1e-300` / `$<10^{-300}$` below 1e-300 (what doubles and the paper can show).
- `bool`: yes / no.

A cell may also be a `Formatted` value: text already formatted for both outputs (e.g. a column whose rows
hold different statistics, each with its own precision).

The LaTeX output is a `table` float with a booktabs `tabular`; numbers are right-aligned and signs and
exponents are in math mode, so the table compiles with pdflatex under any font encoding (`<` in text mode
prints as an inverted exclamation mark under OT1). `latex_document` wraps tables in a minimal document
(article + booktabs) for checking that they compile.

The frames (`markdown_table`, `latex_table`), the escapes and `write_table_files` are also what a benchmark
with its own cell rules builds on (RewardMATH: `rmeval.benchmarks.rewardmath.tables`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.io.atomic import write_text_atomic

if TYPE_CHECKING:
    import pandas as pd

KINDS = ("text", "int", "fixed", "p", "bool")
P_FLOOR = 1e-300  # smaller p-values are shown as "< 1e-300", as in Song et al. (2025)

# LaTeX's special characters in text mode, escaped.
LATEX_TEXT_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                       "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
# ... and the characters OT1 prints as other glyphs in text mode.
LATEX_SPECIALS = {**LATEX_TEXT_SPECIALS, "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}
# Tables with more columns than this are set smaller with narrower column gaps (local to the float).
WIDE_TABLE_COLUMNS = 7
WIDE_TABLE_SETUP = ["\\footnotesize", "\\setlength{\\tabcolsep}{3pt}"]
LATEX_PREAMBLE = "\\documentclass{article}\n\\usepackage{booktabs}\n"  # default (OT1) font encoding, as a paper


@dataclass(frozen=True)
class Column:
    key: str
    header: str  # plain text, used in Markdown (and escaped for LaTeX unless latex_header is given)
    kind: str = "text"
    decimals: int = 2
    latex_header: str | None = None  # LaTeX markup, e.g. r"Pearson $r$"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"column {self.key!r}: kind {self.kind!r} is not one of {KINDS}")

    @property
    def align(self) -> str:
        return "l" if self.kind == "text" else "r"

    @property
    def tex_header(self) -> str:
        return self.latex_header if self.latex_header is not None else latex_escape(self.header)


@dataclass(frozen=True)
class Formatted:
    """A cell already formatted: `text` for Markdown, `latex` (markup) for LaTeX."""

    text: str
    latex: str


def is_missing(value: Any) -> bool:
    if value is None or type(value).__name__ in {"NAType", "NaTType"}:  # pandas' missing markers
        return True
    try:
        return bool(isinstance(value, float | int) or hasattr(value, "dtype")) and math.isnan(float(value))
    except (TypeError, ValueError):
        return False


def latex_escape(text: str, specials: Mapping[str, str] = LATEX_SPECIALS, literal_hyphens: bool = True) -> str:
    """Plain text -> LaTeX text: each character in `specials` replaced, and (`literal_hyphens`) `--` kept as two
    hyphens rather than an en dash."""
    escaped = "".join(specials.get(ch, ch) for ch in str(text))
    while literal_hyphens and "--" in escaped:
        escaped = escaped.replace("--", "-{}-")
    return escaped


def markdown_escape(text: str) -> str:
    return str(text).replace("|", "\\|")


def format_number(value: Any, decimals: int) -> str:
    """Fixed decimals; '' when missing. Plain ASCII minus (Markdown); see `latex_number` for LaTeX."""
    if is_missing(value):
        return ""
    number = float(value)
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    text = f"{number:.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0.0 else text  # no "-0.00"


def latex_number(text: str) -> str:
    """A formatted number as LaTeX: the minus sign and infinity in math mode."""
    if text in {"inf", "-inf"}:
        return r"$\infty$" if text == "inf" else r"$-\infty$"
    return f"${text}$" if text.startswith("-") else text


def _p_parts(value: float, digits: int) -> tuple[str, str | None]:
    """(mantissa or fixed text, exponent) of a p-value."""
    if value >= 1e-3:
        return f"{value:.{digits}f}", None
    mantissa, exponent = f"{value:.{max(digits - 1, 0)}e}".split("e")
    return mantissa, str(int(exponent))


def format_p_text(value: Any, digits: int = 3) -> str:
    """`0.023`, `9.46e-101`, `<1e-300` ('' when missing)."""
    if is_missing(value):
        return ""
    number = float(value)
    if number < P_FLOOR:
        return "<1e-300"
    mantissa, exponent = _p_parts(number, digits)
    return mantissa if exponent is None else f"{mantissa}e{exponent}"


def format_p_latex(value: Any, digits: int = 3) -> str:
    """`$0.023$`, `$9.46\\times10^{-101}$`, `$<10^{-300}$` ('' when missing)."""
    if is_missing(value):
        return ""
    number = float(value)
    if number < P_FLOOR:
        return r"$<10^{-300}$"
    mantissa, exponent = _p_parts(number, digits)
    return f"${mantissa}$" if exponent is None else f"${mantissa}\\times10^{{{exponent}}}$"


def format_cell(value: Any, column: Column, latex: bool = False) -> str:
    """One cell as Markdown text (latex=False) or LaTeX markup (latex=True)."""
    if isinstance(value, Formatted):
        return value.latex if latex else markdown_escape(value.text)
    if is_missing(value):
        return ""
    kind = column.kind
    if kind == "p":
        return format_p_latex(value) if latex else format_p_text(value)
    if kind == "fixed":
        text = format_number(value, column.decimals)
        return latex_number(text) if latex else text
    if kind == "int":
        text = str(int(value))
        return latex_number(text) if latex else text
    if kind == "bool":
        return "yes" if bool(value) else "no"
    return latex_escape(value) if latex else markdown_escape(value)


def markdown_table(caption: str, headers: Sequence[str], right: Sequence[bool], rows: Sequence[Sequence[str]],
                   note: str = "") -> str:
    """The Markdown frame: bold caption, header row, alignment row (`right` per column), `rows` of cells
    (already formatted and escaped) and an italic note."""
    lines = [f"**{caption}**", ""] if caption else []
    lines.append("| " + " | ".join(headers) + " |")
    lines.append("|" + "|".join("---:" if is_right else ":---" for is_right in right) + "|")
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    if note:
        lines += ["", f"*Note.* {note}"]
    return "\n".join(lines) + "\n"


def latex_row(cells: Sequence[str]) -> str:
    return " & ".join(cells) + " \\\\"


def latex_table(caption: str, label: str, spec: str, head: Sequence[str], body: Sequence[str],
                note: Sequence[str] = (), generator: str = "rmeval", setup: Sequence[str] = ()) -> str:
    """The booktabs float: `caption` (LaTeX markup), `spec` the tabular's column alignments, `head` and `body`
    whole lines (`latex_row`, rules), `note` the lines set under the bottom rule, `setup` size commands."""
    lines = [
        f"% Generated by {generator}; needs \\usepackage{{booktabs}}.",
        "\\begin{table}[htbp]",
        "\\centering",
        *setup,
        f"\\caption{{{caption}}}",
        f"\\label{{{label}}}",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        *head,
        "\\midrule",
        *body,
        "\\bottomrule",
        "\\end{tabular}",
    ]
    if note:
        lines += ["\\par\\smallskip", *note]
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"


def render_markdown(caption: str, columns: Sequence[Column], rows: Sequence[Mapping[str, Any]], note: str = "") -> str:
    cells = [[format_cell(row.get(c.key), c) for c in columns] for row in rows] or [["" for _ in columns]]
    return markdown_table(caption, [markdown_escape(c.header) for c in columns], [c.align == "r" for c in columns],
                          cells, note)


def render_latex(caption: str, label: str, columns: Sequence[Column], rows: Sequence[Mapping[str, Any]],
                 note: str = "", generator: str = "rmeval") -> str:
    """A booktabs table float; `note` (plain text, escaped here) goes under the bottom rule."""
    body = [latex_row([format_cell(row.get(c.key), c, latex=True) or "--" for c in columns]) for row in rows]
    note_lines = [f"\\parbox{{\\linewidth}}{{\\footnotesize \\textit{{Note.}} {latex_escape(note)}}}"] if note else []
    return latex_table(latex_escape(caption), label, "".join(c.align for c in columns),
                       [latex_row([c.tex_header for c in columns])], body, note_lines, generator,
                       WIDE_TABLE_SETUP if len(columns) > WIDE_TABLE_COLUMNS else ())


def frame_csv(frame: pd.DataFrame) -> str:
    """A table's CSV: machine column names, full precision (12 significant digits), `\\n` line ends."""
    return frame.to_csv(index=False, float_format="%.12g", lineterminator="\n")


def write_table_files(out_dir: Path, stem: str, texts: Mapping[str, str]) -> list[Path]:
    """`out_dir/stem.<format>` for each rendered format (e.g. csv, md, tex), each written atomically."""
    paths = []
    for suffix, text in texts.items():
        path = out_dir / f"{stem}.{suffix}"
        write_text_atomic(text, path)
        paths.append(path)
    return paths


def latex_document(tables: Sequence[str], landscape: bool = False) -> str:
    """A compilable document holding `tables` (what `\\input` of the .tex files gives in a paper)."""
    geometry = "\\usepackage[margin=1cm" + (",landscape" if landscape else "") + "]{geometry}\n"
    body = "\n\\clearpage\n".join(tables)
    return f"{LATEX_PREAMBLE}{geometry}\\begin{{document}}\n{body}\n\\end{{document}}\n"

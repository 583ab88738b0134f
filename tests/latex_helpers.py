"""Compile LaTeX tables with pdflatex, as a paper would `\\input` them (shared by the table tests)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from rmeval.tables import latex_document

PDFLATEX = shutil.which("pdflatex")
needs_pdflatex = pytest.mark.skipif(
    PDFLATEX is None,
    reason="pdflatex not found: install Debian's texlive-latex-base and texlive-latex-recommended (booktabs), "
           "as .ci/run does",
)


def compile_tables(tex_files: list[Path], workdir: Path, name: str = "tables") -> Path:
    """Compile all tables in one document; on failure, compile each alone and fail naming the broken file."""
    workdir.mkdir(parents=True, exist_ok=True)

    def run(stem: str, bodies: list[str]) -> subprocess.CompletedProcess:
        (workdir / f"{stem}.tex").write_text(latex_document(bodies, landscape=True), encoding="utf-8")
        return subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", f"{stem}.tex"],
                              cwd=workdir, capture_output=True, text=True, timeout=300)

    result = run(name, [path.read_text(encoding="utf-8") for path in tex_files])
    if result.returncode == 0:
        return workdir / f"{name}.pdf"
    for path in tex_files:
        alone = run(f"single_{path.stem}", [path.read_text(encoding="utf-8")])
        if alone.returncode != 0:
            pytest.fail(f"{path} does not compile with pdflatex + booktabs:\n{alone.stdout[-2500:]}")
    pytest.fail(f"the tables compile alone but not together:\n{result.stdout[-2500:]}")

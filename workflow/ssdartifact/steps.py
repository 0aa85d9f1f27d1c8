"""What each workflow rule does, one function per rule, so the rules stay
declarations (inputs, outputs, logs) and the actions are plain, testable Python.

Commands run through `run_logged`, the one place that decides how a tool is
started: with the environment that makes generated PDFs reproducible, from the
repository root, its output in the rule's log, and on failure an error that
quotes the end of that log.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from . import REPO_ROOT, claims, config, paper, provenance

# Generated PDFs (R figures, LaTeX) carry this fixed date, so their bytes depend only on their inputs.
REPRODUCIBLE_ENV = {"SOURCE_DATE_EPOCH": "1735689600", "FORCE_SOURCE_DATE": "1"}


class StepFailed(RuntimeError):
    """A tool exited non-zero; the message quotes the end of its log."""


def run_logged(command: list[str], log: str) -> None:
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as handle:
        result = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT, cwd=REPO_ROOT,
                                env={**os.environ, **REPRODUCIBLE_ENV})
    if result.returncode != 0:
        tail = "\n".join(Path(log).read_text(encoding="utf-8", errors="replace").splitlines()[-30:])
        raise StepFailed(f"{' '.join(command)} exited with {result.returncode}; end of {log}:\n{tail}")


def pio_model_curve(curve: str, csv: str, log: str) -> None:
    run_logged([sys.executable, "-m", "pio.curves", curve, csv], log)


def draw_figure(script: str, theme: str, data: list[str], pdf: str, log: str) -> None:
    started = provenance.now()
    run_logged(["Rscript", script, *data, pdf], log)
    provenance.write_sidecar(pdf, produced_by=script, inputs=[script, theme, *data], started=started)


def typeset_table(script: str, data: list[str], tex: str, log: str) -> None:
    started = provenance.now()
    run_logged([sys.executable, script, *data, tex], log)
    provenance.write_sidecar(tex, produced_by=script, inputs=[script, *data], started=started)


def check_claims(csv: str, markdown: str, html: str, log: str) -> None:
    rows = claims.evaluate_all(config.load("claims.yaml")["claims"])
    claims.write_report(rows, Path(csv), Path(markdown), Path(html))
    Path(log).write_text(f"claims: {claims.summary(rows)}\n", encoding="utf-8")


def write_document_sources(claims_csv: str, out_dir: str, log: str) -> None:
    written = paper.write_document(config.load("inventory.yaml"), Path(claims_csv), Path(out_dir))
    Path(log).write_text("".join(f"wrote {path}\n" for path in written), encoding="utf-8")


def build_document(main: str, pdf: str, log: str) -> None:
    out_dir = str(Path(pdf).parent)
    run_logged(["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", f"-outdir={out_dir}", main], log)
    built = Path(out_dir) / (Path(main).stem + ".pdf")
    if built != Path(pdf):
        built.replace(pdf)


def list_outputs(paths: list[str], listing: str) -> None:
    Path(listing).write_text("".join(f"{path}\n" for path in paths), encoding="utf-8")

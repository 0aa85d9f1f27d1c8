"""Steps of the report: the figures and tables (one script each), the claims report, the
document and its sources, the images, and the list of outputs a checksum manifest covers."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from ssdartifact import claims, paper, provenance

from .runtime import in_image, run_logged


@in_image()
def draw_figure(*, script: str, theme: str, data: list[str], pdf: str, log: str) -> None:
    started = provenance.now()
    run_logged(["Rscript", script, *data, pdf], log)
    provenance.write_sidecar(pdf, produced_by=script, inputs=[script, theme, *data], started=started)


# Every diagram is typeset in this frame (a standalone page around one tikzpicture, with the
# diagrams' shared styles), so its PDF's bytes depend only on its source: no date (the run's
# SOURCE_DATE_EPOCH), no trailer ID.
DIAGRAM_FRAME = "figures/diagrams/frame.tex"


@in_image()
def draw_diagram(*, script: str, data: list[str], tikz: str, pdf: str, log: str) -> None:
    """A diagram: a TikZ picture as it is (figures/diagrams/fig_N_M.tex), or the one a script
    writes (to `tikz`) from a trace of our systems (figures/diagrams/fig_N_M.py)."""
    started = provenance.now()
    body = script
    if script.endswith(".py"):
        run_logged([sys.executable, script, *data, tikz], log)
        body = tikz
    with tempfile.TemporaryDirectory(prefix="diagram-") as build:
        name = Path(pdf).stem
        run_logged(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", f"-jobname={name}",
                    f"-output-directory={build}",
                    rf"\def\diagrambody{{{body}}}\input{{{DIAGRAM_FRAME}}}"], log)
        shutil.move(Path(build) / f"{name}.pdf", pdf)
    provenance.write_sidecar(pdf, produced_by=script, inputs=[script, DIAGRAM_FRAME, *data], started=started)


@in_image()
def picture_for_report(*, pdf: str, png: str, log: str) -> None:
    """The first page of a figure at screen resolution (poppler's pdftoppm), for the HTML report."""
    with tempfile.TemporaryDirectory(prefix="picture-") as scratch:
        run_logged(["pdftoppm", "-png", "-r", "110", "-singlefile", "-f", "1", "-l", "1", pdf, f"{scratch}/page"], log)
        Path(png).parent.mkdir(parents=True, exist_ok=True)
        shutil.move(f"{scratch}/page.png", png)


@in_image()
def typeset_table(*, script: str, data: list[str], tex: str, log: str) -> None:
    started = provenance.now()
    run_logged([sys.executable, script, *data, tex], log)
    provenance.write_sidecar(tex, produced_by=script, inputs=[script, *data], started=started)


@in_image()
def check_claims(*, claims_list: list[dict], data: list[str], profile: str, not_run: dict, csv: str, markdown: str,
                 html: str, log: str) -> None:
    """Check every claim on the CSVs this profile produced (`data`); the others are 'not run', with
    the reason and the command that runs them when this machine could not make them (`not_run`)."""
    rows = claims.evaluate_all(claims_list, available=set(data), profile=profile,
                               not_run=not_run)
    claims.write_report(rows, Path(csv), Path(markdown), Path(html), not_run=not_run)
    Path(log).write_text(f"claims: {claims.summary(rows)}\n", encoding="utf-8")


@in_image()
def write_document_sources(*, inventory: dict, claims_csv: str, out_dir: str, built: list[str], not_run: dict,
                           log: str) -> None:
    written = paper.write_document(inventory, Path(claims_csv), Path(out_dir), set(built), not_run)
    Path(log).write_text("".join(f"wrote {path}\n" for path in written), encoding="utf-8")


@in_image()
def build_document(*, main: str, pdf: str, log: str) -> None:
    out_dir = str(Path(pdf).parent)
    run_logged(["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", f"-outdir={out_dir}", main], log)
    built = Path(out_dir) / (Path(main).stem + ".pdf")
    if built != Path(pdf):
        built.replace(pdf)


def build_image(*, name: str, runtime: str, identity: str, log: str) -> None:
    """The record of what `name`'s steps run in (workflow/rules/common.smk, image()): natively, nothing to build."""
    if runtime == "native":
        record = "native"
    else:
        from ssdartifact.containers.build import ensure_image  # noqa: PLC0415 (only the docker runtime needs it)
        from ssdartifact.containers.engine import image_id  # noqa: PLC0415

        tag = ensure_image(name)
        record = f"{tag}@{image_id(tag)}"
    Path(identity).write_text(f"{record}\n", encoding="utf-8")
    Path(log).write_text(f"image {name}: {record}\n", encoding="utf-8")


def list_outputs(*, paths: list[str], listing: str) -> None:
    Path(listing).write_text("".join(f"{path}\n" for path in paths), encoding="utf-8")

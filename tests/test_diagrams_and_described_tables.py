"""Diagrams as code and the tables that describe a setup (issue 23): where their outputs go, that
a TikZ picture typesets into the same bytes twice, the tables' CSVs and scripts, and the manifest's
`add`."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ssdartifact import REPO_ROOT, checksums, config, paper
from steps import report, runtime

INVENTORY = config.load("inventory")


def test_a_diagram_is_a_figure_typeset_beside_the_r_ones():
    traced = {"reproduced": {"script": "figures/diagrams/fig_4_4.py", "inputs": ["results/ace/sim/diagram.csv"]}}
    assert paper.is_diagram(traced) and paper.output_of(traced) == "figures/generated/fig_4_4.pdf"
    item = {"id": "4.1", "class": "diagram", "caption": "c", "thesis_line": 1,
            "reproduced": {"script": "figures/diagrams/fig_4_1.tex", "inputs": []}}
    tex = paper.item_tex("Figure", item, [])
    assert r"\diagram{figures/generated/fig_4_1.pdf}" in tex and "Drawn by" in tex


def test_every_diagram_source_is_in_the_inventory():
    scripts = {i["reproduced"]["script"] for i in paper.reproduced_items(INVENTORY)}
    for source in (REPO_ROOT / "figures/diagrams").glob("fig_*.*"):
        assert f"figures/diagrams/{source.name}" in scripts, f"{source.name} is not in configs/inventory/"


def test_a_tikz_picture_typesets_to_the_same_bytes_twice(tmp_path):
    pdfs = []
    for run in ("a", "b"):
        pdf = tmp_path / f"{run}.pdf"
        report.draw_diagram(script="figures/diagrams/fig_4_1.tex", data=[], tikz=str(tmp_path / "unused.tikz"),
                            pdf=str(pdf), log=str(tmp_path / f"{run}.log"))
        pdfs.append(pdf.read_bytes())
    assert pdfs[0] == pdfs[1] and pdfs[0].startswith(b"%PDF")


def test_a_diagram_that_does_not_typeset_says_where(tmp_path):
    bad = REPO_ROOT / "figures/diagrams/_broken_test.tex"
    bad.write_text("\\begin{tikzpicture}\\node {unclosed\n\\end{tikzpicture}\n")
    try:
        with pytest.raises(runtime.StepFailed, match="_broken_test"):
            report.draw_diagram(script=str(bad.relative_to(REPO_ROOT)), data=[], tikz="", pdf=str(tmp_path / "x.pdf"),
                                log=str(tmp_path / "x.log"))
    finally:
        bad.unlink()


def test_restore_workload_presets_match_restore_sim():
    from restore import tables

    source = (REPO_ROOT / "systems/restore/src/workload.cc").read_text()
    presets = dict(re.findall(r'if \(name == "([^"]+)"\) return "([^"]+)";', source))
    assert {k: presets[k] for k in tables.WORKLOAD_PRESETS} == tables.WORKLOAD_PRESETS
    assert tables.describe("5hf90*10") == ("dynamic", "10 phases of 90 % of the requests on 5 % of the pages, "
                                                      "each on a new hot set")
    with pytest.raises(ValueError, match="not XhfY"):
        tables.describe("zipf0.99")


def _typeset(script, *inputs, tmp_path):
    out = tmp_path / "t.tex"
    result = subprocess.run([sys.executable, script, *map(str, inputs), str(out)], cwd=REPO_ROOT,
                            capture_output=True, text=True)
    return result, (out.read_text() if out.exists() else "")


def test_described_tables_typeset(tmp_path):
    from restore import tables

    tables.write_table_6_1(tmp_path / "f.csv", ["static", "tlfu", "restore"])
    result, tex = _typeset("figures/scripts/table_6_1.py", tmp_path / "f.csv", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "tLFU & ReStore" in tex and "device properties & $\\times$ & \\checkmark{}" in tex
    tables.write_table_6_4(tmp_path / "w.csv", ["5hf90", "A", "D"])
    result, tex = _typeset("figures/scripts/table_6_4.py", tmp_path / "w.csv", tmp_path=tmp_path)
    assert "D & dynamic & 5hf90*50" in tex and "5hf90@0 + 10hf80@1" in tex
    result, tex = _typeset("figures/scripts/table_6_3.py", "results/reference/table_6_3.csv", tmp_path=tmp_path)
    assert tex.count(r"\\") == 24 and r"$\mu_{C_j^i}^i(x_j)$ & Membership function" in tex
    (tmp_path / "a.csv").write_text("workload,read_pct,hot_ops_pct,hot_pages_pct,pgbench_scale\nWIS,10,90,10,5\n")
    result, tex = _typeset("figures/scripts/table_4_2.py", tmp_path / "a.csv", tmp_path=tmp_path)
    assert r"Write-Intensive Skewed (WIS) & pgbench scale 5 & 10/\allowbreak{}90 & 90/\allowbreak{}10" in tex


def test_manifest_add_keeps_the_other_entries(tmp_path, monkeypatch):
    monkeypatch.setattr(checksums, "REPO_ROOT", tmp_path)
    for name in ("a.csv", "b.pdf"):
        (tmp_path / name).write_text(name)
    manifest = tmp_path / "m.sha256"
    checksums.write_manifest(manifest, ["a.csv"])
    (tmp_path / "a.csv").write_text("changed, but not named")
    checksums.add_to_manifest(manifest, ["b.pdf"])
    entries = checksums.read_manifest(manifest)
    assert set(entries) == {"a.csv", "b.pdf"}
    found = checksums.sha256_file(tmp_path / "a.csv")[:12]
    expected = f"changed: a.csv (expected {entries['a.csv'][:12]}, found {found})"
    assert checksums.differences(manifest, ["a.csv", "b.pdf"]) == [expected]


def test_the_frame_is_the_one_the_step_uses():
    assert (REPO_ROOT / report.DIAGRAM_FRAME).exists() and Path(report.DIAGRAM_FRAME).parent == Path(paper.DIAGRAM_DIR)

"""ace-sim-history and Figure 4.7 drawn from it (issue 23): the example's accesses leave the
thesis's rows in the simulator's own history prefetcher, and the figure follows the prefetcher:
the same accesses through a changed update rule (compiled here) give another picture."""

import subprocess
import sys
from pathlib import Path

import pytest

from ace import sim
from ssdartifact import REPO_ROOT

ACCESSES = REPO_ROOT / "figures/diagrams/scenes/fig_4_7.history"
SIM_SRC = REPO_ROOT / "systems/ace/sim/src"


@pytest.fixture(scope="module")
def history_binary():
    return sim.build().parent / "ace-sim-history"


def table(binary: Path, accesses: Path, tmp_path: Path) -> Path:
    out = tmp_path / f"{binary.name}.csv"
    result = subprocess.run([str(binary), str(accesses), "--out", str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out


def draw(table_csv: Path, tmp_path: Path) -> str:
    out = tmp_path / (table_csv.stem + ".tikz")
    subprocess.run([sys.executable, "figures/diagrams/fig_4_7.py", str(table_csv), str(out)], cwd=REPO_ROOT,
                   check=True)
    return out.read_text()


def test_the_example_leaves_the_thesis_rows(history_binary, tmp_path):
    picture = draw(table(history_binary, ACCESSES, tmp_path), tmp_path)
    assert r"0 & $\{2, 5, 7\}$ & $\{10, 4, 2\}$" in picture  # T869-877, rows 0 and 1 as printed
    assert r"1 & $\{10, 3, 18\}$ & $\{3, 9, 1\}$" in picture
    assert "after a miss on page 1 it prefetches page 3 (weight 9)" in picture


def test_bad_accesses_are_refused_with_their_line(history_binary, tmp_path):
    bad = tmp_path / "bad.history"
    bad.write_text("access 1 2\nrepeat x 1 2\n")
    result = subprocess.run([str(history_binary), str(bad)], capture_output=True, text=True)
    assert result.returncode == 2 and "repeat needs a number, got 'x'" in result.stderr.replace("--", "")


def test_the_figure_follows_the_prefetcher(history_binary, tmp_path):
    # a known successor gains two instead of one: another table from the same accesses
    source = (SIM_SRC / "prefetch.cc").read_text()
    changed_source = source.replace("row->weight[i] + 1,", "row->weight[i] + 2,")
    assert changed_source != source, "prefetch.cc's update rule moved: update this test"
    (tmp_path / "prefetch_changed.cc").write_text(changed_source)
    changed = tmp_path / "ace-sim-history-changed"
    subprocess.run(["g++", "-std=c++20", "-O0", f"-I{SIM_SRC}", f"-I{REPO_ROOT / 'systems/common/include'}",
                    str(tmp_path / "prefetch_changed.cc"), str(SIM_SRC / "history.cc"),
                    str(history_binary.parent / "libace_sim_core.a"), "-o", str(changed)], check=True)
    ours, theirs = (draw(table(b, ACCESSES, tmp_path), tmp_path) for b in (history_binary, changed))
    assert ours != theirs
    assert r"0 & $\{2, 5, 7\}$ & $\{19, 7, 3\}$" in theirs

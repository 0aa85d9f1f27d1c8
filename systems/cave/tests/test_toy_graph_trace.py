"""cave-trace and Figures 5.2-5.4 drawn from it (issue 23): the toy graph comes out of CAVE's own
traversals as the thesis tells it, and a figure follows the engine: the same graph through a
changed pseudo-DFS step (compiled here) gives another picture."""

import csv
import subprocess
import sys
from pathlib import Path

from ssdartifact import REPO_ROOT

SCENE = REPO_ROOT / "figures/diagrams/scenes/fig_5_toy.graph"
CAVE_DIR = REPO_ROOT / "systems/cave"


def trace(binary: Path, scene: Path, tmp_path: Path) -> Path:
    out = tmp_path / f"{binary.name}.csv"
    result = subprocess.run([str(binary), str(scene), "--workdir", str(tmp_path), "--out", str(out)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out


def rows(path: Path, kind: str) -> list[dict]:
    with open(path, newline="") as handle:
        return [r for r in csv.DictReader(handle) if r["kind"] == kind]


def draw(figure: str, trace_csv: Path, tmp_path: Path) -> str:
    out = tmp_path / f"{figure}-{trace_csv.stem}.tikz"
    subprocess.run([sys.executable, f"figures/diagrams/{figure}.py", str(trace_csv), str(out)], cwd=REPO_ROOT,
                   check=True)
    return out.read_text()


def test_the_toy_graph_goes_as_the_thesis_tells(binary, tmp_path):
    out = trace(binary.parent / "cave-trace", SCENE, tmp_path)
    level_2 = [r for r in rows(out, "level") if r["value"] == "2"]
    assert {r["vertex"] for r in level_2} == {"B", "D", "E", "F"}, "T1205: B, D, E, F form one level"
    assert len({r["thread"] for r in level_2}) == 4
    split = rows(out, "split")[0]
    assert split["stack"] == "D E", "T1212: the stack of four splits into {D, E} and {B, F}"
    assert next(r for r in rows(out, "visit") if r["time"] == split["time"])["stack"] == "B F"
    assert len([r for r in rows(out, "visit") if r["time"] == "4"]) == 3, "T1483: three threads after time 4"
    slots = rows(out, "slot")
    assert len(slots) == 5 and all(int(r["vertex"]) >= 0 for r in slots), "the WCC fills the pool"
    assert list(tmp_path.glob("*.cave")) == [], "the graphs it wrote are removed"


def test_a_bad_scene_is_refused_with_its_line(binary, tmp_path):
    bad = tmp_path / "bad.graph"
    bad.write_text("vertex A\nedge A Z\n")
    result = subprocess.run([str(binary.parent / "cave-trace"), str(bad), "--workdir", str(tmp_path)],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "bad.graph:2: vertex Z is not listed before its edges" in result.stderr


def test_the_figures_follow_the_engine(binary, tmp_path):
    # a pseudo-DFS step that gives a new task only the bottom vertex, not the bottom half
    header = (CAVE_DIR / "src/algorithms.h").read_text()
    changed_header = header.replace("const size_t half = stack.size() / 2;", "const size_t half = 1;")
    assert changed_header != header, "dfs_step's split test moved: update this test"
    (tmp_path / "include").mkdir()
    (tmp_path / "include/algorithms.h").write_text(changed_header)
    # beside the changed header: a quoted #include looks in the including file's folder first
    (tmp_path / "include/trace.cc").write_text((CAVE_DIR / "src/trace.cc").read_text())
    uring = "URING_FOUND:INTERNAL=1" in (binary.parent / "CMakeCache.txt").read_text()
    changed = tmp_path / "cave-trace-changed"
    subprocess.run(["g++", "-std=c++20", "-O0", f"-I{tmp_path / 'include'}", f"-I{CAVE_DIR / 'src'}",
                    f"-I{REPO_ROOT / 'systems/common/include'}", str(tmp_path / "include/trace.cc"),
                    str(binary.parent / "libcave_core.a"), "-o", str(changed), "-pthread",
                    *(["-luring"] if uring else [])], check=True)
    for figure in ("fig_5_2", "fig_5_4"):
        ours = draw(figure, trace(binary.parent / "cave-trace", SCENE, tmp_path), tmp_path)
        theirs = draw(figure, trace(changed, SCENE, tmp_path), tmp_path)
        assert ours != theirs, figure


def test_scene_errors_escape_what_they_quote(binary, tmp_path):
    """A NUL in a scene would end the message early and a control character forge a line of it (issue 42)."""
    shown = str(tmp_path).encode() + b"/bad\\n.graph"
    for text, error in [(b"vertex A\nedge A B\x00\n", b":2: vertex B\\x00 is not listed before its edges"),
                        (b"vertex A\n\x1b[2Jkey A\n", b":2: unknown key '\\x1b[2Jkey'")]:
        scene = tmp_path / "bad\n.graph"
        scene.write_bytes(text)
        result = subprocess.run([str(binary.parent / "cave-trace"), str(scene), "--workdir", str(tmp_path)],
                                capture_output=True)
        assert (result.returncode, result.stderr) == (2, b"cave-trace: error: " + shown + error + b"\n")

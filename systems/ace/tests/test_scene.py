"""ace-sim-scene and the figures drawn from it (thesis Figures 4.4 and 4.6; issue 23): the thesis's
examples come out as its captions say, and a figure follows the policy: the same example through
a policy that behaves otherwise (compiled here as a plug-in) gives another picture."""

import subprocess
import sys
from pathlib import Path

import pytest

from ace import sim
from ssdartifact import REPO_ROOT

SCENES = REPO_ROOT / "figures/diagrams/scenes"
SIM_SRC = REPO_ROOT / "systems/ace/sim/src"
# LRU whose victim is the most recently used page: another choice on the same example
MRU_PLUGIN = """
#include "policy.h"
class MostRecentFirst : public acesim::ListPolicy {
 public:
  explicit MostRecentFirst(const std::vector<acesim::FrameState>& frames)
      : ListPolicy(frames, acesim::ListKind::kLru, 1.0 / 3.0) {}
  acesim::Frame victim(const std::vector<acesim::Frame>& pinned) override {
    auto order = order_from_tail();
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      if (std::find(pinned.begin(), pinned.end(), *it) == pinned.end()) return *it;
    return acesim::kNoFrame;
  }
};
ACESIM_REGISTER_POLICY("most_recent_first", MostRecentFirst);
"""


@pytest.fixture(scope="module")
def scene_binary():
    binary = sim.build()
    return binary.parent / "ace-sim-scene"


def trace(binary, scene: Path, tmp_path) -> Path:
    out = tmp_path / (scene.stem + ".csv")
    result = subprocess.run([str(binary), str(scene), "--out", str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out


def rows(path: Path, kind: str) -> list[list[str]]:
    return [line.split(",") for line in path.read_text().splitlines()[1:] if line.split(",")[1] == kind]


def test_the_thesis_examples_come_out_as_the_captions_say(scene_binary, tmp_path):
    lru = trace(scene_binary, SCENES / "fig_4_6a.scene", tmp_path)
    assert [r[3] for r in rows(lru, "written")] == ["6", "4", "2"] and [r[3] for r in rows(lru, "evicted")] == ["6"]
    wsr = trace(scene_binary, SCENES / "fig_4_6b.scene", tmp_path)
    assert [r[3] for r in rows(wsr, "written")] == ["6", "4", "1"]
    after = [r for r in rows(wsr, "frame") if r[0] == "1"]
    assert after[-2][3:6] == ["3", "1", "1"], "p3 moves to the MRU end, dirty, with its cold flag set"


def test_a_bad_scene_is_refused_with_its_line(scene_binary, tmp_path):
    bad = tmp_path / "bad.scene"
    bad.write_text("policy lru\npage 1 clean\npage 2 muddy\nrequest 3 read\n")
    result = subprocess.run([str(scene_binary), str(bad)], capture_output=True, text=True)
    assert result.returncode == 2 and "bad.scene:3: page 2 needs 'clean' or 'dirty'" in result.stderr


def test_the_figure_follows_the_policy(scene_binary, tmp_path):
    plugin = tmp_path / "mru.cc"
    plugin.write_text(MRU_PLUGIN)
    changed = tmp_path / "ace-sim-scene-mru"
    subprocess.run(["g++", "-std=c++20", "-O0", f"-I{SIM_SRC}", f"-I{REPO_ROOT / 'systems/common/include'}",
                    str(plugin), str(SIM_SRC / "scene.cc"), str(scene_binary.parent / "libace_sim_core.a"),
                    "-o", str(changed)], check=True)
    example = (SCENES / "fig_4_6a.scene").read_text()
    (tmp_path / "b.scene").write_text((SCENES / "fig_4_6b.scene").read_text())
    (tmp_path / "a_changed.scene").write_text(example.replace("policy lru", "policy most_recent_first"))
    pictures = []
    for binary, scene in ((scene_binary, SCENES / "fig_4_6a.scene"), (changed, tmp_path / "a_changed.scene")):
        csv_a = trace(binary, scene, tmp_path)
        out = tmp_path / f"{scene.stem}.tikz"
        subprocess.run([sys.executable, "figures/diagrams/fig_4_6.py", str(csv_a), str(trace(scene_binary,
                        tmp_path / "b.scene", tmp_path)), str(out)], cwd=REPO_ROOT, check=True)
        pictures.append(out.read_text())
    assert pictures[0] != pictures[1]
    assert "evicted: p6" in pictures[0] and "evicted: p1" in pictures[1], "the changed policy evicts the MRU page"

"""Thesis Figure 4.4 (T794-806), popular eviction policies: (a) Clock Sweep's usage counts, (b)
CFLRU's clean-first region (window N/2), (c) LRU-WSR's cold flag, two examples. Each panel is a
toy example (figures/diagrams/scenes/fig_4_4*.scene) stepped through the bufferpool simulator's own
policies by ace-sim-scene; this script draws its trace.

Usage: python figures/diagrams/fig_4_4.py A.csv B.csv C1.csv C2.csv <output.tikz>
"""

import sys

from bufferpool_scenes import PANEL_HEIGHT, PANEL_WIDTH, SceneError, legend, read_scene, scene_panel, write_picture

PANELS = [("(a) Clock Sweep", "clock"), ("(b) CFLRU, window N/2", "cflru"),
          ("(c) LRU-WSR, first example", "lru_wsr"), ("(c) LRU-WSR, second example", "lru_wsr")]


def main(*paths: str) -> None:
    *scenes, out = paths
    if len(scenes) != len(PANELS):
        sys.exit(__doc__)
    lines = []
    for i, ((title, policy), path) in enumerate(zip(PANELS, scenes)):
        scene = read_scene(path)
        # CFLRU's window: the pages its victim may be chosen from, N/2 of the scene's pool
        window = len(scene["before"]) // 2 if policy == "cflru" else 0
        # two panels a row
        lines += scene_panel(scene, policy, (i % 2) * PANEL_WIDTH, -(i // 2) * PANEL_HEIGHT, title, window=window)
    lines += legend(-2 * PANEL_HEIGHT - 0.2)
    write_picture(lines, out)


if __name__ == "__main__":
    try:
        main(*sys.argv[1:])
    except SceneError as error:
        sys.exit(str(error))

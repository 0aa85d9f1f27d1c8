"""Thesis Figure 4.6 (T837, T862-866), ACE's page selection for n_w = n_e = 3: (a) over LRU, (b) over
LRU-WSR. Each panel is the thesis's example (figures/diagrams/scenes/fig_4_6*.scene) stepped through
the bufferpool simulator's own ACE Writer by ace-sim-scene; this script draws its trace. With
prefetching, the Evictor takes the first n_e clean pages of the order once the Writer is done
(T864: n_e = n_w, as ACE is tuned), which panel (a) marks from the traced order.

Usage: python figures/diagrams/fig_4_6.py A.csv B.csv <output.tikz>
"""

import sys

from bufferpool_scenes import PANEL_HEIGHT, PANEL_WIDTH, SceneError, legend, read_scene, scene_panel, write_picture

PANELS = [("(a) ACE over LRU", "lru"), ("(b) ACE over LRU-WSR", "lru_wsr")]


def prefetch_evictions(scene: dict) -> list[int]:
    """The first n_e pages, in the order before the request, that are clean once the Writer wrote."""
    n_e = len(scene["written"])
    clean = [f["page"] for f in scene["before"] if not f["dirty"] or f["page"] in scene["written"]]
    return clean[:n_e]


def main(*paths: str) -> None:
    *scenes, out = paths
    if len(scenes) != len(PANELS):
        sys.exit(__doc__)
    lines = []
    for i, ((title, policy), path) in enumerate(zip(PANELS, scenes)):
        scene = read_scene(path)
        extra = ""
        if policy == "lru":
            extra = "; with prefetching: " + ", ".join(f"p{p}" for p in prefetch_evictions(scene))
        lines += scene_panel(scene, policy, i * PANEL_WIDTH, 0, title, extra=extra)
    lines += legend(-PANEL_HEIGHT - 0.2)
    write_picture(lines, out)


if __name__ == "__main__":
    try:
        main(*sys.argv[1:])
    except SceneError as error:
        sys.exit(str(error))

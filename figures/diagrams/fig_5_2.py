"""Thesis Figure 5.2 (T1193, T1199-1214), intra- and inter-subgraph parallelization on the toy graph
(figures/diagrams/scenes/fig_5_toy.graph), drawn from cave-trace's run of CAVE's own traversals:
(A) the parallel BFS's first level of several vertices, each vertex with the thread the trace's
round robin gives it; (B) the pseudo-DFS at its first split: the vertices already visited, the
stack the splitting thread keeps and the one a new thread takes.

Usage: python figures/diagrams/fig_5_2.py TRACE.csv <output.tikz>
"""

import sys

from cave_trace import colour, graph, read_trace, stack_boxes, write_picture

PANEL_GAP_CM = 8.2


def bfs_panel(trace: dict) -> list[str]:
    levels: dict[int, list[dict]] = {}
    for row in trace["level"]:
        levels.setdefault(row["value"], []).append(row)
    wide = min((level for level, rows in levels.items() if len(rows) > 1), default=None)
    if wide is None:
        sys.exit("the BFS has no level of more than one vertex: nothing runs in parallel")
    fill = {r["vertex"]: "black!15" for level, rows in levels.items() if level < wide for r in rows}
    fill.update({r["vertex"]: f"{colour(r['thread'])}!45" for r in levels[wide]})
    labels = {r["vertex"]: f"T{r['thread'] + 1}" for r in levels[wide]}
    threads = len({r["thread"] for r in levels[wide]})
    names = ", ".join(r["vertex"] for r in levels[wide])
    return ([r"\node[panel, anchor=west] at (-3.2,0.9) {(A) Intra-subgraph: parallel BFS};"]
            + graph(trace, 0, 0, fill, labels=labels)
            + [f"\\node[note, anchor=west, align=left] at (-3.2,{-len(levels) * 1.05 - 0.1:.2f}) "
               f"{{level {wide}: $\\{{${names}$\\}}$ by {threads} threads at once\\\\"
               r"grey: the levels before it (visited)};"])


def dfs_panel(trace: dict, x: float) -> list[str]:
    split = next(iter(trace.get("split", [])), None)
    if split is None:
        sys.exit("the pseudo-DFS never split its stack: raise the graph's fan-out or lower dfs_threshold")
    time, keeper = split["time"], split["thread"]
    kept = next(r for r in trace["visit"] if r["time"] == time and r["thread"] == keeper)["stack"]
    taker = next(r["thread"] for r in trace["start"] if r["time"] > time and r["stack"] == split["stack"])
    visited = [r["vertex"] for r in trace["visit"] if r["time"] <= time]
    fill = {v: "black!15" for v in visited}
    fill.update({v: f"{colour(keeper)}!45" for v in kept})
    fill.update({v: f"{colour(taker)}!45" for v in split["stack"]})
    levels = len({r["value"] for r in trace["level"]})
    lines = [f"\\node[panel, anchor=west] at ({x - 3.2:.2f},0.9) {{(B) Inter-subgraph: parallel pseudo-DFS}};"]
    lines += graph(trace, x, 0, fill)
    for i, (thread, stack) in enumerate(((keeper, kept), (taker, split["stack"]))):
        sx = x + 3.7 + i * 0.95
        lines += stack_boxes(stack, sx, -2.1, thread)
        lines.append(f"\\node[note, anchor=north] at ({sx:.2f},-2.35) {{T{thread + 1}}};")
    top = -2.1 + 0.42 * max(len(kept), len(split["stack"])) - 0.1
    lines.append(f"\\node[note, anchor=south] at ({x + 4.17:.2f},{top:.2f}) {{stacks}};")
    lines.append(f"\\node[note, anchor=west, align=left] at ({x - 3.2:.2f},{-levels * 1.05 - 0.1:.2f}) "
                 f"{{after {', '.join(visited)} the stack of {len(kept) + len(split['stack'])} is split:\\\\"
                 f"T{keeper + 1} keeps $\\{{${', '.join(kept)}$\\}}$, T{taker + 1} takes "
                 f"$\\{{${', '.join(split['stack'])}$\\}}$ (bottom first)}};")
    return lines


def main(trace_csv: str, out: str) -> None:
    trace = read_trace(trace_csv)
    write_picture(bfs_panel(trace) + dfs_panel(trace, PANEL_GAP_CM), out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])

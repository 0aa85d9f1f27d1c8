"""Thesis Figure 5.4 (T1480-1484), the parallel pseudo-DFS on the toy graph
(figures/diagrams/scenes/fig_5_toy.graph) from cave-trace's run of CAVE's own DFS step with its
threads in rounds: left, the graph after time SNAPSHOT (each visited vertex in the colour of the
thread that visited it, the vertices on a stack ringed in their thread's colour); right, each
thread's stack after each time step (bottom first), the vertex it popped above it, and an arrow
where a stack's bottom half went to a new thread.

Usage: python figures/diagrams/fig_5_4.py TRACE.csv <output.tikz>
"""

import sys

from cave_trace import colour, graph, read_trace, stack_boxes, write_picture

SNAPSHOT = 4  # T1483: "The graph is a snapshot after time 4"
COLUMN_CM, BOX_CM = 1.0, 0.42


def main(trace_csv: str, out: str) -> None:
    trace = read_trace(trace_csv)
    visits = trace["visit"]
    times = max(r["time"] for r in visits)
    threads = 1 + max(r["thread"] for r in visits)
    if times < SNAPSHOT:
        sys.exit(f"the pseudo-DFS ends at time {times}, before the snapshot at time {SNAPSHOT}")
    tallest = max(len(r["stack"]) for r in visits)
    row_cm = (tallest + 2.4) * BOX_CM
    fill = {r["vertex"]: f"{colour(r['thread'])}!45" for r in visits if r["time"] <= SNAPSHOT}
    outline = {v: colour(r["thread"]) for r in visits if r["time"] == SNAPSHOT for v in r["stack"]}
    lines = [r"\node[panel, anchor=west] at (-3.0,0.9) {Graph after time " + str(SNAPSHOT) + "};"]
    lines += graph(trace, 0, 0, fill, outline)
    lines.append(r"\node[note, anchor=north west, align=left] at (-3.0,-3.6) {filled: visited by the thread"
                 r" of its colour\\ringed: on that thread's stack};")

    x0, top = 4.2, 0.6  # the timeline: a column per time step, a row per thread
    place = {}
    for t in range(threads):
        y = top - (t + 1) * row_cm
        lines.append(f"\\node[note, anchor=east, text={colour(t)}!70!black] at ({x0 - 0.3:.2f},{y + row_cm / 2:.2f}) "
                     f"{{\\textbf{{T{t + 1}}}}};")
        for r in (r for r in visits if r["thread"] == t):
            x = x0 + (r["time"] - 0.5) * COLUMN_CM
            place[(r["time"], t)] = (x, y)
            lines += stack_boxes(r["stack"], x, y + BOX_CM / 2, t)
            lines.append(f"\\node[circle, draw, fill={colour(t)}!45, inner sep=0.5pt, minimum size=4.5mm, "
                         f"font=\\footnotesize] at ({x:.2f},{y + (tallest + 0.9) * BOX_CM:.2f}) {{{r['vertex']}}};")
    for split in trace.get("split", []):
        taker = next(r["thread"] for r in trace["start"] if r["time"] > split["time"] and r["stack"] == split["stack"])
        (x1, y1), (x2, y2) = place[(split["time"], split["thread"])], place[(split["time"] + 1, taker)]
        lines.append(f"\\draw[->, thick, black!60] ({x1 + 0.3:.2f},{y1 + 0.2:.2f}) -- "
                     f"({x2 - 0.3:.2f},{y2 + 0.35:.2f});")
    bottom = top - threads * row_cm
    for time in range(1, times + 1):
        lines.append(f"\\node[note] at ({x0 + (time - 0.5) * COLUMN_CM:.2f},{bottom - 0.25:.2f}) {{{time}}};")
    lines.append(f"\\node[note] at ({x0 + times * COLUMN_CM / 2:.2f},{bottom - 0.65:.2f}) "
                 "{time: the vertex popped (circle) and the stack after it (bottom first)};")
    xs = x0 + SNAPSHOT * COLUMN_CM
    lines.append(f"\\draw[dashed, black!50] ({xs:.2f},{top:.2f}) -- ({xs:.2f},{bottom:.2f});")
    write_picture(lines, out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])

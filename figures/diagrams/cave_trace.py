"""Reading a cave-trace CSV (systems/cave: the engine's own BFS, pseudo-DFS steps and cache pool on
the thesis's toy graph, on a fixed schedule) and drawing its graph as TikZ; shared by the scripts of
Figures 5.2, 5.3 and 5.4. Every vertex, edge, level, thread, stack and slot drawn comes from the trace;
the graph is laid out by BFS level, each level's vertices in id order."""

from __future__ import annotations

import csv
import sys

COLUMNS = ["kind", "time", "thread", "vertex", "value", "stack"]
THREAD_COLOURS = ["classic", "flashfriendly", "internals", "novel"]  # frame.tex's colours
LEVEL_CM, SPACING_CM = 1.05, 0.85


def read_trace(path: str) -> dict[str, list[dict]]:
    """The rows by kind; time, thread and value as numbers, stack as a list of names."""
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames != COLUMNS:
            sys.exit(f"{path}: expected the columns {','.join(COLUMNS)} (cave-trace's output), found "
                     f"{reader.fieldnames}")
        rows: dict[str, list[dict]] = {}
        for row in reader:
            for key in ("time", "thread", "value"):
                row[key] = int(row[key]) if row[key] != "" else None
            row["stack"] = row["stack"].split() if row["kind"] != "edge" else row["stack"]
            rows.setdefault(row["kind"], []).append(row)
    for kind in ("edge", "level", "visit"):
        if kind not in rows:
            sys.exit(f"{path}: no '{kind}' rows: is it cave-trace's output for the toy graph?")
    return rows


def colour(thread: int) -> str:
    return THREAD_COLOURS[thread % len(THREAD_COLOURS)]


def layout(trace: dict) -> dict[str, tuple[float, float]]:
    """Each vertex's place: its BFS level downwards, its level's vertices centred in id order."""
    levels: dict[int, list[str]] = {}
    for row in trace["level"]:
        levels.setdefault(row["value"], []).append(row["vertex"])
    return {v: ((i - (len(vs) - 1) / 2) * SPACING_CM, -level * LEVEL_CM)
            for level, vs in levels.items() for i, v in enumerate(vs)}


def graph(trace: dict, x: float, y: float, fill: dict[str, str], outline: dict[str, str] | None = None,
          labels: dict[str, str] | None = None) -> list[str]:
    """The toy graph at (x, y): `fill` a vertex's colour (white if absent), `outline` a thick border,
    `labels` a note under it."""
    place = {v: (px + x, py + y) for v, (px, py) in layout(trace).items()}
    outline, labels = outline or {}, labels or {}
    lines = [f"\\draw[black!50] ({place[e['vertex']][0]:.2f},{place[e['vertex']][1]:.2f}) -- "
             f"({place[e['stack']][0]:.2f},{place[e['stack']][1]:.2f});" for e in trace["edge"]]
    for v, (px, py) in place.items():
        style = f"fill={fill.get(v, 'white')}" + (f", draw={outline[v]}, line width=1.6pt" if v in outline else "")
        lines.append(f"\\node[circle, draw, inner sep=1.5pt, minimum size=5.5mm, {style}] at ({px:.2f},{py:.2f}) "
                     f"{{{v}}};")
        if v in labels:
            lines.append(f"\\node[note, anchor=north, inner sep=1pt] at ({px:.2f},{py - 0.27:.2f}) {{{labels[v]}}};")
    return lines


def stack_boxes(stack: list[str], x: float, y: float, thread: int, box: float = 0.42) -> list[str]:
    """A stack drawn upwards from (x, y): its bottom first, its top last."""
    return [f"\\node[draw, fill={colour(thread)}!25, minimum width=6mm, minimum height={box * 10:.1f}mm, "
            f"inner sep=0pt, font=\\footnotesize] at ({x:.2f},{y + i * box:.2f}) {{{v}}};" for i, v in enumerate(stack)]


def write_picture(lines: list[str], out: str) -> None:
    with open(out, "w", encoding="utf-8") as handle:
        handle.write("\\begin{tikzpicture}\n" + "\n".join(lines) + "\n\\end{tikzpicture}\n")

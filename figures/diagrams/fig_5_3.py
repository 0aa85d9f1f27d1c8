"""Thesis Figure 5.3 (T1228, T1210-1226, T1490-1503): CAVE's architecture. Right: the block-based
file, a metadata block, then vertex blocks (512 vertices each) and edge blocks (1024 edges each),
all 4 KB. Left: the concurrent cache pool, a global lock over the block map (block id -> slot) and
the clock hand, and slots that each hold a block with its own lock and reference bit. The pool's
state (which edge block in which slot, the reference bits, the hand) and the file's edge blocks
are a snapshot of the engine's cache pool from cave-trace (a one-thread WCC over a small R-MAT
graph with more edge blocks than slots; figures/diagrams/scenes/fig_5_toy.graph).

Usage: python figures/diagrams/fig_5_3.py TRACE.csv <output.tikz>
"""

import sys

from cave_trace import read_trace, write_picture

SLOT_CM = 1.4


def main(trace_csv: str, out: str) -> None:
    trace = read_trace(trace_csv)
    slots = sorted(trace.get("slot", []), key=lambda r: r["thread"])
    if not slots or "hand" not in trace:
        sys.exit(f"{trace_csv}: no cache pool snapshot (slot and hand rows)")
    counts = {r["vertex"]: r["value"] for r in trace["count"]}
    hand = trace["hand"][0]["value"]
    cached = {int(r["vertex"]): r["thread"] for r in slots if int(r["vertex"]) >= 0}
    width = len(slots) * SLOT_CM + 0.4
    mapping = ", ".join(f"{b}$\\to${s}" for b, s in sorted(cached.items()))
    lines = [
        f"\\draw[thick, rounded corners=3pt, fill=classic!6] (-0.3,-0.9) rectangle ({width:.2f},4.4);",
        r"\node[note, anchor=north west] at (-0.3,4.4) {\textbf{Concurrent cache pool} (in memory)};",
        r"\node[box, fill=novel!12, draw=novel] (lock) at (1.0,3.35) {global lock};",
        f"\\node[draw, fill=white, text width={width - 3.1:.2f}cm, align=left, font=\\footnotesize] (map) at "
        f"({(width + 1.9) / 2:.2f},3.35) {{block map (block $\\to$ slot):\\\\{mapping}}};",
    ]
    for r in slots:
        x = 0.45 + r["thread"] * SLOT_CM
        block = int(r["vertex"])
        content = f"block {block}" if block >= 0 else "empty"
        fill = "flashfriendly!20" if block >= 0 else "white"
        lines.append(f"\\node[draw, minimum width=1.2cm, minimum height=1.05cm, fill={fill}, font=\\scriptsize, "
                     f"align=center] (s{r['thread']}) at ({x:.2f},1.3) {{slot {r['thread']}\\\\[-1pt] {content}"
                     f"\\\\[-1pt] ref {r['value']}}};")
    lines += [f"\\draw[->, thick, novel] (s{hand}.south) ++(0,-0.55) node[below, note, text=black] {{clock hand}} "
              f"-- (s{hand}.south);",
              r"\draw[->] (lock) -- (s0.north);",
              f"\\draw[->] (map.south) -- (s{len(slots) - 1}.north);",
              f"\\node[note, anchor=north west, align=left] at (-0.3,-0.95) {{after a WCC with one thread: "
              f"{counts.get('misses', '?')} block reads, {counts.get('hits', '?')} hits}};"]
    blocks = counts.get("edge_blocks", len(cached))
    fx = width + 2.0  # the file, one edge block a row (shaded: in the pool)
    lines += [f"\\node[note, anchor=south] at ({fx + 1.3:.2f},4.1) {{\\textbf{{Block-based file}} (on the SSD)}};",
              f"\\node[draw, minimum width=2.6cm, minimum height=0.45cm, font=\\footnotesize, fill=black!8] at "
              f"({fx + 1.3:.2f},3.65) {{metadata}};",
              f"\\node[draw, minimum width=2.6cm, minimum height=0.45cm, font=\\footnotesize, fill=internals!15] at "
              f"({fx + 1.3:.2f},3.15) {{vertex blocks}};"]
    step = min(0.45, 3.3 / max(blocks, 1))
    for b in range(blocks):
        fill = "flashfriendly!20" if b in cached else "white"
        lines.append(f"\\node[draw, minimum width=2.6cm, minimum height={step * 10:.1f}mm, inner sep=0pt, "
                     f"font=\\scriptsize, fill={fill}] at ({fx + 1.3:.2f},{2.65 - b * step:.2f}) {{edge block {b}}};")
    lines += [f"\\node[note, anchor=north, align=center] at ({fx + 1.3:.2f},{2.45 - blocks * step:.2f}) "
              "{4 KB blocks: 512 vertices\\\\or 1024 edges each};",
              f"\\draw[<->, thick] ({width:.2f},1.7) -- node[note, above] {{read}} ({fx:.2f},1.7);"]
    write_picture(lines, out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])

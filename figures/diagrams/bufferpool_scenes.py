"""Drawing a bufferpool scene traced by ace-sim-scene (systems/ace/sim: the thesis's toy examples
stepped through the simulator's own pool and policies) as TikZ: the pool before the request, from
the end the policy evicts first, what the request did (pages written at once, the page evicted),
and the pool after it. Shared by the scripts of Figures 4.4 and 4.6; every page, flag, count and
choice drawn comes from the trace."""

from __future__ import annotations

import csv
from pathlib import Path

COLUMNS = ["step", "kind", "position", "page", "dirty", "cold", "usage", "hand"]
BOX_CM = 1.05  # one page's box, and the distance between two


class SceneError(ValueError):
    pass


def read_scene(path: str) -> dict:
    """{'before': [frame rows], 'after': [...], 'request': row, 'written': [pages], 'evicted': [pages]}."""
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames != COLUMNS:
            raise SceneError(f"{path}: expected the columns {','.join(COLUMNS)} (ace-sim-scene's output), "
                             f"found {reader.fieldnames}")
        rows = [{k: (v if k == "kind" else int(v)) for k, v in row.items()} for row in reader]
    steps = {row["step"] for row in rows}
    if steps != {0, 1}:
        raise SceneError(f"{path}: a scene drawn here has one request (steps 0 and 1), found steps {sorted(steps)}")
    frames = {s: sorted((r for r in rows if r["step"] == s and r["kind"] == "frame"), key=lambda r: r["position"])
              for s in (0, 1)}
    return {"before": frames[0], "after": frames[1],
            "request": next(r for r in rows if r["kind"] == "request"),
            "written": [r["page"] for r in sorted(rows, key=lambda r: r["position"]) if r["kind"] == "written"],
            "evicted": [r["page"] for r in rows if r["kind"] == "evicted"]}


def _page_node(x: float, y: float, frame: dict, *, written=False, evicted=False, marks: str = "") -> list[str]:
    style = "dirty" if frame["dirty"] else "clean"
    extra = ", draw=novel, very thick" if written else ""
    lines = [f"\\node[{style}{extra}] at ({x:.2f},{y:.2f}) {{p{frame['page']}}};"]
    if evicted:
        lines.append(f"\\draw[very thick, black!70] ({x - 0.4:.2f},{y - 0.3:.2f}) -- ({x + 0.4:.2f},{y + 0.3:.2f});")
    if marks:
        lines.append(f"\\node[font=\\scriptsize, anchor=north] at ({x:.2f},{y - 0.38:.2f}) {{{marks}}};")
    return lines


def _marks(frame: dict, policy: str) -> str:
    if policy == "clock":
        return f"usage {frame['usage']}"
    if policy == "lru_wsr" and frame["dirty"]:
        return f"cold {frame['cold']}"
    return ""


def pool_row(frames: list[dict], y: float, policy: str, *, written=(), evicted=(), label: str = "",
             window: int = 0) -> list[str]:
    """One state of the pool as a row of pages, the evict-first end on the left."""
    lines = [f"\\node[note, anchor=east] at (-0.55,{y:.2f}) {{{label}}};"] if label else []
    for i, frame in enumerate(frames):
        lines += _page_node(i * BOX_CM, y, frame, written=frame["page"] in written, evicted=frame["page"] in evicted,
                            marks=_marks(frame, policy))
        if frame["hand"]:
            lines.append(f"\\draw[<-, thick, novel] ({i * BOX_CM:.2f},{y + 0.4:.2f}) -- ++(0,0.3) "
                         "node[left, note, inner sep=1pt, text=novel] {hand};")
    if window:  # CFLRU's clean-first region: the `window` pages at the LRU end
        right = (window - 1) * BOX_CM + 0.5
        lines.append(f"\\draw[dashed, flashfriendly!80!black, thick] (-0.55,{y - 0.42:.2f}) rectangle "
                     f"({right:.2f},{y + 0.42:.2f});")
        lines.append(f"\\node[note, anchor=north, text=flashfriendly!60!black] at ({(right - 0.55) / 2:.2f},"
                     f"{y - 0.42:.2f}) {{clean-first region}};")
    return lines


def ends(n: int, y: float, policy: str) -> list[str]:
    if policy == "clock":
        return []  # a clock has no ends: its frames in order, and the hand
    return [f"\\node[note, anchor=south west] at (-0.5,{y:.2f}) {{LRU end (evicted first)}};",
            f"\\node[note, anchor=south east] at ({(n - 1) * BOX_CM + 0.5:.2f},{y:.2f}) {{MRU end}};"]


def outcome(scene: dict) -> str:
    request = scene["request"]
    parts = [f"request p{request['page']} ({'write' if request['dirty'] else 'read'}), a miss"]
    if scene["written"]:
        parts.append("written at once: " + ", ".join(f"p{p}" for p in scene["written"]))
    parts.append("evicted: " + (", ".join(f"p{p}" for p in scene["evicted"]) or "none"))
    return "; ".join(parts)


def scene_panel(scene: dict, policy: str, x: float, y: float, title: str, *, window: int = 0,
                extra: str = "") -> list[str]:
    """Before, what happened, after: PANEL_HEIGHT of height from (x, y) downwards."""
    n = len(scene["before"])
    lines = [r"\begin{scope}" + f"[shift={{({x:.2f},{y:.2f})}}]",
             r"\node[panel, anchor=west] at (-1.6,0) {" + title + "};"]
    lines += ends(n, -0.75, policy)
    lines += pool_row(scene["before"], -1.3, policy, written=scene["written"], evicted=scene["evicted"],
                      label="before", window=window)
    lines.append(f"\\node[note, anchor=west, align=left, text width={n * BOX_CM + 0.6:.2f}cm] at (-1.6,-2.4) "
                 f"{{{outcome(scene)}{extra}}};")
    lines += pool_row(scene["after"], -3.6, policy, label="after")
    return lines + [r"\end{scope}"]


PANEL_HEIGHT = 4.8
PANEL_WIDTH = 8.4


def legend(y: float) -> list[str]:
    entries = [(0.0, "clean", "clean", ""), (2.0, "dirty", "dirty", ""),
               (4.0, "clean, draw=novel, very thick", "written by this request", ""),
               (8.3, "clean", "evicted", f"\\draw[very thick, black!70] (8.05,{y - 0.2:.2f}) -- (8.55,{y + 0.2:.2f});")]
    return [f"\\node[{style}, minimum width=6mm] at ({x},{y:.2f}) {{}}; {extra}"
            f"\\node[note, anchor=west] at ({x + 0.35:.2f},{y:.2f}) {{{label}}};" for x, style, label, extra in entries]


def write_picture(lines: list[str], out: str) -> None:
    Path(out).write_text("\\begin{tikzpicture}\n" + "\n".join(lines) + "\n\\end{tikzpicture}\n", encoding="utf-8")

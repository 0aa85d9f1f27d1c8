"""The labs' handouts as PDFs: each lab's README.md, in the subset of Markdown the handouts use
(headings, paragraphs, lists, tables, indented or fenced code, `code`, **bold**, *italic*, links),
turned into LaTeX and typeset with latexmk (pdflatex), as the artifact's document is.

    python -m labkit.handout [--lab N ...]     # labs/build/lab-<n>.pdf, every lab by default

The same handout gives the same bytes (a fixed date, no trailer ID). Markdown the converter does
not know (nested lists, images, HTML) is an error naming the line, not a silent misprint."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

from ssdartifact.latex import escape

LABS_DIR = Path(__file__).resolve().parents[1]
BUILD = LABS_DIR / "build"
PREAMBLE = r"""\documentclass[11pt,a4paper]{article}
\usepackage[utf8]{inputenc}
\usepackage[T1]{fontenc}
\usepackage{lmodern}
\usepackage[margin=2.2cm]{geometry}
\usepackage{booktabs}
\usepackage{tabularx}
\usepackage{alltt}
\usepackage{amssymb}
\usepackage[hidelinks]{hyperref}
\setlength{\parindent}{0pt}
\setlength{\parskip}{0.6em}
\renewcommand{\arraystretch}{1.2}
\pdfinfoomitdate=1
\pdftrailerid{}
\begin{document}
"""


class HandoutError(ValueError):
    pass


def inline(text: str) -> str:
    """`code`, **bold**, *italic* and [text](link) in a line of Markdown; the rest escaped."""
    out, position = [], 0
    pattern = re.compile(r"`([^`]+)`|\*\*(.+?)\*\*|\*(.+?)\*|\[([^\]]+)\]\(([^)]+)\)")
    for match in pattern.finditer(text):
        out.append(escape(text[position:match.start()]))
        code, bold, italic, label, _target = match.groups()
        if code is not None:
            out.append(r"\texttt{" + escape(code).replace("-", "-{}") + "}")  # no -- ligature in an option
        elif bold is not None:
            out.append(r"\textbf{" + inline(bold) + "}")
        elif italic is not None:
            out.append(r"\emph{" + inline(italic) + "}")
        else:
            out.append(inline(label))  # a link to another file of the repository: its words
        position = match.end()
    out.append(escape(text[position:]))
    return "".join(out)


def _code(lines: list[str]) -> str:
    # alltt keeps only \ { } special: a symbol's $...$ from escape() becomes \(...\)
    body = "\n".join(re.sub(r"(?<!\\)\$(.+?)(?<!\\)\$", r"\\(\1\\)",
                            escape(line).replace(r"/\allowbreak{}", "/").replace("-", "-{}"))
                     for line in lines)
    return "\\begin{footnotesize}\\begin{alltt}\n" + body + "\n\\end{alltt}\\end{footnotesize}\n"


def _cells(line: str) -> list[str]:
    return [cell.strip().replace(r"\|", "|") for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def _table(lines: list[str]) -> str:
    header, rows = _cells(lines[0]), [_cells(line) for line in lines[2:]]
    if any(len(row) != len(header) for row in rows):
        raise HandoutError(f"a table row has not {len(header)} cells: {lines}")
    align = "l" * (len(header) - 1) + "X"
    body = [" & ".join(r"\textbf{" + inline(cell) + "}" for cell in header) + r" \\", r"\midrule"]
    body += [" & ".join(inline(cell) for cell in row) + r" \\" for row in rows]
    return ("{\\small\\begin{tabularx}{\\linewidth}{" + align + "}\n\\toprule\n" + "\n".join(body)
            + "\n\\bottomrule\n\\end{tabularx}}\n\\medskip\n")


def to_latex(markdown: str, source: str = "README.md") -> str:
    """The handout's body as LaTeX (without the preamble)."""
    lines = markdown.splitlines()
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        where = f"{source}:{i + 1}"
        if not line.strip():
            i += 1
        elif line.startswith("```"):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
            if end is None:
                raise HandoutError(f"{where}: a code block that never ends")
            out.append(_code(lines[i + 1:end]))
            i = end + 1
        elif line.startswith("    "):
            block = []
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                block.append(lines[i][4:])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            out.append(_code(block))
        elif line.startswith("#"):
            level, title = len(line) - len(line.lstrip("#")), line.lstrip("#").strip()
            command = {1: "section*", 2: "subsection*", 3: "subsubsection*"}.get(level)
            if command is None:
                raise HandoutError(f"{where}: headings go three levels deep at most")
            out.append(f"\\{command}{{{inline(title)}}}\n")
            i += 1
        elif line.startswith("|"):
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            if len(block) < 2 or not re.fullmatch(r"\|[\s:|-]+\|?", block[1].strip()):
                raise HandoutError(f"{where}: a table needs a header and a |---| line")
            out.append(_table(block))
        elif re.match(r"(- |\d+\. )", line):
            numbered = line[0].isdigit()
            items = []
            while i < len(lines) and lines[i].strip():
                if re.match(r"(- |\d+\. )", lines[i]):
                    items.append(re.sub(r"^(- |\d+\. )", "", lines[i]))
                elif lines[i].startswith(" "):
                    if re.match(r"\s+(- |\d+\. )", lines[i]):
                        raise HandoutError(f"{source}:{i + 1}: nested lists are not supported")
                    items[-1] += " " + lines[i].strip()
                else:
                    break
                i += 1
            kind = "enumerate" if numbered else "itemize"
            out.append(f"\\begin{{{kind}}}\\setlength{{\\itemsep}}{{0pt}}\n"
                       + "".join(f"\\item {inline(item)}\n" for item in items)
                       + f"\\end{{{kind}}}\n")
        elif line.lstrip().startswith(("<", "![")):
            raise HandoutError(f"{where}: images and HTML are not supported in a handout")
        else:
            paragraph = []
            while i < len(lines) and lines[i].strip() and not lines[i].startswith(("#", "|", "    ", "```")) \
                    and not re.match(r"(- |\d+\. )", lines[i]):
                paragraph.append(lines[i].strip())
                i += 1
            out.append(inline(" ".join(paragraph)) + "\n")
    return "\n".join(out)


def build(lab_dir: Path, pdf: Path) -> Path:
    """Typeset `lab_dir`/README.md into `pdf` (its LaTeX and latexmk's files beside it, in build/tex)."""
    tex_dir = BUILD / "tex" / lab_dir.name
    tex_dir.mkdir(parents=True, exist_ok=True)
    body = to_latex((lab_dir / "README.md").read_text(encoding="utf-8"), f"{lab_dir.name}/README.md")
    tex = tex_dir / "handout.tex"
    tex.write_text(PREAMBLE + body + "\\end{document}\n", encoding="utf-8")
    environment = {**os.environ, "SOURCE_DATE_EPOCH": "0", "FORCE_SOURCE_DATE": "1"}
    done = subprocess.run(["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", f"-outdir={tex_dir}",
                           str(tex)], capture_output=True, text=True, env=environment)
    if done.returncode != 0:
        raise HandoutError(f"latexmk failed on {tex} (its log: {tex_dir / 'handout.log'}):\n{done.stdout[-2000:]}")
    pdf.parent.mkdir(parents=True, exist_ok=True)
    (tex_dir / "handout.pdf").replace(pdf)
    return pdf


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.handout", description=__doc__.split("\n\n")[0])
    parser.add_argument("--lab", type=int, action="append", help="a lab's number (default: every lab)")
    args = parser.parse_args(argv)
    labs = sorted(LABS_DIR.glob("[0-9]*-*/README.md"))
    chosen = [p.parent for p in labs if args.lab is None or int(p.parent.name.split("-")[0]) in args.lab]
    if not chosen:
        print(f"handout: no lab {args.lab} (labs: {', '.join(p.parent.name for p in labs)})", file=sys.stderr)
        return 2
    try:
        for lab_dir in chosen:
            pdf = build(lab_dir, BUILD / f"lab-{lab_dir.name.split('-')[0]}.pdf")
            print(f"handout: {pdf.relative_to(LABS_DIR.parent)}")
    except HandoutError as error:
        print(f"handout: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

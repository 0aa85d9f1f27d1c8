"""The labs' handouts as PDFs (labkit.handout): the Markdown the handouts use becomes LaTeX, what it
does not know is refused naming the line, and every handout typesets into the same bytes twice."""

from __future__ import annotations

import shutil

import pytest
from labkit import handout


def test_the_handouts_markdown_becomes_latex():
    latex = handout.to_latex("""# Lab 9: α and k

*About 3 hours.*

Run `--policy x` and **read** [the guide](README.md): 50 % of $5 & more_.

- one
  continued
- two

1. first
2. second

| test | points |
|---|---|
| a \\| b | 10 |

    make grade LAB=9   # α
""")
    assert r"\section*{Lab 9: $\alpha$ and k}" in latex
    assert r"\emph{About 3 hours.}" in latex
    assert r"\texttt{-{}-{}policy x}" in latex and r"\textbf{read}" in latex
    assert "the guide: 50 \\% of \\$5 \\& more\\_." in latex
    assert "\\begin{itemize}" in latex and "\\item one continued" in latex
    assert "\\begin{enumerate}" in latex and "\\item second" in latex
    assert "\\textbf{test} & \\textbf{points}" in latex and "a | b & 10" in latex
    assert "\\begin{alltt}\nmake grade LAB=9   # \\(\\alpha\\)\n\\end{alltt}" in latex.replace("\\#", "#")


@pytest.mark.parametrize("markdown, message", [
    ("```\ncode", "README.md:1: a code block that never ends"),
    ("- a\n  - b", "README.md:2: nested lists are not supported"),
    ("text\n\n![a figure](f.png)", "README.md:3: images and HTML"),
    ("| a |\n| b |", "a table needs a header"),
    ("#### deep", "three levels deep"),
    ("a ☃ snowman", "no LaTeX form for the character"),
])
def test_what_the_converter_does_not_know_is_refused(markdown, message):
    with pytest.raises(ValueError, match=message):
        handout.to_latex(markdown)


@pytest.mark.skipif(shutil.which("latexmk") is None, reason="latexmk is not installed (make setup installs it)")
def test_every_handout_typesets_into_the_same_bytes_twice(tmp_path, monkeypatch):
    monkeypatch.setattr(handout, "BUILD", tmp_path)
    for lab in sorted(handout.LABS_DIR.glob("[0-9]*-*/README.md")):
        first = handout.build(lab.parent, tmp_path / "first.pdf").read_bytes()
        second = handout.build(lab.parent, tmp_path / "second.pdf").read_bytes()
        assert first.startswith(b"%PDF") and first == second, lab

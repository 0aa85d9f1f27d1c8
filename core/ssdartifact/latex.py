"""Turning plain text (captions, quotes, CSV cells) into LaTeX for pdflatex."""

from __future__ import annotations

import math
import re

_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}
# Characters pdflatex's utf8 input cannot typeset by itself.
_UNICODE = {
    "α": r"$\alpha$", "β": r"$\beta$", "γ": r"$\gamma$", "δ": r"$\delta$", "λ": r"$\lambda$",
    "μ": r"$\mu$", "Δ": r"$\Delta$", "×": r"$\times$", "≈": r"$\approx$", "≥": r"$\geq$",
    "≤": r"$\leq$", "−": r"$-$", "·": r"$\cdot$", "±": r"$\pm$", "→": r"$\rightarrow$",
    "←": r"$\leftarrow$", "✓": r"\checkmark{}", "✗": r"$\times$", "§": r"\S{}", "∞": r"$\infty$", "µ": r"$\mu$",
}
# Non-ASCII characters that T1-encoded Latin Modern typesets as they are.
_PASSTHROUGH = set("áàâäéèêëíìîïóòôöúùûüçñÁÉÍÓÚÖÜ–—‘’“”…")


def escape(text: str) -> str:
    out = []
    for char in str(text):
        if char in _SPECIAL:
            out.append(_SPECIAL[char])
        elif char in _UNICODE:
            out.append(_UNICODE[char])
        elif ord(char) < 128 or char in _PASSTHROUGH:
            out.append(char)
        else:
            raise ValueError(f"no LaTeX form for the character {char!r} (U+{ord(char):04X}) in {text!r}; "
                             "add it to _UNICODE in core/ssdartifact/latex.py")
    # Let long identifiers such as file paths break after slashes.
    return re.sub(r"/", r"/\\allowbreak{}", "".join(out))


PAGE_ROWS = 40  # more rows than a page holds beside its caption: a table that must break across pages


def tabular(header: list[str], rows: list[list[str]], align: str) -> str:
    """A booktabs tabular; cells are escaped here. One of more than PAGE_ROWS rows is a longtable,
    which breaks across pages with its header on each (a tabular would run off the page's foot);
    the document sets such a table outside a float (paper.breaks_across_pages)."""
    head = [r"\toprule", " & ".join(map(escape, header)) + r" \\", r"\midrule"]
    body = [" & ".join(map(escape, row)) + r" \\" for row in rows]
    if len(rows) > PAGE_ROWS:
        lines = [rf"\begin{{longtable}}{{{align}}}", *head, r"\endhead", r"\bottomrule", r"\endfoot", *body,
                 r"\end{longtable}"]
    else:
        lines = [rf"\begin{{tabular}}{{{align}}}", *head, *body, r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


# An empty or NA table cell.
MISSING = "–"


def significant(text: str, digits: int = 3) -> str:
    """Three significant digits, but never fewer than the integer digits (2094.4 -> "2094", 6.812 -> "6.81");
    an empty or NA cell is printed as a dash."""
    if text.strip() in ("", "NA", "nan", "NaN"):
        return MISSING
    value = float(text)
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def concurrency(k: str, saturated: str) -> str:
    """A measured k: "≥N" when its thread search found no plateau (N is then only a lower bound)."""
    if k.strip() in ("", "NA", "nan", "NaN"):
        return MISSING
    value = str(int(float(k)))
    return value if saturated.strip().lower() == "true" else f"≥{value}"

"""The LaTeX document, generated from configs/inventory/: one chapter per thesis
chapter with every figure and table, regenerated ones with their provenance, those this
machine could not make marked "not run" with why and the command that makes them, and
the rest marked "not reproduced yet"; a coverage page and the claims report.

Beside each regenerated item the document says what this run found: the verdict of the
thesis's claims about it (passed, failed with the measured numbers and, for a failure known
at this scale, why), the devices it was measured on when the thesis names its own, and the
thesis's panels it does not draw (such an item counts as partially reproduced)."""

from __future__ import annotations

import csv
from pathlib import Path

from . import REPO_ROOT, config
from .files import atomic_write_text, sha256_file
from .latex import escape

FIGURE_DIR = "figures/generated"
TABLE_DIR = "paper/generated"
# Diagrams as code: a TikZ picture (fig_N_M.tex), or a Python script that writes one from a
# trace of our own systems (fig_N_M.py); either is typeset into a PDF like an R figure.
DIAGRAM_DIR = "figures/diagrams"


def is_diagram(item: dict) -> bool:
    return Path(item["reproduced"]["script"]).parent == Path(DIAGRAM_DIR)


def output_of(item: dict) -> str:
    """Where the regenerated item is written: derived from its script (R and diagrams draw figures,
    the other Python scripts typeset tables)."""
    script = Path(item["reproduced"]["script"])
    if script.suffix == ".R" or is_diagram(item):
        return f"{FIGURE_DIR}/{script.stem}.pdf"
    return f"{TABLE_DIR}/{script.stem}.tex"


def reproduced_items(inventory: dict) -> list[dict]:
    """Thesis figures and tables the artifact regenerates, and the supplementary figures."""
    thesis = [item for kind in ("figures", "tables") for item in inventory[kind] if "reproduced" in item]
    return thesis + inventory.get("supplementary", [])


def restrict_to_built(inventory: dict, built: set[str], not_run: dict[str, dict] | None = None) -> dict:
    """The inventory as this build sees it: an item whose output this profile does not build counts
    as not reproduced (its experiment is not in the profile), or as not run when one of its inputs
    is in `not_run` (this machine could not make it: its `why` and `fix`)."""
    def item(entry: dict) -> dict:
        if "reproduced" in entry and output_of(entry) not in built:
            reasons = [not_run[p] for p in entry["reproduced"]["inputs"] if p in (not_run or {})]
            entry = {k: v for k, v in entry.items() if k != "reproduced"}
            if reasons:
                entry["not_run"] = reasons[0]
            else:
                entry["panels"] = ("not built by this profile; " + entry.get("panels", "")).rstrip("; ")
        return entry
    restricted = {**inventory, **{kind: [item(e) for e in inventory[kind]] for kind in ("figures", "tables")}}
    # a supplementary item is shown when built, or marked not run when this machine could not make it
    supplementary = []
    for entry in inventory.get("supplementary", []):
        reasons = [not_run[p] for p in entry["reproduced"]["inputs"] if p in (not_run or {})]
        if output_of(entry) in built:
            supplementary.append(entry)
        elif reasons:
            supplementary.append({**{k: v for k, v in entry.items() if k != "reproduced"}, "not_run": reasons[0]})
    restricted["supplementary"] = supplementary
    return restricted


def _column_values(path: Path, column: str) -> list[str]:
    """The distinct values of one column of a CSV, in their first order ([] when it is absent)."""
    if not path.exists():
        return []
    with open(path, newline="", encoding="utf-8") as handle:
        rows = csv.DictReader(handle)
        if column not in (rows.fieldnames or []):
            return []
        return list(dict.fromkeys(row[column] for row in rows if row[column]))


def drawn_panels(item: dict, root: Path = REPO_ROOT) -> list[str] | None:
    """The thesis's panels this run draws, in the thesis's order (None: the thesis's figure has no
    lettered panels, or the item is not reproduced). `reproduced.panels` lists them, or says which
    column of which result CSV picks them (e.g. one panel per generated graph)."""
    thesis, reproduced = item.get("thesis_panels"), item.get("reproduced")
    if not thesis or reproduced is None:
        return None
    spec = reproduced.get("panels")
    if spec is None:
        raise ValueError(f"{item['id']}: thesis_panels without reproduced.panels (which of them are drawn?)")
    if isinstance(spec, dict):
        values = _column_values(root / spec["data"], spec["column"])
        spec = {spec["letters"][v] for v in values if v in spec["letters"]}
    return [panel for panel in thesis if panel in spec]


def missing_panels(item: dict, root: Path = REPO_ROOT) -> list[str]:
    drawn = drawn_panels(item, root)
    return [] if drawn is None else [p for p in item["thesis_panels"] if p not in drawn]


def with_panels(inventory: dict, root: Path = REPO_ROOT) -> dict:
    """The inventory with each reproduced item's missing panels (reproduced.missing_panels) read from
    this run's data, so that coverage and pages count panels, not figures."""
    def item(entry: dict) -> dict:
        if "reproduced" not in entry:
            return entry
        return {**entry, "reproduced": {**entry["reproduced"], "missing_panels": missing_panels(entry, root)}}
    return {**inventory, **{kind: [item(e) for e in inventory[kind]] for kind in ("figures", "tables")}}


def _device_text(name: str, declared: dict[str, dict], presets: dict[str, dict]) -> str:
    device = declared.get(name)
    if device is None:
        return name
    if device["kind"] == "emulated" and "preset" in device:
        return f"{name} (emulated with the α and k of the {presets[device['preset']]['description']})"
    kind = "emulated" if device["kind"] == "emulated" else device["kind"]
    return f"{name} ({kind}: {device['description']})" if "description" in device else f"{name} ({kind})"


def measured_devices(item: dict, root: Path = REPO_ROOT) -> list[str]:
    """The devices this run measured an item on: the `device` column of its result CSVs (the thesis's
    own numbers, results/reference/, are not measurements of this run)."""
    inputs = [p for p in item.get("reproduced", {}).get("inputs", []) if not p.startswith("results/reference/")]
    return list(dict.fromkeys(v for p in inputs for v in _column_values(root / p, "device")))


def device_note(item: dict, root: Path = REPO_ROOT) -> str:
    """Which devices this run measured the item on, beside those the thesis measured it on (its
    `thesis_devices`): a reader must not take a local disk's curve for the Optane SSD's."""
    devices = measured_devices(item, root)
    if not devices or "thesis_devices" not in item:
        return ""
    declared = {d["name"]: d for d in config.load("devices.yaml")["devices"]}
    presets = config.load("emussd_presets.yaml")["presets"]
    names = ", ".join(_device_text(d, declared, presets) for d in devices)
    return (f"\\devicenote{{{escape(names)}}}{{{escape(item['thesis_devices'])}}}")


def _short_hash(path: str, root: Path = REPO_ROOT) -> str:
    return sha256_file(root / path)[:12]


def _panels_text(panels: list[str]) -> str:
    return ", ".join(panels)


def _status(item: dict) -> str:
    if "not_run" in item:
        return f"not run: {escape(item['not_run']['why'])}"
    if "reproduced" not in item:
        return "not reproduced yet"
    reproduced = item["reproduced"]
    missing = reproduced.get("missing_panels", [])
    if missing:
        drawn = len(item["thesis_panels"]) - len(missing)
        return f"partially reproduced: {drawn} of {len(item['thesis_panels'])} panels (not {_panels_text(missing)})"
    return "partially reproduced" if "partial" in reproduced else "reproduced"


def claims_about(label: str, claims: list[dict]) -> list[dict]:
    """Claims about an item ('Figure 3.2' also matches 'Figure 3.2C', not 'Figure 3.21')."""
    return [c for c in claims if c["item"] == label or
            (c["item"].startswith(label) and not c["item"][len(label)].isdigit())]


def _claims_for(label: str, claims: list[dict]) -> str:
    mine = claims_about(label, claims)
    if not mine:
        return ""
    counts = {s: sum(c["status"] == s for c in mine) for s in ("pass", "fail", "not run")}
    parts = [f"{n} {s}" for s, n in counts.items() if n]
    return f" Claims checked: {', '.join(parts)} (see the claims report)."


MEASURED_CHARS = 320  # a failure's measured numbers beside its figure; the claims report has them all


def _measured(claim: dict) -> str:
    text = claim["measured"] or claim["detail"]
    if len(text) <= MEASURED_CHARS:
        return text
    return text[:MEASURED_CHARS].rstrip() + " ... (the claims report lists all)"


def verdict_tex(label: str, claims: list[dict]) -> str:
    """What this run says of the thesis's claims about an item, set next to its caption: a headline
    (hold, do not hold, not checked) and one line per claim (passed; failed with the measured numbers
    and why when the failure is known at this scale; not run and why)."""
    mine = claims_about(label, claims)
    if not mine:
        return ("\\verdict{none}{Not checked: no claim in configs/claims/ tests it, so its caption is the "
                "thesis's words, not a finding of this run.}{}\n")
    failed = [c for c in mine if c["status"] == "fail"]
    passed = sum(c["status"] == "pass" for c in mine)
    not_run = len(mine) - len(failed) - passed
    rest = f"; {not_run} not run" if not_run else ""
    def some(count: int) -> str:
        if len(mine) == 1:
            return "its claim"
        return f"all its {count} claims" if count == len(mine) else f"{count} of its {len(mine)} claims"
    if failed:
        kind, head = "fail", f"{some(len(failed))} failed on this run{rest}."
    elif passed:
        kind, head = "pass", f"{some(passed)} passed on this run{rest}."
    else:
        kind, head = "none", "Not checked here: " + ("its claim was not run." if len(mine) == 1
                                                     else f"its {len(mine)} claims were not run.")
    lines = []
    for c in mine:
        quote = f"``{escape(c['quote'])}''"
        if c["status"] == "pass":
            lines.append(f"\\claimline{{pass}}{{{quote} Measured: {escape(_measured(c))}.}}")
        elif c["status"] == "fail":
            why = (f" \\textit{{Known at this scale:}} {escape(c['known_reason'])}" if c["known_reason"]
                   else " \\textbf{Unexpected:} configs/claims/ does not list this failure.")
            lines.append(f"\\claimline{{fail}}{{{quote} Measured: {escape(_measured(c))}.{why}}}")
        else:
            lines.append(f"\\claimline{{not run}}{{{quote} {escape(c['detail'])}.}}")
    return f"\\verdict{{{kind}}}{{{escape(head)}}}{{{''.join(lines)}}}\n"


def _provenance(item: dict, root: Path = REPO_ROOT) -> str:
    reproduced = item["reproduced"]
    # the script is the checkout's; its inputs are the results tree's
    script = f"\\texttt{{{escape(reproduced['script'])}}} ({_short_hash(reproduced['script'])})"
    if reproduced["inputs"]:
        inputs = ", ".join(f"\\texttt{{{escape(p)}}} ({_short_hash(p, root)})" for p in reproduced["inputs"])
        text = f"Regenerated by {script} from {inputs} (sha256 prefixes)."
    else:
        text = f"Drawn by {script} (sha256 prefix)."
    if "note" in reproduced:
        text += f" Parameters: {escape(reproduced['note'])}."
    missing = reproduced.get("missing_panels", [])
    if missing:
        drawn = [p for p in item["thesis_panels"] if p not in missing]
        text += (f" \\textbf{{Panels:}} {_panels_text(drawn)} of the thesis's {_panels_text(item['thesis_panels'])}; "
                 f"{_panels_text(missing)} not drawn by this run.")
    if "partial" in reproduced:
        text += f" \\textbf{{Not reproduced yet:}} {escape(reproduced['partial'])}."
    return text


def _thesis_ref(kind: str, item: dict) -> str:
    if "thesis_line" not in item:
        return "Not a thesis figure."
    return f"Thesis {kind} {item['id']}, caption at line T{item['thesis_line']}; class: {item['class']}."


def item_tex(kind: str, item: dict, claims: list[dict], root: Path = REPO_ROOT) -> str:
    """A figure or table: the regenerated one with, next to its caption, the verdict of its claims
    and the devices it was measured on, then its provenance; or a "not reproduced yet" box."""
    label = f"{kind} {item['id']}"
    if "not_run" in item and "thesis_line" not in item:  # a supplementary item: no class, no thesis line
        return (f"{{\\par\\medskip\\noindent\\textbf{{{label}}} --- \\textcolor{{red!60!black}}"
                f"{{not run: {escape(item['not_run']['why'])}}}\\\\[2pt]\\small\\textit{{{escape(item['caption'])}}}"
                f"\\\\[2pt]\\footnotesize To run it: \\texttt{{{escape(item['not_run']['fix'])}}}\\par\\medskip}}\n")
    if "not_run" in item:
        return (f"\\notrun{{{label}}}{{{escape(item['class'])}}}{{{escape(item['caption'])}}}"
                f"{{{escape(item['not_run']['why'])}}}{{{escape(item['not_run']['fix'])}}}{{{item['thesis_line']}}}\n")
    if "reproduced" not in item:
        return (f"\\notreproduced{{{label}}}{{{escape(item['class'])}}}{{{escape(item['caption'])}}}"
                f"{{{escape(item.get('panels', ''))}}}{{{item['thesis_line']}}}\n")
    if kind == "Figure" and is_diagram(item):
        # at the size it was drawn (its text at the document's size), narrowed only to fit the page
        body = f"\\diagram{{{output_of(item)}}}"
    elif kind == "Figure":
        # a grid of many panels is drawn for a page of its own, at its size (its labels readable)
        height = "0.82" if item["reproduced"].get("full_page") else "0.55"
        body = (f"\\includegraphics[width=\\linewidth,height={height}\\textheight,keepaspectratio]"
                f"{{{output_of(item)}}}")
    else:
        body = f"\\input{{{output_of(item)}}}"
    caption = f"\\caption*{{\\textbf{{{label}.}} {escape(item['caption'])}}}"
    # Figures carry their caption below, tables above, as in the thesis.
    parts = [body, caption] if kind == "Figure" else [caption, body]
    environment = kind.lower()
    # What this run found follows the caption, outside the float so that a long verdict may run on
    # to the next page.
    found = "" if is_diagram(item) else verdict_tex(label, claims) + device_note(item, root)
    provenance = f"\\provenance{{{_thesis_ref(kind, item)} {_provenance(item, root)}{_claims_for(label, claims)}}}"
    if kind == "Table" and breaks_across_pages(root / output_of(item)):
        # a longtable cannot sit in a float: its caption above it, in a group of their own
        return "\n".join([r"\begingroup\centering", caption.replace(r"\caption*", r"\captionof*{table}", 1), body,
                          r"\endgroup", found + provenance, r"\bigskip", ""])
    # [H] (float.sty): each item stays where it is in the thesis's order; a floating one that fills
    # most of a page would be set alone on a float page, centred, with its upper half left empty.
    return "\n".join([
        f"\\begin{{{environment}}}[H]", r"\centering", *parts, f"\\end{{{environment}}}",
        found + provenance, r"\bigskip", ""])


def breaks_across_pages(table: Path) -> bool:
    """A generated table longer than a page (latex.tabular: a longtable)."""
    return table.suffix == ".tex" and table.exists() and r"\begin{longtable}" in table.read_text(encoding="utf-8")


def chapter_tex(chapter: dict, inventory: dict, claims: list[dict], root: Path = REPO_ROOT) -> str:
    number = chapter["number"]
    parts = [f"\\chapter{{{escape(chapter['title'])}}}",
             f"Thesis Chapter {number} begins at line T{chapter['thesis_line']}.", ""]
    parts += [item_tex("Figure", f, claims, root) for f in inventory["figures"] if f["chapter"] == number]
    parts += [item_tex("Table", t, claims, root) for t in inventory["tables"] if t["chapter"] == number]
    parts.append(r"\clearpage")
    return "\n".join(parts) + "\n"


def appendix_tex(inventory: dict, claims: list[dict], root: Path = REPO_ROOT) -> str:
    """Supplementary figures and tables: what the artifact adds to check its own instruments,
    and the second thesis's device measurements (Yang) on the same devices."""
    items = inventory.get("supplementary", [])
    if not items:
        return ""
    parts = [r"\appendix", r"\chapter{Supplementary figures and tables}",
             "These are not in the thesis: they validate the artifact's own instruments, or add the second "
             "thesis's device measurements (queue depth, tail latency, interference) on the same devices.", ""]
    parts += [item_tex("Table" if output_of(item).endswith(".tex") else "Figure", item, claims, root) for item in items]
    return "\n".join(parts) + "\n"


def coverage_tex(inventory: dict) -> tuple[str, str]:
    """The coverage lines of the title page and the item-by-item coverage table."""
    lines = []
    for kind, noun in (("figures", "figures"), ("tables", "tables")):
        items = inventory[kind]
        full = sum(_status(i) == "reproduced" for i in items)
        partial = sum(_status(i).startswith("partially reproduced") for i in items)
        lines.append(f"\\coverageline{{{full + partial}}}{{{len(items)}}}{{{noun}}}{{{partial}}}")
    absent = [f"{noun} {item['id']}" for kind, noun in (("figures", "Figure"), ("tables", "Table"))
              for item in inventory[kind] if "reproduced" not in item and "not_run" not in item]
    if absent:
        lines.append(f"\\item \\textbf{{Not made by this run:}} {', '.join(absent)}. Each is in its chapter, "
                     f"marked \\emph{{not reproduced yet}} with what it shows.")
    not_run = [(noun, item) for kind, noun in (("figures", "Figure"), ("tables", "Table"))
               for item in inventory[kind] if "not_run" in item]
    for why, fix in dict.fromkeys((item["not_run"]["why"], item["not_run"]["fix"]) for _, item in not_run):
        names = ", ".join(f"{noun} {item['id']}" for noun, item in not_run if item["not_run"]["why"] == why)
        lines.append(f"\\item \\textbf{{Not run: {escape(why)}:}} {names}. To run them: \\texttt{{{escape(fix)}}}")
    rows = []
    for kind, noun in (("figures", "Figure"), ("tables", "Table")):
        for item in inventory[kind]:
            rows.append(f"{noun} {item['id']} & {escape(item['class'])} & {_status(item)} \\\\")
    return "\n".join(lines) + "\n", "\\coveragetable{\n" + "\n".join(rows) + "\n}\n"


def claims_tex(claims: list[dict]) -> str:
    counts = {s: sum(c["status"] == s for c in claims) for s in ("pass", "fail", "not run")}
    rows = []
    for c in claims:
        why = ""
        if c["status"] == "fail":
            why = (f" \\newline \\textit{{Known at this scale:}} {escape(c['known_reason'])}" if c["known_reason"]
                   else " \\newline \\textbf{Unexpected:} configs/claims/ does not list this failure")
        rows.append(f"{escape(c['item'])} & \\claimstatus{{{c['status']}}} & "
                    f"``{escape(c['quote'])}'' (T{c['thesis_line']}) \\newline "
                    f"\\textit{{{escape(c['id'])}}}: {escape(c['measured'])}; {escape(c['detail'])}{why} \\\\")
    known = sum(c["status"] == "fail" and bool(c["known_reason"]) for c in claims)
    return (f"\\claimsummary{{{counts['pass']}}}{{{counts['fail']}}}{{{counts['not run']}}}{{{len(claims)}}}"
            f"{{{known}}}\n\\claimstable{{\n" + "\n".join(rows) + "\n}\n")


def read_claims(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def write_document(inventory: dict, claims_csv: Path, out_dir: Path, built: set[str],
                   not_run: dict[str, dict] | None = None, root: Path = REPO_ROOT) -> list[Path]:
    """Write the generated LaTeX; `built` is the set of item outputs this profile builds, `not_run`
    the CSVs it would make but this machine could not (restrict_to_built); `root` holds the results."""
    inventory = with_panels(restrict_to_built(inventory, built, not_run), root)
    claims = read_claims(claims_csv)
    coverage_lines, coverage_table = coverage_tex(inventory)
    written = {out_dir / "coverage_lines.tex": coverage_lines, out_dir / "coverage_table.tex": coverage_table,
               out_dir / "claims.tex": claims_tex(claims),
               out_dir / "appendix.tex": appendix_tex(inventory, claims, root)}
    for chapter in inventory["chapters"]:
        written[out_dir / f"chapter_{chapter['number']}.tex"] = chapter_tex(chapter, inventory, claims, root)
    for path, text in written.items():
        atomic_write_text(path, text)
    return list(written)

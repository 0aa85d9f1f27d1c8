# Figures and tables: one script per thesis item, declared in configs/inventory/
# (key `reproduced`), reading CSVs only.

# The items this profile builds: those whose every input it produces (or is reference data).
REPRODUCED = {
    path: item
    for path, item in REPRODUCIBLE.items()
    if all(p in PRODUCED_RESULTS or p.startswith("results/reference/") for p in item["reproduced"]["inputs"])
}
FIGURE_OUTPUTS = sorted(path for path in REPRODUCED if path.endswith(".pdf"))
TABLE_OUTPUTS = sorted(path for path in REPRODUCED if path.endswith(".tex"))
# Figures are drawn by R, diagrams typeset from TikZ: one rule each, told apart by name.
DIAGRAM_NAMES = sorted(Path(path).stem for path, item in REPRODUCIBLE.items() if is_diagram(item))
DIAGRAM_HELPERS = ["figures/diagrams/bufferpool_scenes.py", "figures/diagrams/cave_trace.py"]
R_FIGURE_NAMES = sorted(Path(path).stem for path in REPRODUCIBLE
                        if path.endswith(".pdf") and Path(path).stem not in DIAGRAM_NAMES)


rule draw_figure:
    """Draw one thesis figure with its R/ggplot2 script."""
    input:
        script=lambda w: reproduction(f"figures/generated/{w.name}.pdf")["script"],
        theme="figures/scripts/theme.R",
        image=image("report"),
        data=lambda w: reproduction(f"figures/generated/{w.name}.pdf")["inputs"],
    output:
        pdf="figures/generated/{name}.pdf",
        sidecar="figures/generated/{name}.pdf.json",
    wildcard_constraints:
        name="|".join(R_FIGURE_NAMES),
    resources:
        **memory_as_measured(),
    log:
        "results/logs/draw_figure/{name}.log",
    benchmark:
        "results/benchmarks/draw_figure/{name}.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, report_steps.draw_figure,
                     script=input.script, theme=input.theme, data=input.data, pdf=output.pdf, log=log[0])


rule draw_diagram:
    """Typeset one thesis diagram from its TikZ source, or from the TikZ its script draws from a
    trace of our systems (figures/diagrams/)."""
    input:
        script=lambda w: reproduction(f"figures/generated/{w.name}.pdf")["script"],
        frame=report_steps.DIAGRAM_FRAME,
        # the drawing of a traced scene, which the scripts of Figures 4.4 and 4.6 (bufferpool) and
        # 5.2-5.4 (CAVE) share
        helper=lambda w: (DIAGRAM_HELPERS
                          if reproduction(f"figures/generated/{w.name}.pdf")["script"].endswith(".py") else []),
        image=image("report"),
        data=lambda w: reproduction(f"figures/generated/{w.name}.pdf")["inputs"],
    output:
        pdf="figures/generated/{name}.pdf",
        sidecar="figures/generated/{name}.pdf.json",
    params:
        tikz="figures/generated/{name}.tikz",
    wildcard_constraints:
        name="|".join(DIAGRAM_NAMES) or "no diagram",
    resources:
        **memory_as_measured(),
    log:
        "results/logs/draw_diagram/{name}.log",
    benchmark:
        "results/benchmarks/draw_diagram/{name}.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, report_steps.draw_diagram,
                     script=input.script, data=input.data, tikz=params.tikz, pdf=output.pdf, log=log[0])


rule typeset_table:
    """Typeset one thesis table as LaTeX with its script."""
    input:
        script=lambda w: reproduction(f"paper/generated/{w.name}.tex")["script"],
        data=lambda w: reproduction(f"paper/generated/{w.name}.tex")["inputs"],
        image=image("report"),
    output:
        tex="paper/generated/{name}.tex",
        sidecar="paper/generated/{name}.tex.json",
    wildcard_constraints:
        name=r"table_\d+_\d+|supp_[a-z0-9_]+",
    resources:
        **memory_as_measured(),
    log:
        "results/logs/typeset_table/{name}.log",
    benchmark:
        "results/benchmarks/typeset_table/{name}.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, report_steps.typeset_table,
                     script=input.script, data=input.data, tex=output.tex, log=log[0])


rule figures_and_tables:
    """Every figure and table this artifact regenerates (`make figures`)."""
    input:
        FIGURE_OUTPUTS + TABLE_OUTPUTS,

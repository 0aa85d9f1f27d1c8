# Snakemake's HTML report (`make report`): every figure this profile draws, as a picture with the
# thesis's caption and its provenance (workflow/report/), and the claims report (check_claims marks
# it). Snakemake inlines its own scripts and the results, so the one file opens offline.

report: "../report/workflow.rst"

REPORT_PICTURES = [f"results/report/figures/{Path(path).stem}.png" for path in FIGURE_OUTPUTS]


rule picture_for_report:
    """The first page of a figure as a PNG: a browser shows it inline (a PDF needs a plug-in)."""
    input:
        pdf="figures/generated/{name}.pdf",
        sidecar="figures/generated/{name}.pdf.json",
        image=image("report"),
    output:
        report("results/report/figures/{name}.png", caption="../report/figure.rst", category="Figures",
               labels={"figure": "{name}"}),
    params:
        item=lambda w: REPRODUCIBLE[f"figures/generated/{w.name}.pdf"],
        provenance=lambda w: provenance_of(f"figures/generated/{w.name}.pdf"),
    log:
        "results/logs/picture_for_report/{name}.log",
    run:
        in_its_image(rule, input, output, log, threads, resources, report_steps.picture_for_report,
                     pdf=input.pdf, png=output[0], log=log[0])


rule report_contents:
    """What Snakemake's report shows: the pictures and the claims report."""
    localrule: True
    input:
        REPORT_PICTURES,
        CLAIMS_REPORT[2],

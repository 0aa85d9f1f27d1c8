# The document: one chapter per thesis chapter, every figure and table, coverage and claims.

DOCUMENT_SOURCES = [
    "paper/generated/coverage_lines.tex",
    "paper/generated/coverage_table.tex",
    "paper/generated/claims.tex",
    "paper/generated/appendix.tex",
] + [f"paper/generated/chapter_{c['number']}.tex" for c in INVENTORY["chapters"]]
DOCUMENT_PDF = "paper/build/artifact.pdf"


rule write_document_sources:
    """Generate the document's LaTeX from the inventory, the reproduced items and the claims."""
    input:
        inventory=config_folder("inventory"),
        image=image("report"),
        claims=CLAIMS_REPORT[0],
        reproduced=list(REPRODUCED),
        scripts=sorted({item["reproduced"]["script"] for item in REPRODUCED.values()}),
    output:
        DOCUMENT_SOURCES,
    params:
        not_run=NOT_RUN,
    resources:
        **memory_as_measured(),
    log:
        "results/logs/write_document_sources.log",
    benchmark:
        "results/benchmarks/write_document_sources.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, report_steps.write_document_sources,
                     inventory=INVENTORY, claims_csv=input.claims, out_dir="paper/generated", built=input.reproduced,
                     not_run=params.not_run, log=log[0])


rule build_document:
    """Typeset the document with latexmk (reproducible bytes: fixed date, no trailer ID)."""
    input:
        main="paper/artifact.tex",
        image=image("report"),
        sources=DOCUMENT_SOURCES,
        reproduced=list(REPRODUCED),
    output:
        pdf=DOCUMENT_PDF,
    resources:
        **memory_as_measured(),
    log:
        "results/logs/build_document.log",
    benchmark:
        "results/benchmarks/build_document.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, report_steps.build_document,
                     main=input.main, pdf=output.pdf, log=log[0])

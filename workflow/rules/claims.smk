# Claims as code: every claim in configs/claims/ checked on this run's CSVs.

CLAIMS_REPORT = ["results/claims/claims.csv", "results/claims/report.md", "results/claims/report.html"]


rule check_claims:
    """Evaluate every thesis claim and write the claims report (CSV, Markdown, HTML)."""
    input:
        claims=config_folder("claims"),
        image=image("report"),
        data=claim_data_files(PRODUCED_RESULTS),
    output:
        csv=CLAIMS_REPORT[0],
        markdown=CLAIMS_REPORT[1],
        html=report(CLAIMS_REPORT[2], caption="../report/claims.rst", category="Claims"),
    resources:
        **memory_as_measured(),
    log:
        "results/logs/check_claims.log",
    benchmark:
        "results/benchmarks/check_claims.tsv"
    params:
        profile=PROFILE,
        not_run=NOT_RUN,
    run:
        in_its_image(rule, input, output, log, threads, resources, report_steps.check_claims,
                     claims_list=CLAIMS, data=input.data, profile=params.profile, not_run=params.not_run,
                     csv=output.csv, markdown=output.markdown, html=output.html, log=log[0])

# Claims as code: every claim in configs/claims.yaml checked on this run's CSVs.

CLAIMS_REPORT = ["results/claims/claims.csv", "results/claims/report.md", "results/claims/report.html"]


def claim_data_files():
    """The CSVs the claims read that this profile produces; the others are reported as 'not run'."""
    produced = set(PIO_MODEL_RESULTS)
    files = set()
    for claim in CLAIMS:
        check = claim["check"]
        sides = [check["left"], check["right"]] if check["kind"] == "compare" else [claim]
        files.update(side["data"] for side in sides)
    return sorted(files & produced)


rule check_claims:
    """Evaluate every thesis claim and write the claims report (CSV, Markdown, HTML)."""
    input:
        claims="configs/claims.yaml",
        data=claim_data_files(),
    output:
        csv=CLAIMS_REPORT[0],
        markdown=CLAIMS_REPORT[1],
        html=CLAIMS_REPORT[2],
    log:
        "results/logs/check_claims.log",
    benchmark:
        "results/benchmarks/check_claims.tsv"
    shell:
        "{PY} -m ssdartifact claims --csv {output.csv} --markdown {output.markdown} "
        "--html {output.html} 2> {log}"

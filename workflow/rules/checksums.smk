# Checksums of the deterministic outputs: analytic model CSVs, figures and tables
# drawn from them, the claims report over them, and the document. `make verify`
# and `make checksums` build this list (and so every output on it) first.

DETERMINISTIC_OUTPUTS = sorted(
    PIO_MODEL_RESULTS + list(REPRODUCED) + CLAIMS_REPORT + DOCUMENT_SOURCES + [DOCUMENT_PDF]
)


rule list_deterministic_outputs:
    """Build every deterministic output and list them, one path a line."""
    input:
        DETERMINISTIC_OUTPUTS,
    output:
        listing=f"results/checksums/{PROFILE}.files",
    log:
        f"results/logs/list_deterministic_outputs/{PROFILE}.log",
    run:
        steps.list_outputs(input, output.listing)

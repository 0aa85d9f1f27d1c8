# Checksums of the deterministic outputs: the analytic model's CSVs and what is
# drawn from them alone. The claims report, the generated LaTeX and the PDF are
# deterministic only when no measured result feeds them (the ci profile); with
# measurements (emussd, devices) their bytes follow the run, and the provenance
# sidecars chain them to the raw outputs instead. `make verify` and
# `make checksums` build this list (and so every output on it) first.

# Table 4.1's devices are measured when the profile characterizes one of them (a declared
# emulated device alone would be deterministic, but the quick and full profiles measure), and so
# are Table 6.2's.
MEASURED_RESULTS = (EMUSSD_RESULTS + PIO_RESULTS + ACE_RUN_RESULTS + CAVE_MEASURED_RESULTS + RESTORE_MEASURED_RESULTS
                    + ACE_DEVICE_TABLE + TABLE_6_2_RESULTS)
DETERMINISTIC_OUTPUTS = sorted(
    PIO_MODEL_RESULTS
    + ACE_SIM_RESULTS
    + ACE_SCENE_RESULTS
    + CONFIG_TABLE_RESULTS
    + CAVE_DETERMINISTIC_RESULTS
    + RESTORE_DETERMINISTIC_RESULTS
    + [
        path
        for path, item in REPRODUCED.items()
        if not set(item["reproduced"]["inputs"]) & set(MEASURED_RESULTS)
    ]
    + ([] if MEASURED_RESULTS else CLAIMS_REPORT + DOCUMENT_SOURCES + [DOCUMENT_PDF])
)


rule deterministic_outputs:
    """Every deterministic output, each requested by name: Snakemake does not rebuild a missing
    intermediate file whose consumers are up to date, so naming only the listing below would
    leave an output deleted after a failed verify missing."""
    localrule: True
    input:
        DETERMINISTIC_OUTPUTS,


rule list_deterministic_outputs:
    """Build every deterministic output and list them, one path a line."""
    input:
        DETERMINISTIC_OUTPUTS,
    output:
        listing=f"results/checksums/{PROFILE}.files",
    log:
        f"results/logs/list_deterministic_outputs/{PROFILE}.log",
    run:
        report_steps.list_outputs(paths=list(input), listing=output.listing)

# The artifact's one workflow: configs -> experiments -> tidy CSVs -> claims ->
# figures and tables -> the document -> checksums. Run it through the Makefile
# (`make reproduce`), or directly: snakemake --cores 2 --config profile=quick
from snakemake.exceptions import WorkflowError

from emussd.device import unmount_stale
from ssdartifact.provenance import record_run


include: "workflow/rules/common.smk"
include: "workflow/rules/images.smk"
include: "workflow/rules/pio_model.smk"
include: "workflow/rules/emussd.smk"
include: "workflow/rules/pio.smk"
include: "workflow/rules/ace.smk"
include: "workflow/rules/cave.smk"
include: "workflow/rules/restore.smk"
include: "workflow/rules/tables.smk"


# Every tidy CSV this profile's experiments produce.
PRODUCED_RESULTS = (PIO_MODEL_RESULTS + EMUSSD_RESULTS + PIO_RESULTS + ACE_RUN_RESULTS + ACE_SIM_RESULTS + ACE_SCENE_RESULTS
                    + CAVE_MEASURED_RESULTS + CAVE_DETERMINISTIC_RESULTS
                    + RESTORE_MEASURED_RESULTS + RESTORE_DETERMINISTIC_RESULTS
                    + ACE_DEVICE_TABLE + TABLE_6_2_RESULTS + CONFIG_TABLE_RESULTS)
# The CSVs this profile would make but cannot here, each with why and the command that makes them.
NOT_RUN = {**CAVE_NOT_RUN, **RESTORE_NOT_RUN}


include: "workflow/rules/figures.smk"
include: "workflow/rules/claims.smk"
include: "workflow/rules/document.smk"
include: "workflow/rules/checksums.smk"
include: "workflow/rules/report.smk"


# emussd mounts left behind by an interrupted run are unmounted before and after every run; a run
# of the whole profile with jobs records when it started and finished (whole_profile_run).
onstart:
    unmount_stale()
    if whole_profile_run():
        record_run(PROFILE, finished=False)


onsuccess:
    unmount_stale()
    if whole_profile_run():
        record_run(PROFILE, finished=True)


onerror:
    unmount_stale()


rule all:
    default_target: True
    input:
        DOCUMENT_PDF,
        CLAIMS_REPORT,
        ACE_RESULTS,
        ACE_RUN_RESULTS,
        CAVE_MEASURED_RESULTS,
        CAVE_DETERMINISTIC_RESULTS,
        RESTORE_MEASURED_RESULTS,
        RESTORE_DETERMINISTIC_RESULTS,


# The artifact's one workflow: configs -> experiments -> tidy CSVs -> claims ->
# figures and tables -> the document -> checksums. Run it through the Makefile
# (`make reproduce`), or directly: snakemake --cores 2 --config profile=quick
from snakemake.exceptions import WorkflowError


include: "workflow/rules/common.smk"
include: "workflow/rules/pio_model.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/claims.smk"
include: "workflow/rules/document.smk"
include: "workflow/rules/checksums.smk"


rule all:
    default_target: True
    input:
        DOCUMENT_PDF,
        CLAIMS_REPORT,

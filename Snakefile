# The artifact's one workflow: configs -> experiments -> tidy CSVs -> claims ->
# figures and tables -> the document -> checksums. Run it through the Makefile
# (`make reproduce`), or directly: snakemake --cores 2 --config profile=quick
import os
import sys

from snakemake.exceptions import WorkflowError

from ssdartifact import config as artifact_config


PROFILE = config.get("profile", "quick")
try:
    CONFIGS = artifact_config.check_all(PROFILE)
except artifact_config.ConfigError as error:
    raise WorkflowError(f"configuration error(s); nothing was run:\n{error}")
INVENTORY = CONFIGS["inventory.yaml"]
CLAIMS = CONFIGS["claims.yaml"]["claims"]

# Every rule's Python is the locked environment's interpreter.
PY = sys.executable
# Generated PDFs (R figures, LaTeX) carry this fixed date, so their bytes depend only on their inputs.
os.environ["SOURCE_DATE_EPOCH"] = "1735689600"
os.environ["FORCE_SOURCE_DATE"] = "1"


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

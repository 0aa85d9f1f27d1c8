# Configuration (validated before any rule runs) and the helpers the rules share.
from ssdartifact import config as artifact_config, steps
from ssdartifact.paper import output_of, reproduced_items


PROFILE = config.get("profile", "quick")
try:
    CONFIGS = artifact_config.check_all(PROFILE)
except artifact_config.ConfigError as error:
    raise WorkflowError(f"configuration error(s); nothing was run:\n{error}")
INVENTORY = CONFIGS["inventory.yaml"]
CLAIMS = CONFIGS["claims.yaml"]["claims"]

PROFILE_CONFIG = artifact_config.load_profile(PROFILE)
# native or docker: the profile's choice, or `--config runtime=...` (make RUNTIME=docker ...).
RUNTIME = config.get("runtime", PROFILE_CONFIG["runtime"])
if RUNTIME not in ("native", "docker"):
    raise WorkflowError(f"runtime {RUNTIME!r} is not allowed; allowed values: 'native', 'docker'")
steps.configure(RUNTIME)
# Every item the artifact can regenerate: output path -> inventory entry.
REPRODUCIBLE = {output_of(item): item for item in reproduced_items(INVENTORY)}


def reproduction(path):
    """Script and inputs of the item written to `path` (configs/inventory.yaml, key `reproduced`)."""
    return REPRODUCIBLE[path]["reproduced"]


def in_profile(device):
    """Whether this profile runs experiments on `device` (configs/profiles/<profile>.yaml, key devices)."""
    return device in PROFILE_CONFIG["devices"]


def claim_data_files(produced):
    """The CSVs the claims read that this profile produces; the others are reported as 'not run'."""
    files = set()
    for claim in CLAIMS:
        check = claim["check"]
        sides = [check["left"], check["right"]] if check["kind"] == "compare" else [claim]
        files.update(side["data"] for side in sides)
    return sorted(files & set(produced))


def glob_wildcards_files(pattern):
    """The files matching a one-wildcard pattern, e.g. every source of a system."""
    return sorted(expand(pattern, name=glob_wildcards(pattern).name))


def image(name):
    """The image a rule's step runs in, as an input: built by build_image with the docker runtime."""
    return [f"results/images/{name}.id"] if RUNTIME == "docker" else []


def emussd_binary_for(wildcards):
    """The emussd binary, as an input of experiments on emulated devices only."""
    return [EMUSSD_BINARY] if steps.devices.declaration(wildcards.device)["kind"] == "emulated" else []

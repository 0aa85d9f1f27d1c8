# Configuration (validated before any rule runs) and the helpers the rules share.
from ssdartifact import config as artifact_config, steps
from ssdartifact.scheduling import at_idle_priority
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


# Measurements side by side (profile key emulated_side_by_side, or --config emulated_side_by_side=true). A measurement on an emulated
# device is latency-bound: fio or the system under test waits on emussd's timed replies, and the
# three use a fraction of a core (the characterization 5 % of one, PostgreSQL's single client less
# than one). Two such measurements, each on its own device, then run at once and each takes one
# of the machine's two shares; every other job takes both, so no computation (a build, R, a
# simulator) ever runs beside a measurement, and a measurement on a real device (which shares the
# machine's disk and CPU with everything) runs alone. Snakemake cannot forbid only "a computation
# beside a measurement", so the deterministic jobs also run one at a time, which costs them little.
def _switch(name, value):
    """A yes/no setting: the profile's boolean, or `--config name=true|false` (which Snakemake passes
    on as the string 'true' or 'false', both of which Python would take for yes)."""
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("true", "false"):
        return str(value).lower() == "true"
    raise WorkflowError(f"--config {name}={value}: expected true or false")


SIDE_BY_SIDE = _switch("emulated_side_by_side",
                       config.get("emulated_side_by_side", PROFILE_CONFIG.get("emulated_side_by_side", False)))
MACHINE_SHARES = 2

# Computations beside campaigns (profile key computations_beside_measurements, or --config
# computations_beside_measurements=true). A computation (a build, a simulation in virtual time, a
# figure, the document) may run beside one of ACE's or CAVE's campaigns on an emulated device, at
# the idle scheduling class (SCHED_IDLE): the kernel gives it a core only when no process of the
# campaign wants one, and preempts it the moment one wakes (emussd's calibration of the machine,
# measured by the first emulated measurement, may then have one beside it too). Everything else
# that measures still runs alone, with every core: the characterization (its alpha and k must come
# out within 10 % of the declared ones), the saturation sweep, ReStore's CPU-time and real-time
# measurements, every measurement on a real device; and two measurements never run at once
# (resource `measuring`). A measurement that runs alone waits until no computation runs.
BESIDE = _switch("computations_beside_measurements",
                 config.get("computations_beside_measurements",
                            PROFILE_CONFIG.get("computations_beside_measurements", False)))
if BESIDE and SIDE_BY_SIDE:
    raise WorkflowError("emulated_side_by_side and computations_beside_measurements are both on: choose one")
if BESIDE and RUNTIME != "native":
    # emussd's calibration is cached per host name, and each container has a new one: every
    # docker-mode measurement would calibrate the machine again, possibly beside a computation
    raise WorkflowError("computations_beside_measurements needs the native runtime (this run is docker)")
if BESIDE:
    workflow.register_resource("measuring", 1)
MEASURING = {"measuring": 1} if BESIDE else {}  # the resources of a measurement that runs alone
# One measurement per device at a time: every device a measurement uses is a resource of one
# (ACE's runs also write their WAL to configs/experiments/ace.yaml's wal_device, so two ACE
# campaigns never run side by side).
ACE_WAL_DEVICE = CONFIGS["experiments/ace.yaml"]["wal_device"]
if SIDE_BY_SIDE:
    workflow.register_resource("machine_share", MACHINE_SHARES)
    for name in sorted({*PROFILE_CONFIG["devices"], ACE_WAL_DEVICE}):
        workflow.register_resource(f"device_{name.replace('-', '_')}", 1)


def devices_held(*also):
    """The device resources of a measurement: its own device (wildcard `device`) and `also`."""
    if not SIDE_BY_SIDE:
        return {}
    return {f"device_{name.replace('-', '_')}": (lambda w, name=name: int(name in (w.device, *also)))
            for name in sorted({*PROFILE_CONFIG["devices"], ACE_WAL_DEVICE})}


def machine_share(campaign=False):
    """A measurement's machine share (of wildcards): one of two where something may run beside it
    (any measurement on an emulated device side by side; an emulated device's `campaign` of ACE or
    CAVE with computations beside it), else both."""
    def share(wildcards):
        emulated = steps.devices.declaration(wildcards.device)["kind"] == "emulated"
        return 1 if emulated and (SIDE_BY_SIDE or (BESIDE and campaign)) else MACHINE_SHARES
    return share


def measurement_threads(campaign=False):
    """A measurement's threads (of wildcards): all cores when it runs alone (nothing then runs
    beside it: Snakemake has no core left), else one."""
    share = machine_share(campaign)
    return lambda wildcards: 1 if share(wildcards) < MACHINE_SHARES else workflow.cores


def computation_threads(threads):
    """A computation's threads as Snakemake counts them: one beside a campaign, where at the idle
    class it may still use every core the campaign leaves (its step gets `threads` to use)."""
    return 1 if BESIDE else threads


# The order that keeps both lanes busy when measurements run side by side (higher first; Snakemake
# starts the ready job of highest priority that fits). ACE's campaigns all write their WAL to one
# device, so they form one lane, the longest (about a third of the quick profile): the builds it
# and the other measurements need come first, then ACE's campaigns on emulated devices, while the
# other emulated measurements fill the second lane beside them; a measurement on a real device
# runs alone, so it waits until nothing on an emulated one is ready. Without side by side the
# order changes nothing but which job comes first.
PRIORITY_BUILD_FOR_MEASUREMENTS = 30
PRIORITY_ACE_CAMPAIGN = 20
PRIORITY_EMULATED_MEASUREMENT = 10


def measurement_priority(first_among_measurements=False):
    """A measurement's priority: `first_among_measurements` for ACE's lane; real devices last."""
    def priority(wildcards):
        if steps.devices.declaration(wildcards.device)["kind"] != "emulated":
            return 0
        return PRIORITY_ACE_CAMPAIGN if first_among_measurements else PRIORITY_EMULATED_MEASUREMENT
    return priority


def place_the_other_jobs():
    """Called once all rules are defined. With measurements side by side, each rule that does not
    declare its machine share takes the whole machine; with computations beside measurements, each
    rule that is not a measurement runs at the idle class."""
    for each in workflow.rules:
        if SIDE_BY_SIDE and "machine_share" not in each.resources:
            each.resources["machine_share"] = MACHINE_SHARES
        if BESIDE and "measuring" not in each.resources and each.run_func is not None:
            each.run_func = at_idle_priority(each.run_func)


def emussd_binary_for(wildcards):
    """The emussd binary, as an input of experiments on emulated devices only."""
    return [EMUSSD_BINARY] if steps.devices.declaration(wildcards.device)["kind"] == "emulated" else []

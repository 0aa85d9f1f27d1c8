# Configuration (validated before any rule runs) and the helpers the rules share.
import json
import re
from pathlib import Path

from ssdartifact import claims as artifact_claims, cluster as artifact_cluster, config as artifact_config, devices
from steps import ace as ace_steps, cave as cave_steps, emussd as emussd_steps, pio as pio_steps
from steps import report as report_steps, restore as restore_steps, runtime
from ssdartifact.paper import is_diagram, output_of, reproduced_items


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
runtime.configure(RUNTIME)
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
    files = set().union(*(artifact_claims.data_files(claim) for claim in CLAIMS))
    return sorted(files & set(produced))


def provenance_of(path):
    """An output's provenance sidecar (<path>.json), once it exists: a caption of the report shows it."""
    sidecar = Path(f"{path}.json")
    return json.loads(sidecar.read_text()) if sidecar.exists() else {}


def glob_wildcards_files(pattern):
    """The files matching a one-wildcard pattern, e.g. every source of a system."""
    return sorted(expand(pattern, name=glob_wildcards(pattern).name))


# The C++ every native system builds with (systems/common: the random generators, command-line and
# atomic-output helpers, the CMake settings): a change there rebuilds every system.
COMMON_NATIVE_SOURCES = glob_wildcards_files("systems/common/{name}")


def _switch(name, value):
    """A yes/no setting: the profile's boolean, or `--config name=true|false` (which Snakemake passes
    on as the string 'true' or 'false', both of which Python would take for yes)."""
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("true", "false"):
        return str(value).lower() == "true"
    raise WorkflowError(f"--config {name}={value}: expected true or false")


# A change of runtime (native <-> docker, or a new image) reruns nothing by itself: each output's
# sidecar records the runtime and image that made it, `make verify` checks the deterministic ones
# byte for byte whoever made them, and what is missing is made by the runtime chosen now. Asked to
# (make RERUN_ON_RUNTIME_CHANGE=true), every step whose image record changed since it ran runs again.
RERUN_ON_RUNTIME_CHANGE = _switch("rerun_on_runtime_change", config.get("rerun_on_runtime_change", False))


def image(name):
    """The image a rule's step runs in, as an input: results/images/<name>.id, which build_image
    writes in either runtime (the image's tag and id, or "native"), so that the rule's set of inputs
    is the same in both. Ancient (its date and content ignored) and made once, unless
    RERUN_ON_RUNTIME_CHANGE: the runtime is recorded with each output, not an input of it."""
    record = f"results/images/{name}.id"
    return [record if RERUN_ON_RUNTIME_CHANGE else ancient(record)]


# Measurements side by side (profile key emulated_side_by_side, or --config emulated_side_by_side=true). A measurement on an emulated
# device is latency-bound: fio or the system under test waits on emussd's timed replies, and the
# three use a fraction of a core (the characterization 5 % of one, PostgreSQL's single client less
# than one). Two such measurements, each on its own device, then run at once and each takes one
# of the machine's two shares; every other job takes both, so no computation (a build, R, a
# simulator) ever runs beside a measurement, and a measurement on a real device (which shares the
# machine's disk and CPU with everything) runs alone. Snakemake cannot forbid only "a computation
# beside a measurement", so the deterministic jobs also run one at a time, which costs them little.
SIDE_BY_SIDE = _switch("emulated_side_by_side",
                       config.get("emulated_side_by_side", PROFILE_CONFIG.get("emulated_side_by_side", False)))
MACHINE_SHARES = 2

# On a SLURM cluster (workflow/profiles/slurm sets cluster: slurm; docs/cluster.md), the machine is
# each job's node: there is no machine to share, each measurement is sent to the node that holds its
# device and has that node to itself (as it has this machine here), and the device declarations are
# checked against the cluster before anything runs.
CLUSTER = config.get("cluster", "")
if CLUSTER not in ("", "slurm"):
    raise WorkflowError(f"--config cluster={CLUSTER}: allowed values: slurm (workflow/profiles/slurm)")
if CLUSTER and workflow.is_main_process:  # not again inside each job
    try:
        _problems = artifact_cluster.placement_problems(
            [devices.declaration(name) for name in PROFILE_CONFIG["devices"]], artifact_cluster.cluster_nodes())
    except artifact_cluster.ClusterError as error:
        raise WorkflowError(f"{error}; nothing was run")
    if _problems:
        raise WorkflowError("the declared devices do not match the SLURM cluster; nothing was run:\n"
                            + "\n".join(_problems))

# One measurement per device at a time: every device a measurement uses is a resource of one
# (ACE's runs also write their WAL to configs/experiments/ace.yaml's wal_device, so two ACE
# campaigns never run side by side). On a cluster too: Snakemake holds them across all its jobs.
ACE_WAL_DEVICE = CONFIGS["experiments/ace.yaml"]["wal_device"]
HOLD_DEVICES = SIDE_BY_SIDE or bool(CLUSTER)
if SIDE_BY_SIDE and not CLUSTER:
    workflow.register_resource("machine_share", MACHINE_SHARES)
if HOLD_DEVICES:
    for name in sorted({*PROFILE_CONFIG["devices"], ACE_WAL_DEVICE}):
        workflow.register_resource(f"device_{name.replace('-', '_')}", 1)


def devices_held(*also):
    """The device resources of a measurement: its own device (wildcard `device`) and `also`."""
    if not HOLD_DEVICES:
        return {}
    return {f"device_{name.replace('-', '_')}": (lambda w, name=name: int(name in (w.device, *also)))
            for name in sorted({*PROFILE_CONFIG["devices"], ACE_WAL_DEVICE})}


def alone_unless_emulated(wildcards):
    """A measurement's machine share: one of two on an emulated device side by side, else all."""
    emulated = devices.declaration(wildcards.device)["kind"] == "emulated"
    return 1 if SIDE_BY_SIDE and emulated else MACHINE_SHARES


def on_its_node(device_of=lambda wildcards: wildcards.device):
    """On a cluster, where a measurement runs: the node, feature or partition its device's
    declaration names (ssdartifact.cluster.placement), and the node to itself unless it may share
    it as here (side by side on an emulated device). Here: nothing."""
    if not CLUSTER:
        return {}

    def resource(key):
        def value(wildcards):
            declaration = devices.declaration(device_of(wildcards))
            shares = SIDE_BY_SIDE and declaration["kind"] == "emulated"
            return artifact_cluster.placement(declaration, exclusive=not shares)[key]
        return value
    return {key: resource(key) for key in ("constraint", "slurm_partition", "slurm_extra")}


def alone_on_a_node():
    """A measurement without a device (CPU or wall-clock time): on a cluster, a node to itself."""
    return {"slurm_extra": "--exclusive"} if CLUSTER else {}


def measurement_threads(wildcards):
    """A measurement's threads: all cores when it runs alone (nothing then runs beside it), else one."""
    return 1 if alone_unless_emulated(wildcards) < MACHINE_SHARES else workflow.cores


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
        if devices.declaration(wildcards.device)["kind"] != "emulated":
            return 0
        return PRIORITY_ACE_CAMPAIGN if first_among_measurements else PRIORITY_EMULATED_MEASUREMENT
    return priority


def every_other_job_runs_alone():
    """Called once all rules are defined. With measurements side by side, each rule that does not
    declare its machine share takes the whole machine."""
    if SIDE_BY_SIDE and not CLUSTER:
        for each in workflow.rules:
            if "machine_share" not in each.resources:
                each.resources["machine_share"] = MACHINE_SHARES


def memory_as_measured():
    """Called once all rules are defined. On a cluster, a job asks for the memory its rule used on
    this machine (results/benchmarks/: the same job's record, else the rule's largest; with a margin
    and the jobstep's own, ssdartifact.cluster.memory_mb); a rule never run here keeps the profile's
    default (workflow/profiles/slurm)."""
    if not CLUSTER:
        return
    for each in workflow.rules:
        if each.benchmark is None:
            continue
        pattern = str(each.benchmark)
        recorded = sorted(Path().glob(re.sub(WILDCARD, "*", pattern)))
        if recorded:
            each.resources["mem_mb"] = (
                lambda w, pattern=pattern, recorded=recorded:
                artifact_cluster.memory_mb([p] if (p := Path(re.sub(WILDCARD, lambda m: w[m[1]], pattern))).exists()
                                           else recorded))


WILDCARD = r"\{(\w+)(?:,[^}]*)?\}"  # {name} or {name,regex} in a path pattern


def emussd_binary_for(wildcards):
    """The emussd binary, as an input of experiments on emulated devices only."""
    return [EMUSSD_BINARY] if devices.declaration(wildcards.device)["kind"] == "emulated" else []


def whole_profile_run():
    """A run of the whole profile (the default target, `make reproduce`): the one whose start and
    finish results/runs/ records (the guide's times). A run of some targets (`make checksums`,
    `verify`, `figures`) is not the profile's and leaves the record alone."""
    return set(workflow.dag_settings.targets) <= {"all"}


def steps_know_their_job():
    """Called once all rules are defined. A step in a container may write only its job's declared
    outputs and logs, and gets its threads and memory as limits (steps.runtime.with_job): Snakemake
    passes them to a rule's run function, which hands them on to the step it calls."""
    # Snakemake gives every rule the default resources first, its mem_mb among them (a guess from the
    # inputs' size): a rule declares its memory when its mem_mb is another (memory_as_measured's, say).
    default = workflow.resource_settings.default_resources
    guessed = default.get("mem_mb").raw if default is not None else None
    for each in workflow.rules:
        if each.run_func is not None:
            declared = each.resources.get("mem_mb").raw not in (None, guessed)
            each.run_func = runtime.with_job(each.run_func, declares_memory=declared)

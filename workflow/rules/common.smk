# Configuration (validated before any rule runs) and the helpers the rules share.
import json
import re
from pathlib import Path

from ssdartifact import claims as artifact_claims, cluster as artifact_cluster, config as artifact_config, devices, preflight, routes
from steps import ace as ace_steps, cave as cave_steps, emussd as emussd_steps, pio as pio_steps
from steps import report as report_steps, restore as restore_steps, runtime
from ssdartifact.paper import is_diagram, output_of, reproduced_items


PROFILE = config.get("profile", "quick")
try:
    CONFIGS = preflight.check(PROFILE)  # the configs validated, and this host checked for their devices
except artifact_config.ConfigError as error:
    raise WorkflowError(f"configuration error(s); nothing was run:\n{error}")
INVENTORY = CONFIGS["inventory"]
CLAIMS = CONFIGS["claims"]["claims"]


def config_folder(name):
    """A merged config folder's files (configs/claims/, configs/inventory/: one per chapter), as a rule's inputs."""
    return [f"configs/{name}/{path.name}" for path in artifact_config.folder_files(artifact_config.CONFIG_DIR / name)]


def routed(rule, names=()):
    """What `rule` writes, by name: its outputs in configs/inventory/ (key routes), each pattern
    filled with each of `names`. There each path is written once, and `make which` finds it."""
    return routes.outputs(rule, names, INVENTORY)


def routed_pattern(rule, wildcard):
    """`rule`'s output pattern in configs/inventory/ (key routes), with its wildcard named."""
    return routes.pattern(rule, wildcard, INVENTORY)


PROFILE_CONFIG = artifact_config.load_profile(PROFILE)
# native or docker: the profile's choice, or `--config runtime=...` (make RUNTIME=docker ...).
RUNTIME = config.get("runtime", PROFILE_CONFIG["runtime"])
if RUNTIME not in ("native", "docker"):
    raise WorkflowError(f"runtime {RUNTIME!r} is not allowed; allowed values: 'native', 'docker'")
runtime.configure(RUNTIME)
# Every item the artifact can regenerate: output path -> inventory entry.
REPRODUCIBLE = {output_of(item): item for item in reproduced_items(INVENTORY)}


def reproduction(path):
    """Script and inputs of the item written to `path` (configs/inventory/, key `reproduced`)."""
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


# A measurement runs alone: it takes every core (threads: workflow.cores), so no other job runs
# beside it and disturbs it (docs/chapter-2-pio.md, "How measurements share the machine").

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

# One measurement per device at a time: on a cluster, every device a measurement uses is a resource
# of one that Snakemake holds across all its jobs (ACE's runs also write their WAL to
# configs/experiments/ace.yaml's wal_device, so two ACE campaigns never run at once). On one machine a
# measurement runs alone anyway.
ACE_WAL_DEVICE = CONFIGS["experiments/ace.yaml"]["wal_device"]
if CLUSTER:
    for name in sorted({*PROFILE_CONFIG["devices"], ACE_WAL_DEVICE}):
        workflow.register_resource(f"device_{name.replace('-', '_')}", 1)


def devices_held(*also):
    """The device resources of a measurement: its own device (wildcard `device`) and `also`."""
    if not CLUSTER:
        return {}
    return {f"device_{name.replace('-', '_')}": (lambda w, name=name: int(name in (w.device, *also)))
            for name in sorted({*PROFILE_CONFIG["devices"], ACE_WAL_DEVICE})}


def on_its_node(device_of=lambda wildcards: wildcards.device):
    """On a cluster, where a measurement runs: the node, feature or partition its device's
    declaration names (ssdartifact.cluster.placement), and the node to itself. Here: nothing."""
    if not CLUSTER:
        return {}

    def resource(key):
        def value(wildcards):
            return artifact_cluster.placement(devices.declaration(device_of(wildcards)))[key]
        return value
    return {key: resource(key) for key in ("constraint", "slurm_partition", "slurm_extra")}


def alone_on_a_node():
    """A measurement without a device (CPU or wall-clock time): on a cluster, a node to itself."""
    return {"slurm_extra": "--exclusive"} if CLUSTER else {}


def memory_as_measured():
    """The memory a job asks for on a cluster (an entry of each rule's resources), what the same job used
    on this machine (results/benchmarks/: the job's own record, else its rule's largest; with a margin
    and the jobstep's own, ssdartifact.cluster.memory_mb), else the SLURM profile's default. Here:
    nothing, so a docker step keeps its default limit (steps.runtime)."""
    return {"mem_mb": _memory_as_measured} if CLUSTER else {}


def _memory_as_measured(wildcards, rulename):
    """Snakemake passes a resource function the name of the job's rule, whose benchmark pattern is
    read here (never set: no rule changes after its definition)."""
    pattern = str(workflow.get_rule(rulename).benchmark)
    own = Path(re.sub(WILDCARD, lambda m: wildcards[m[1]], pattern))
    recorded = [own] if own.exists() else sorted(Path().glob(re.sub(WILDCARD, "*", pattern)))
    measured = artifact_cluster.memory_mb(recorded) if recorded else None
    return measured or artifact_cluster.profile_default(Path(f"workflow/profiles/{CLUSTER}"), "mem_mb")


WILDCARD = r"\{(\w+)(?:,[^}]*)?\}"  # {name} or {name,regex} in a path pattern


def emussd_binary_for(wildcards):
    """The emussd binary, as an input of experiments on emulated devices only."""
    return [EMUSSD_BINARY] if devices.declaration(wildcards.device)["kind"] == "emulated" else []


def whole_profile_run():
    """A run of the whole profile (the default target, `make reproduce`): the one whose start and
    finish results/runs/ records (the guide's times). A run of some targets (`make checksums`,
    `verify`, `figures`) is not the profile's and leaves the record alone."""
    return set(workflow.dag_settings.targets) <= {"all"}


def in_its_image(rule, input, output, log, threads, resources, step, /, **arguments):
    """`step(**arguments)` in the image the rule's input `image` names (image()), called by its run
    block as `in_its_image(rule, input, output, log, threads, resources, <step>, <arguments>)`.
    With the docker runtime the step runs there, where it may write only the job's declared outputs
    and logs, and gets its threads and memory as limits (steps.runtime.running); natively, here.
    (One call, not a with block: `snakemake --lint` counts a run block's bytecode.)"""
    memory = resources.mem_mb if declares_memory(workflow.get_rule(rule)) else None
    with runtime.running(runtime.Job(Path(input.image[0]).stem, tuple(map(str, [*output, *log])), int(threads),
                                     memory)):
        return step(**arguments)


def declares_memory(rule):
    """Whether `rule` declares its memory. Snakemake gives every rule the default resources first,
    its mem_mb among them (a guess from the inputs' size, at least 1000 MB): a rule declares its
    memory when its mem_mb is another (memory_as_measured's, say)."""
    default = workflow.resource_settings.default_resources
    guessed = default.get("mem_mb").raw if default is not None else None
    return rule.resources.get("mem_mb").raw not in (None, guessed)

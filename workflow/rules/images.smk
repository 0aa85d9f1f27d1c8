# Container images (configs/containers.yaml), built in the DAG for the docker runtime. An image's tag
# hashes its directory, those of the images it extends and the base's lock, so it is rebuilt only when
# they change. Natively its record says "native" (common.smk, image(): the steps' inputs are the same
# in both runtimes). Each output's sidecar says which runtime and image made it; the record only orders
# the DAG.

from ssdartifact.containers.catalog import lineage

IMAGE_NAMES = sorted(CONFIGS["containers.yaml"]["images"])


rule build_image:
    """Build (or find) one system's pinned image; records its tag and id (natively: "native")."""
    localrule: RUNTIME == "native"  # natively a one-line record: no cluster job for it
    # Unless asked to rerun on a change of runtime, the record is made once and never remade: Snakemake
    # does not look for the missing outputs of jobs below one that reruns when their inputs from it are
    # ancient (common.smk, image()), so a rerun here would leave a deleted output unmade. A step in docker
    # mode builds or finds its image's current tag itself (ssdartifact.containers.build.ensure_image).
    input:
        lambda w: [path for name in lineage(w.name) for path in glob_wildcards_files(f"containers/{name}/{{name}}")]
        + ["containers/base/packages.lock"]
        if RERUN_ON_RUNTIME_CHANGE else [],
    output:
        identity="results/images/{name}.id",
    wildcard_constraints:
        name="|".join(IMAGE_NAMES),
    params:
        runtime=RUNTIME if RERUN_ON_RUNTIME_CHANGE else "",  # asked: a switch rewrites the record
    resources:
        **memory_as_measured(),
    log:
        "results/logs/build_image/{name}.log",
    benchmark:
        "results/benchmarks/build_image/{name}.tsv"
    run:
        report_steps.build_image(name=wildcards.name, runtime=RUNTIME, identity=output.identity, log=log[0])

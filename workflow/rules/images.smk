# Container images (configs/containers.yaml), built in the DAG for the docker runtime.
# An image's tag hashes its directory, those of the images it extends and the base's lock, so it is
# rebuilt only when they change.

from ssdartifact.containers import lineage

IMAGE_NAMES = sorted(CONFIGS["containers.yaml"]["images"])


rule build_image:
    """Build (or find) one system's pinned image; records its tag and id."""
    input:
        lambda w: [path for name in lineage(w.name) for path in glob_wildcards_files(f"containers/{name}/{{name}}")]
        + ["containers/base/packages.lock"],
    output:
        identity="results/images/{name}.id",
    wildcard_constraints:
        name="|".join(IMAGE_NAMES),
    log:
        "results/logs/build_image/{name}.log",
    benchmark:
        "results/benchmarks/build_image/{name}.tsv"
    run:
        report_steps.build_image(name=wildcards.name, identity=output.identity, log=log[0])

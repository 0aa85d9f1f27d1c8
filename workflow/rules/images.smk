# Container images (configs/containers.yaml), built in the DAG for the docker runtime. An image's tag
# hashes its directory and the base's lock, so it is rebuilt only when they change. Natively its
# record says "native" (common.smk, image(): the steps' inputs are the same in both runtimes).

IMAGE_NAMES = sorted(CONFIGS["containers.yaml"]["images"])


rule build_image:
    """Build (or find) one system's pinned image; records its tag and id (natively: "native")."""
    localrule: RUNTIME == "native"  # natively a one-line record: no cluster job for it
    input:
        lambda w: sorted(glob_wildcards_files(f"containers/{w.name}/{{name}}")) + ["containers/base/packages.lock"],
    output:
        identity="results/images/{name}.id",
    wildcard_constraints:
        name="|".join(IMAGE_NAMES),
    params:
        runtime=RUNTIME,  # a switch rewrites the record (which the steps then ignore: common.smk, image())
    log:
        "results/logs/build_image/{name}.log",
    benchmark:
        "results/benchmarks/build_image/{name}.tsv"
    run:
        report_steps.build_image(name=wildcards.name, runtime=params.runtime, identity=output.identity, log=log[0])

# CAVE (thesis Chapter 5): the out-of-core graph engine (systems/cave), Table 5.1's graphs, and
# the runs of every figure per device (configs/experiments/cave.yaml, configs/datasets.yaml,
# sized and placed by the profile's `cave`), then one CSV per figure. The baselines CAVE is
# compared with (GraphChi, GridGraph) are built from their pinned sources (configs/sources.yaml)
# and run per device by a campaign of their own.

from cave import plan as cave_plan

CAVE_BINARY = "systems/cave/build/cave"
CAVE_TRACE_BINARY = "systems/cave/build/cave-trace"  # built with it (CMakeLists.txt)
CAVE_EXPERIMENT = CONFIGS["experiments/cave.yaml"]
CAVE_FIO_SECONDS = CAVE_EXPERIMENT["fio_reference"]["seconds"]  # each device's fio reference run
CAVE_DATASETS = CONFIGS["datasets.yaml"]
# The figures whose baselines cannot be built here (no pinned source, no network) are left out, and
# marked "not run" with the command that runs them (CAVE_NOT_RUN, for the claims and the document).
CAVE_DECLARED = PROFILE_CONFIG.get("cave", {})
CAVE_UNREACHABLE = cave_steps.unreachable_baselines_of_this_run(CAVE_DECLARED, workflow.is_main_process)
CAVE_PROFILE, CAVE_NOT_RUN = cave_steps.without_baselines(CAVE_DECLARED, list(CAVE_UNREACHABLE), PROFILE)
CAVE_GRIDS = cave_plan.figure_grids(CAVE_EXPERIMENT, CAVE_PROFILE)
CAVE_DEVICES = cave_plan.cave_devices(CAVE_PROFILE)
CAVE_FIGURE_CSVS = routed("gather_cave_results", [name for name, panels in cave_plan.FIGURE_CSVS.items()
                                                  if any(panel in CAVE_GRIDS for panel in panels)])
CAVE_DOWNLOADS = [f"results/cave/downloads/{name}.json" for name in CAVE_PROFILE.get("downloads", [])]
CAVE_TABLE_5_1_CSV = routed("describe_cave_datasets")["table_5_1"]
CAVE_TABLE_5_1 = [CAVE_TABLE_5_1_CSV] if CAVE_PROFILE.get("table_5_1") or CAVE_DOWNLOADS else []
CAVE_MEASURED_RESULTS = ["results/cave/runs.csv", *CAVE_FIGURE_CSVS.values()] if CAVE_GRIDS else []
CAVE_BASELINE_SYSTEMS = cave_plan.baseline_systems(CAVE_EXPERIMENT, CAVE_PROFILE)
CAVE_BASELINE_DEVICES = cave_plan.baseline_devices(CAVE_EXPERIMENT, CAVE_PROFILE)
CAVE_BASELINE_BUILDS = expand("results/cave/baselines/{system}.json", system=CAVE_BASELINE_SYSTEMS)
CAVE_BASELINE_SETTINGS = {**CAVE_EXPERIMENT["baselines"],
                          **({"timeout_s": CAVE_PROFILE["baseline_timeout_s"]} if "baseline_timeout_s" in CAVE_PROFILE else {}),
                          "timeout_s_by_system": CAVE_PROFILE.get("baseline_timeout_s_by_system", {})}
# Figures 5.2-5.4's toy graph through the engine on a fixed schedule: in every profile.
CAVE_TOY_TRACE = routed("trace_cave_toy_graph")["fig_5_toy"]
CAVE_DETERMINISTIC_RESULTS = CAVE_TABLE_5_1 + [CAVE_TOY_TRACE]  # the graphs come from seeds: checksummed


rule build_cave:
    """Build the graph engine with CMake (Release; io_uring when liburing is there)."""
    input:
        "systems/cave/CMakeLists.txt",
        glob_wildcards_files("systems/cave/src/{name}"),
        COMMON_NATIVE_SOURCES,
        image=image("cave"),
    output:
        binary=CAVE_BINARY,
        trace=CAVE_TRACE_BINARY,
    resources:
        **memory_as_measured(),
    log:
        "results/logs/build_cave.log",
    benchmark:
        "results/benchmarks/build_cave.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, cave_steps.build_cave,
                     binary=output.binary, log=log[0])


rule trace_cave_toy_graph:
    """The toy graph of Figures 5.2 and 5.4 through CAVE's BFS and pseudo-DFS step on a fixed
    schedule, and Figure 5.3's cache pool snapshot (cave-trace)."""
    input:
        binary=CAVE_TRACE_BINARY,
        scene="figures/diagrams/scenes/fig_5_toy.graph",
        image=image("cave"),
    output:
        csv=CAVE_TOY_TRACE,
    log:
        "results/logs/trace_cave_toy_graph.log",
    run:
        in_its_image(rule, input, output, log, threads, resources, cave_steps.trace_cave_toy_graph,
                     binary=input.binary, scene=input.scene, csv_out=output.csv, log=log[0])


rule build_cave_baseline:
    """A baseline (GraphChi, GridGraph, Mosaic; GraphX: Spark unpacked) from its pinned, checked source with its patch series."""
    input:
        sources="configs/sources.yaml",
        series="systems/cave/baselines/{system}/series",
        patches=lambda w: glob_wildcards_files(f"systems/cave/baselines/{w.system}/{{name}}.patch"),
        recipe="systems/cave/cave/baselines/build.py",  # the make targets are part of the build
        image=image("cave"),
    output:
        record="results/cave/baselines/{system}.json",
    wildcard_constraints:
        system="|".join(cave_plan.BASELINE_NAMES),
    resources:
        **memory_as_measured(),
    log:
        "results/logs/build_cave_baseline/{system}.log",
    benchmark:
        "results/benchmarks/build_cave_baseline/{system}.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, cave_steps.build_cave_baseline,
                     system=wildcards.system, record=output.record, log=log[0])


rule fetch_cave_dataset:
    """One of the thesis's real datasets from its public source (configs/datasets.yaml), when reachable."""
    input:
        datasets="configs/datasets.yaml",
    output:
        record="results/cave/downloads/{name}.json",
    log:
        "results/logs/fetch_cave_dataset/{name}.log",
    run:
        cave_steps.fetch_cave_dataset(name=wildcards.name, record=output.record, log=log[0])


rule describe_cave_datasets:
    """Table 5.1 for this profile's graphs: vertices, edges, estimated diameter, size on disk."""
    input:
        binary=CAVE_BINARY,
        datasets="configs/datasets.yaml",
        downloads=CAVE_DOWNLOADS,
        image=image("cave"),
    output:
        csv=CAVE_TABLE_5_1_CSV,
        sidecar=f"{CAVE_TABLE_5_1_CSV}.json",
    params:
        graphs=CAVE_PROFILE.get("table_5_1", []),
        size=CAVE_PROFILE.get("graph_size"),
    resources:
        **memory_as_measured(),
    log:
        "results/logs/describe_cave_datasets.log",
    benchmark:
        "results/benchmarks/describe_cave_datasets.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, cave_steps.describe_cave_datasets,
                     binary=input.binary, graphs=params.graphs, size=params.size, downloads=list(input.downloads),
                     csv_out=output.csv, log=log[0])


rule run_cave_experiments:
    """Every Chapter 5 run on one device: the graph on the device, O_DIRECT reads, 3 % cache."""
    input:
        binary=CAVE_BINARY,
        # the device's characterization, when this profile measures it (CAVE's threads are its k_r)
        alpha_k=lambda w: [f"results/pio/devices/{w.device}/alpha_k.csv"] if w.device in CHARACTERIZED else [],
        emussd=emussd_binary_for,
        experiment="configs/experiments/cave.yaml",
        datasets="configs/datasets.yaml",
        image=image("cave"),
    output:
        runs="results/cave/devices/{device}/runs.csv",
        timeline="results/cave/devices/{device}/timeline.csv",
    params:
        points=lambda w: cave_plan.device_points(CAVE_EXPERIMENT, CAVE_PROFILE, CAVE_DATASETS, w.device),
    threads: workflow.cores  # a measurement runs alone: any job beside it would disturb it
    resources:
        **devices_held(),
        **on_its_node(),
        **memory_as_measured(),
    log:
        "results/logs/run_cave_experiments/{device}.log",
    benchmark:
        "results/benchmarks/run_cave_experiments/{device}.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, cave_steps.run_cave_experiments,
                     name=wildcards.device, points=params.points, fio_seconds=CAVE_FIO_SECONDS, alpha_k=input.alpha_k,
                     binary=input.binary, emussd=input.emussd, raw=f"results/raw/cave/{wildcards.device}",
                     runs_out=output.runs, timeline_out=output.timeline, log=log[0])


rule run_cave_baselines:
    """The baselines' runs on one device: each system's own format of the same graph, the device's
    k_r threads, a memory cgroup of the cache share of CAVE's file, the answer checked."""
    input:
        binary=CAVE_BINARY,
        alpha_k=lambda w: [f"results/pio/devices/{w.device}/alpha_k.csv"] if w.device in CHARACTERIZED else [],
        emussd=emussd_binary_for,
        built=CAVE_BASELINE_BUILDS,
        experiment="configs/experiments/cave.yaml",
        datasets="configs/datasets.yaml",
        image=image("cave"),
    output:
        runs="results/cave/devices/{device}/baselines.csv",
    params:
        points=lambda w: cave_plan.device_points(CAVE_EXPERIMENT, CAVE_PROFILE, CAVE_DATASETS, w.device, baselines=True),
        settings=CAVE_BASELINE_SETTINGS,
    threads: workflow.cores  # a measurement runs alone
    resources:
        **devices_held(),
        **on_its_node(),
        **memory_as_measured(),
    log:
        "results/logs/run_cave_baselines/{device}.log",
    benchmark:
        "results/benchmarks/run_cave_baselines/{device}.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, cave_steps.run_cave_baselines,
                     name=wildcards.device, points=params.points, alpha_k=input.alpha_k, binary=input.binary,
                     emussd=input.emussd, built=input.built, settings=params.settings,
                     raw=f"results/raw/cave/{wildcards.device}/baselines", runs_out=output.runs, log=log[0])


rule gather_cave_results:
    """All runs in one CSV, and per figure the means, speedups over one concurrent I/O or over each
    baseline, Table 5.2's preprocessing, and timelines."""
    input:
        runs=expand("results/cave/devices/{device}/runs.csv", device=CAVE_DEVICES)
        + expand("results/cave/devices/{device}/baselines.csv", device=CAVE_BASELINE_DEVICES),
        timelines=expand("results/cave/devices/{device}/timeline.csv", device=CAVE_DEVICES),
    output:
        runs="results/cave/runs.csv",
        figures=list(CAVE_FIGURE_CSVS.values()),
    params:
        grids=CAVE_GRIDS,
        figure_csvs=CAVE_FIGURE_CSVS,
    log:
        "results/logs/gather_cave_results.log",
    run:
        cave_steps.gather_cave_results(per_device=list(input.runs), timelines=list(input.timelines), grids=params.grids,
                                       runs_csv=output.runs, figure_csvs=params.figure_csvs, log=log[0])

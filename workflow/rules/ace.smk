# ACE inside PostgreSQL (thesis Chapter 4): PostgreSQL's source, fetched and checked on
# the host, and the server built from it with the patch series of systems/ace/patches/.
# The experiments of Chapter 4 start this server (ACE_SERVER records where it is).

from ace import build as ace_build

ACE_SOURCE_LOCK = "systems/ace/source.yaml"
ACE_TARBALL = f"systems/ace/build/downloads/{ace_build.source_lock()['orig']['file']}"
ACE_SERVER = "results/ace/server.json"
ACE_RESULTS = [ACE_SERVER] if PROFILE_CONFIG.get("ace_server", False) else []


rule fetch_postgresql_source:
    """apt-get source of the pinned PostgreSQL (systems/ace/source.yaml), checked by sha256."""
    input:
        ACE_SOURCE_LOCK,
    output:
        tarball=ACE_TARBALL,
    log:
        "results/logs/fetch_postgresql_source.log",
    run:
        ace_steps.fetch_postgresql_source(tarball=output.tarball, log=log[0])


rule build_ace_server:
    """PostgreSQL with the replacement policies and ACE (release build; cached by source + patches)."""
    input:
        tarball=ACE_TARBALL,
        series="systems/ace/patches/series",
        patches=glob_wildcards_files("systems/ace/patches/{name}.patch"),
        recipe="systems/ace/ace/build.py",  # configure flags and contrib modules are part of the build
        image=image("ace"),
    output:
        record=ACE_SERVER,
    threads: workflow.cores  # make -j uses every core: nothing, a measurement least of all, runs beside it
    resources:
        **memory_as_measured(),
    log:
        "results/logs/build_ace_server.log",
    benchmark:
        "results/benchmarks/build_ace_server.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, ace_steps.build_ace_server,
                     record=output.record, jobs=threads, log=log[0])


# ---- Chapter 4's experiments: the runs of every figure, per device (configs/experiments/ace.yaml,
# sized and placed by the profile's `ace`), then one CSV per figure.

from ace import plan as ace_plan

ACE_EXPERIMENT = CONFIGS["experiments/ace.yaml"]
ACE_PROFILE = PROFILE_CONFIG.get("ace", {})
ACE_GRIDS = ace_plan.figure_grids(ACE_EXPERIMENT, ACE_PROFILE)
ACE_DEVICES = ace_plan.ace_devices(ACE_PROFILE)
ACE_FIGURE_CSVS = routed("gather_ace_results", ACE_GRIDS)
ACE_RUN_RESULTS = (["results/ace/runs.csv", *ACE_FIGURE_CSVS.values()]) if ACE_GRIDS else []


rule load_ace_templates:
    """Every database the campaigns run on, loaded once into a template cluster (a computation:
    alone, and before any campaign, so none loads one beside another device's measurement)."""
    input:
        server=ACE_SERVER,
        experiment="configs/experiments/ace.yaml",
        image=image("ace"),
    output:
        record="results/ace/templates.json",
    params:
        points=[point for device in ACE_DEVICES for point in ace_plan.device_points(ACE_EXPERIMENT, ACE_PROFILE, device)],
        profile=ACE_PROFILE,
    resources:
        **memory_as_measured(),
    log:
        "results/logs/load_ace_templates.log",
    benchmark:
        "results/benchmarks/load_ace_templates.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, ace_steps.load_ace_templates,
                     points=params.points, profile_ace=params.profile, experiment=ACE_EXPERIMENT,
                     server_record=input.server, record=output.record, log=log[0])


rule run_ace_experiments:
    """Every Chapter 4 run on one device: patched PostgreSQL, pgbench, same work per configuration."""
    input:
        server=ACE_SERVER,
        templates="results/ace/templates.json",
        # the device's characterization, when this profile measures it (ACE's n_w is its k_w)
        alpha_k=lambda w: [f"results/pio/devices/{w.device}/alpha_k.csv"] if w.device in CHARACTERIZED else [],
        binary=emussd_binary_for,
        experiment="configs/experiments/ace.yaml",
        image=image("ace"),
    output:
        csv="results/ace/devices/{device}/runs.csv",
    params:
        points=lambda w: ace_plan.device_points(ACE_EXPERIMENT, ACE_PROFILE, w.device),
        profile=ACE_PROFILE,
        declaration=lambda w: devices.declaration(w.device),
    threads: workflow.cores  # a measurement runs alone: any job beside it would disturb it
    resources:
        **devices_held(ACE_WAL_DEVICE),
        **on_its_node(),
        **memory_as_measured(),
    log:
        "results/logs/run_ace_experiments/{device}.log",
    benchmark:
        "results/benchmarks/run_ace_experiments/{device}.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, ace_steps.run_ace_experiments,
                     name=wildcards.device, points=params.points, profile_ace=params.profile, experiment=ACE_EXPERIMENT,
                     server_record=input.server, alpha_k=input.alpha_k, binary=input.binary,
                     raw=f"results/raw/ace/{wildcards.device}", csv_out=output.csv, log=log[0])


rule gather_ace_results:
    """All runs in one CSV, and per figure the means, ACE's speedups and its changes in misses and writes."""
    input:
        expand("results/ace/devices/{device}/runs.csv", device=ACE_DEVICES),
    output:
        runs="results/ace/runs.csv",
        figures=list(ACE_FIGURE_CSVS.values()),
    params:
        grids=ACE_GRIDS,
        profile=ACE_PROFILE,
        figure_csvs=ACE_FIGURE_CSVS,
    log:
        "results/logs/gather_ace_results.log",
    run:
        ace_steps.gather_ace_results(per_device=list(input), grids=params.grids, profile_ace=params.profile,
                                     experiment=ACE_EXPERIMENT, runs_csv=output.runs, figure_csvs=params.figure_csvs,
                                     log=log[0])


# ---- The bufferpool simulator: ACE's ideal speedup in virtual time (Figures 4.2 and 4.14A),
# in every profile (it measures nothing: its outputs are checksummed).

ACE_SIM_BINARY = "systems/ace/sim/build/ace-sim"
ACE_SCENE_BINARY = "systems/ace/sim/build/ace-sim-scene"  # built with it (CMakeLists.txt)
ACE_HISTORY_BINARY = "systems/ace/sim/build/ace-sim-history"
ACE_SIM_FIGURES = ["fig_4_2", "fig_4_14a"]
ACE_SIM_CSV = routed_pattern("simulate_ideal_speedup", "figure")
ACE_SIM_RESULTS = expand(ACE_SIM_CSV, figure=ACE_SIM_FIGURES)


rule build_ace_simulator:
    """Build the bufferpool simulator with CMake (Release)."""
    input:
        "systems/ace/sim/CMakeLists.txt",
        glob_wildcards_files("systems/ace/sim/src/{name}"),
        COMMON_NATIVE_SOURCES,
        image=image("ace"),
    output:
        binary=ACE_SIM_BINARY,
        scene=ACE_SCENE_BINARY,
        history=ACE_HISTORY_BINARY,
    resources:
        **memory_as_measured(),
    log:
        "results/logs/build_ace_simulator.log",
    benchmark:
        "results/benchmarks/build_ace_simulator.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, ace_steps.build_ace_simulator,
                     binary=output.binary, log=log[0])


rule simulate_ideal_speedup:
    """ACE-LRU over LRU in the simulator's virtual time: Figure 4.2 (devices) or 4.14A (alpha, n_w)."""
    input:
        binary=ACE_SIM_BINARY,
        experiment="configs/experiments/ace.yaml",
        # the device models it simulates (ssdartifact.devices.model: a preset or an emulated device)
        presets="configs/emussd_presets.yaml",
        devices="configs/devices.yaml",
        image=image("ace"),
    output:
        csv=ACE_SIM_CSV,
        sidecar=f"{ACE_SIM_CSV}.json",
    wildcard_constraints:
        figure="|".join(ACE_SIM_FIGURES),
    resources:
        **memory_as_measured(),
    log:
        "results/logs/simulate_ideal_speedup/{figure}.log",
    benchmark:
        "results/benchmarks/simulate_ideal_speedup/{figure}.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, ace_steps.simulate_ideal_speedup,
                     figure=wildcards.figure, simulator=ACE_EXPERIMENT["simulator"], binary=input.binary,
                     csv_out=output.csv, log=log[0])


# The thesis's toy examples of Figures 4.4 and 4.6 (figures/diagrams/scenes/) stepped through the
# simulator's own pool and policies: the traces the figures are drawn from, in every profile.
ACE_SCENES = glob_wildcards("figures/diagrams/scenes/{scene}.scene").scene
# Figure 4.7's accesses through the history prefetcher (ace-sim-history): its table afterwards.
ACE_HISTORY_RESULT = routed("trace_history_prefetcher")["fig_4_7_history"]
ACE_SCENE_CSV = routed_pattern("trace_bufferpool_scene", "scene")
ACE_SCENE_RESULTS = expand(ACE_SCENE_CSV, scene=sorted(ACE_SCENES)) + [ACE_HISTORY_RESULT]


rule trace_bufferpool_scene:
    """One toy example through ace-sim-scene: the pool before and after its request."""
    input:
        binary=ACE_SCENE_BINARY,
        scene="figures/diagrams/scenes/{scene}.scene",
        image=image("ace"),
    output:
        csv=ACE_SCENE_CSV,
    wildcard_constraints:
        scene="|".join(ACE_SCENES),
    log:
        "results/logs/trace_bufferpool_scene/{scene}.log",
    run:
        in_its_image(rule, input, output, log, threads, resources, ace_steps.trace_bufferpool_scene,
                     binary=input.binary, scene=input.scene, csv_out=output.csv, log=log[0])


rule trace_history_prefetcher:
    """Figure 4.7's accesses through the simulator's history prefetcher: its table afterwards."""
    input:
        binary=ACE_HISTORY_BINARY,
        accesses="figures/diagrams/scenes/fig_4_7.history",
        image=image("ace"),
    output:
        csv=ACE_HISTORY_RESULT,
    log:
        "results/logs/trace_history_prefetcher.log",
    run:
        in_its_image(rule, input, output, log, threads, resources, ace_steps.trace_bufferpool_scene,
                     binary=input.binary, scene=input.accesses, csv_out=output.csv, log=log[0])

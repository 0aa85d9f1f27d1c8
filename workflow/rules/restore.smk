# ReStore (thesis Chapter 6): the tiered-storage simulator and emulator (systems/restore), its
# seven migration policies and the runs of Figures 6.4-6.13 and Tables 6.5-6.6
# (configs/experiments/restore.yaml, sized and chosen by the profile's `restore`).

from restore import original as restore_original
from restore import plan as restore_plan
from ssdartifact import sources as artifact_sources

# with the TPC-C trace of our own server when the profile records one (restore.tpcc_trace)
RESTORE_EXPERIMENT = restore_plan.with_recorded_traces(CONFIGS["experiments/restore.yaml"], PROFILE_CONFIG)
RESTORE_TPCC_TRACE = restore_plan.recorded_tpcc(CONFIGS["experiments/restore.yaml"], PROFILE_CONFIG)
RESTORE_DECLARED = PROFILE_CONFIG.get("restore", {})
# The authors' programs are built from their pinned source: where it cannot be found (no network, no
# SSD_SOURCES), their runs are left out and marked "not run" with the command that runs them
# (RESTORE_NOT_RUN, for the claims and the document), as CAVE's baselines are.
RESTORE_ORIGINAL_UNREACHABLE = (restore_original.unreachable()
                                if restore_plan.ORIGINAL in RESTORE_DECLARED.get("figures", {}) else "")
RESTORE_PROFILE, RESTORE_NOT_RUN = restore_plan.without_original(RESTORE_DECLARED, RESTORE_ORIGINAL_UNREACHABLE,
                                                                 artifact_sources.how_to_supply(PROFILE))
RESTORE_PLAN = restore_plan.outputs(RESTORE_PROFILE, recorded_trace=bool(RESTORE_TPCC_TRACE))
RESTORE_BINARY = restore_plan.BINARY

RESTORE_MEASURED_RESULTS = RESTORE_PLAN["measured"]  # CSVs with measured CPU time or wall-clock runs
RESTORE_DETERMINISTIC_RESULTS = RESTORE_PLAN["deterministic"]  # virtual-time CSVs: checksummed
RESTORE_SIMULATED_RESULTS = RESTORE_PLAN["simulated"]  # every virtual-time CSV, those of a recorded trace too
RESTORE_SENSITIVITY_RESULTS = RESTORE_PLAN["sensitivity"]  # the sensitivity study's CSVs (checksummed)


rule build_restore_simulator:
    """Build restore-sim with CMake (Release): the program the workflow runs, not its GoogleTest tests."""
    input:
        "systems/restore/CMakeLists.txt",
        glob_wildcards_files("systems/restore/src/{name}"),
        COMMON_NATIVE_SOURCES,
        image=image("restore"),
    output:
        binary=RESTORE_BINARY,
    resources:
        **memory_as_measured(),
    log:
        "results/logs/build_restore_simulator.log",
    benchmark:
        "results/benchmarks/build_restore_simulator.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, restore_steps.build_restore_simulator,
                     binary=output.binary, log=log[0])


if RESTORE_TPCC_TRACE:

    rule record_tpcc_trace:
        """TPC-C on our PostgreSQL with its page-access trace on (one client, the standard mix): the
        trace of Chapter 6's TPC-C rows, sized by the profile's restore.tpcc_trace."""
        input:
            server=ACE_SERVER,
            image=image("ace"),
        output:
            trace=restore_plan.TPCC_TRACE,
        params:
            sizing=RESTORE_TPCC_TRACE,
        resources:
            **memory_as_measured(),
        log:
            "results/logs/record_tpcc_trace.log",
        benchmark:
            "results/benchmarks/record_tpcc_trace.tsv"
        run:
            in_its_image(rule, input, output, log, threads, resources, ace_steps.record_tpcc_trace,
                         server_record=input.server, warehouses=params.sizing["warehouses"],
                         transactions=params.sizing["transactions"], trace_out=output.trace, log=log[0])


rule convert_restore_trace:
    """A real workload's trace (configs/experiments/restore.yaml, key traces) as 4 KiB page requests."""
    input:
        source=lambda w: RESTORE_EXPERIMENT["traces"][w.trace]["path"],
        experiment="configs/experiments/restore.yaml",
        image=image("restore"),
    output:
        csv=restore_plan.trace_csv("{trace}"),
    params:
        trace_format=lambda w: RESTORE_EXPERIMENT["traces"][w.trace]["format"],
    wildcard_constraints:
        trace="[a-z][a-z0-9_]*",
    resources:
        **memory_as_measured(),
    log:
        "results/logs/convert_restore_trace/{trace}.log",
    benchmark:
        "results/benchmarks/convert_restore_trace/{trace}.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, restore_steps.convert_restore_trace,
                     name=wildcards.trace, source=input.source, trace_format=params.trace_format, csv_out=output.csv,
                     log=log[0])


RESTORE_FIGURES = restore_plan.deterministic_figures(RESTORE_PROFILE)

if RESTORE_FIGURES:

    rule simulate_restore_figures:
        """Every virtual-time Chapter 6 figure of the profile (CPU timing off: deterministic), in one
        job: a workflow job costs seconds, most figures' runs less."""
        input:
            binary=RESTORE_BINARY,
            experiment="configs/experiments/restore.yaml",
            traces=[p for f in RESTORE_FIGURES for p in restore_plan.trace_inputs(RESTORE_EXPERIMENT, f)],
            image=image("restore"),
        output:
            csvs=RESTORE_SIMULATED_RESULTS,
            sidecars=[f"{path}.json" for path in RESTORE_SIMULATED_RESULTS],
        params:
            figures=RESTORE_FIGURES,
            runs={f: restore_plan.figure_params(RESTORE_EXPERIMENT, RESTORE_PROFILE, f) for f in RESTORE_FIGURES},
        threads: 2
        resources:
            **memory_as_measured(),
        log:
            "results/logs/simulate_restore_figures.log",
        benchmark:
            "results/benchmarks/simulate_restore_figures.tsv"
        run:
            in_its_image(rule, input, output, log, threads, resources, restore_steps.simulate_restore_figures,
                         figures=params.figures, binary=input.binary, params=params.runs, csvs=list(output.csvs),
                         log=log[0], jobs=threads)


rule measure_restore_overhead:
    """Table 6.6: each policy's CPU time per access (measured) and memory, on 5hf90."""
    input:
        binary=RESTORE_BINARY,
        experiment="configs/experiments/restore.yaml",
        image=image("restore"),
    output:
        csv=restore_plan.TABLE_6_6_CSV,
        sidecar=f"{restore_plan.TABLE_6_6_CSV}.json",
    params:
        run=lambda w: restore_plan.figure_params(RESTORE_EXPERIMENT, RESTORE_PROFILE, "table_6_6"),
    threads: workflow.cores  # a CPU-time measurement runs alone: any job beside it would disturb it
    resources:
        **alone_on_a_node(),
        **memory_as_measured(),
    log:
        "results/logs/measure_restore_overhead.log",
    benchmark:
        "results/benchmarks/measure_restore_overhead.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, restore_steps.measure_restore_overhead,
                     binary=input.binary, params=params.run, csv_out=output.csv, log=log[0])


rule crosscheck_restore_emulator:
    """The same small runs in the simulator and in the real-time emulator (sleeping thread pools)."""
    input:
        binary=RESTORE_BINARY,
        experiment="configs/experiments/restore.yaml",
        image=image("restore"),
    output:
        csv=restore_plan.CROSSCHECK_CSVS[0],
        pairs=restore_plan.CROSSCHECK_CSVS[1],
        sidecar=f"{restore_plan.CROSSCHECK_CSVS[0]}.json",
        pairs_sidecar=f"{restore_plan.CROSSCHECK_CSVS[1]}.json",
    params:
        run=lambda w: restore_plan.figure_params(RESTORE_EXPERIMENT, RESTORE_PROFILE, "crosscheck"),
    threads: workflow.cores  # real-time sleeps: a busy CPU beside it would shift the wall times
    resources:
        **alone_on_a_node(),
        **memory_as_measured(),
    log:
        "results/logs/crosscheck_restore_emulator.log",
    benchmark:
        "results/benchmarks/crosscheck_restore_emulator.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, restore_steps.crosscheck_restore_emulator,
                     binary=input.binary, params=params.run, csv_out=output.csv, pairs_out=output.pairs, log=log[0])


if RESTORE_SENSITIVITY_RESULTS:

    rule simulate_restore_sensitivity:
        """The sensitivity study (configs/experiments/restore.yaml, sensitivity): the swept figures'
        runs at every grid point (one parameter at a time off the chapter's value), each point's
        Chapter 6 claims checked by the claims report's checker, and each claim's share of points
        where it holds. Virtual time: deterministic."""
        input:
            binary=RESTORE_BINARY,
            experiment="configs/experiments/restore.yaml",
            claims=config_folder("claims"),
            image=image("restore"),
        output:
            csv=RESTORE_SENSITIVITY_RESULTS[0],
            summary=RESTORE_SENSITIVITY_RESULTS[1],
            sidecars=[f"{path}.json" for path in RESTORE_SENSITIVITY_RESULTS],
        params:
            points=restore_plan.sensitivity_points(RESTORE_EXPERIMENT, RESTORE_PROFILE),
            runs=restore_plan.sensitivity_params(RESTORE_EXPERIMENT, RESTORE_PROFILE),
        threads: 2
        resources:
            **memory_as_measured(),
        log:
            "results/logs/simulate_restore_sensitivity.log",
        benchmark:
            "results/benchmarks/simulate_restore_sensitivity.tsv"
        run:
            in_its_image(rule, input, output, log, threads, resources, restore_steps.simulate_restore_sensitivity,
                         claims_list=CLAIMS, binary=input.binary, params=params.runs, points=params.points,
                         csv_out=output.csv, summary_out=output.summary, log=log[0], jobs=threads)


if restore_plan.ORIGINAL in RESTORE_PROFILE.get("figures", {}):

    rule run_restore_original:
        """The authors' released agent and baselines (Run_RL, Run_tLFU, Run_TEMP, Run_tLRU), built from
        their pinned source with the patch series of systems/restore/original/, on the same streams,
        tiers and capacities as restore-sim, repeated (real time); ours beside them (restore.original)."""
        input:
            binary=RESTORE_BINARY,
            experiment="configs/experiments/restore.yaml",
            sources="configs/sources.yaml",
            series="systems/restore/original/series",
            patches=glob_wildcards_files("systems/restore/original/{name}.patch"),
            recipe="systems/restore/restore/original.py",
            image=image("restore"),
        output:
            csv=restore_plan.ORIGINAL_CSVS[0],
            summary=restore_plan.ORIGINAL_CSVS[1],
            sidecar=f"{restore_plan.ORIGINAL_CSVS[0]}.json",
            summary_sidecar=f"{restore_plan.ORIGINAL_CSVS[1]}.json",
        params:
            run=lambda w: restore_plan.figure_params(RESTORE_EXPERIMENT, RESTORE_PROFILE, restore_plan.ORIGINAL),
        threads: workflow.cores  # real-time sleeps: a busy CPU beside them would shift the wall times
        resources:
            **alone_on_a_node(),
            **memory_as_measured(),
        log:
            "results/logs/run_restore_original.log",
        benchmark:
            "results/benchmarks/run_restore_original.tsv"
        run:
            in_its_image(rule, input, output, log, threads, resources, restore_steps.run_restore_original,
                         binary=input.binary, params=params.run, csv_out=output.csv, summary_out=output.summary,
                         log=log[0])

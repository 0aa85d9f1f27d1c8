# emussd, the emulated SSD: its build, and its saturation benchmark (a fio thread
# sweep that must flatten at the declared k; shown as a supplementary figure).

EMUSSD_BINARY = "systems/emussd/build/emussd"
EMUSSD_SATURATION = CONFIGS["experiments/emussd.yaml"]["saturation"]
EMUSSD_SATURATION_CSV = routed("emussd_saturation_sweep")["saturation"]
EMUSSD_RESULTS = [EMUSSD_SATURATION_CSV] if in_profile(EMUSSD_SATURATION["device"]) else []


rule build_emussd:
    """Build emussd with CMake (Release)."""
    input:
        "systems/emussd/CMakeLists.txt",
        glob_wildcards_files("systems/emussd/src/{name}"),
        COMMON_NATIVE_SOURCES,
        image=image("emussd"),
    output:
        binary=EMUSSD_BINARY,
    resources:
        **memory_as_measured(),
    log:
        "results/logs/build_emussd.log",
    benchmark:
        "results/benchmarks/build_emussd.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, emussd_steps.build_emussd,
                     binary=output.binary, log=log[0])


rule emussd_saturation_sweep:
    """fio thread sweep (1..4k) on the emulated device of configs/experiments/emussd.yaml."""
    input:
        binary=EMUSSD_BINARY,
        experiment="configs/experiments/emussd.yaml",
        devices="configs/devices.yaml",
        image=image("emussd"),
    output:
        csv=EMUSSD_SATURATION_CSV,
        sidecar=f"{EMUSSD_SATURATION_CSV}.json",
        device_stats="results/emussd/saturation_device_stats.json",
        raw=directory("results/raw/emussd/saturation"),
    params:
        fio_point=PROFILE_CONFIG["fio_point"],
    threads: workflow.cores  # a measurement runs alone: any job beside it would disturb it
    resources:
        **on_its_node(lambda wildcards: EMUSSD_SATURATION["device"]),
        **memory_as_measured(),
    log:
        "results/logs/emussd_saturation_sweep.log",
    benchmark:
        "results/benchmarks/emussd_saturation_sweep.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, emussd_steps.emussd_saturation,
                     saturation=EMUSSD_SATURATION, binary=input.binary, csv=output.csv,
                     device_stats=output.device_stats, raw=output.raw, fio_point=params.fio_point, log=log[0])

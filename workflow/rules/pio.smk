# Device characterization (thesis Chapter 2): fio sweeps on every device the
# profile lists under `characterize`, alpha and k by the declared rule, and the
# per-device CSVs gathered into one CSV per table for figures and claims.

PIO_EXPERIMENT = "configs/experiments/pio.yaml"
CHARACTERIZED = PROFILE_CONFIG["characterize"]["devices"]
PIO_GATHERED_BY_TABLE = routed("gather_characterization")  # sweeps, alpha_k, interference, writeback
PIO_TABLES = list(PIO_GATHERED_BY_TABLE)
PIO_GATHERED = list(PIO_GATHERED_BY_TABLE.values()) if CHARACTERIZED else []
# Figure 2.7: raw block devices beside their file-system twins, when both are characterized, and
# the raw devices a profile lists under raw_vs_fs, measured with their twins by their thread
# searches alone (search_device_threads) unless characterized. A loop device (kind loop) is made
# by the step itself, natively only: in docker mode its pair is left out (docs/chapter-2-pio.md).
RAW_VS_FS_LISTED = PROFILE_CONFIG.get("raw_vs_fs", {}).get("devices", [])
FILE_SYSTEM_PAIRS = {
    name: twin
    for name in dict.fromkeys([*CHARACTERIZED, *RAW_VS_FS_LISTED])
    if (twin := devices.declaration(name).get("file_system_twin"))
    and (name in RAW_VS_FS_LISTED or twin in CHARACTERIZED)
    and not (RUNTIME == "docker" and "loop" in (devices.declaration(name)["kind"], devices.declaration(twin)["kind"]))
}
RAW_VS_FS = list(routed("raw_vs_fs").values()) if FILE_SYSTEM_PAIRS else []
PIO_RESULTS = PIO_GATHERED + RAW_VS_FS

FIGURE_2_7_DEVICES = sorted({device for pair in FILE_SYSTEM_PAIRS.items() for device in pair})
# a device's thread-search sweeps: its characterization's, else its searches alone
FIGURE_2_7_SWEEPS = [f"results/pio/{'devices' if d in CHARACTERIZED else 'searches'}/{d}/sweeps.csv"
                     for d in FIGURE_2_7_DEVICES]


rule characterize_device:
    """fio sweeps, alpha and k, queue depth, interference and the write-back app on one device."""
    input:
        binary=emussd_binary_for,
        experiment=PIO_EXPERIMENT,
        image=image("pio"),
    output:
        csv=expand("results/pio/devices/{{device}}/{table}.csv", table=PIO_TABLES),
        raw=directory("results/raw/pio/{device}"),
    params:
        # This device's declaration, not all of configs/devices.yaml: declaring another device
        # must not redo hours of measurements (Snakemake reruns a job when its params change).
        declaration=lambda w: devices.declaration(w.device),
        fio_point=PROFILE_CONFIG["fio_point"],
        characterize=PROFILE_CONFIG["characterize"],
    threads: workflow.cores  # a measurement runs alone: any job beside it would disturb it
    resources:
        **devices_held(),
        **on_its_node(),
        **memory_as_measured(),
    log:
        "results/logs/characterize_device/{device}.log",
    benchmark:
        "results/benchmarks/characterize_device/{device}.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, pio_steps.characterize_device,
                     name=wildcards.device, experiment=CONFIGS["experiments/pio.yaml"], binary=input.binary,
                     raw=output.raw, fio_point=params.fio_point, profile=params.characterize, log=log[0])


# Thesis Table 6.2 (configs/experiments/restore.yaml, table_6_2) in a profile with a table_6_2 key:
# the devices it measures for the table, each one's 4 KiB row from the characterization above when
# that runs on the device, else from its 4 KiB random searches alone (search_device_threads).
TABLE_6_2_PROFILE = PROFILE_CONFIG.get("table_6_2")
TABLE_6_2_NOT_RUN = (TABLE_6_2_PROFILE or {}).get("not_run", {})
TABLE_6_2_ALPHA_K = {
    row["device"]: (f"results/pio/devices/{row['device']}/alpha_k.csv" if row["device"] in CHARACTERIZED
                    else f"results/pio/searches/{row['device']}/alpha_k.csv")
    for row in CONFIGS["experiments/restore.yaml"]["table_6_2"]
    if TABLE_6_2_PROFILE is not None and row["device"] not in TABLE_6_2_NOT_RUN
}


rule search_device_threads:
    """Table 6.2 or Figure 2.7 on a device the characterization above does not run on: its random
    thread searches alone (one thread's latency, alpha and k), which cost a fraction of the whole."""
    input:
        binary=emussd_binary_for,
        experiment=PIO_EXPERIMENT,
        image=image("pio"),
    output:
        csv=expand("results/pio/searches/{{device}}/{table}.csv", table=["sweeps", "alpha_k"]),
        raw=directory("results/raw/pio-searches/{device}"),
    params:
        declaration=lambda w: devices.declaration(w.device),  # this device's only (characterize_device)
        fio_point=PROFILE_CONFIG["fio_point"],
        max_threads=PROFILE_CONFIG["characterize"]["max_threads"],
        # 4 KiB (Table 6.2), and 8 KiB as well for a device of Figure 2.7 (its panel A)
        block_sizes=lambda w: [4096, 8192] if w.device in FIGURE_2_7_DEVICES else [4096],
    threads: workflow.cores  # a measurement runs alone
    resources:
        **devices_held(),
        **on_its_node(),
        **memory_as_measured(),
    log:
        "results/logs/search_device_threads/{device}.log",
    benchmark:
        "results/benchmarks/search_device_threads/{device}.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, pio_steps.search_device_threads,
                     name=wildcards.device, experiment=CONFIGS["experiments/pio.yaml"], binary=input.binary,
                     raw=output.raw, fio_point=params.fio_point, max_threads=params.max_threads,
                     block_sizes=params.block_sizes, log=log[0])


rule gather_characterization:
    """One CSV per table over every characterized device."""
    input:
        expand("results/pio/devices/{device}/{table}.csv", device=CHARACTERIZED, table=PIO_TABLES),
    output:
        PIO_GATHERED,
    log:
        "results/logs/gather_characterization.log",
    run:
        pio_steps.gather_characterization(per_device=[f"results/pio/devices/{d}" for d in CHARACTERIZED],
                                          out_dir="results/pio", log=log[0])


rule raw_vs_fs:
    """The sweeps of each raw block device and of its file-system twin, for Figure 2.7."""
    input:
        FIGURE_2_7_SWEEPS,
    output:
        RAW_VS_FS,
    params:
        pairs=FILE_SYSTEM_PAIRS,
    log:
        "results/logs/raw_vs_fs.log",
    run:
        pio_steps.pair_raw_and_file_system(sweeps=list(input), csv_out=output[0], pairs=params.pairs, log=log[0])

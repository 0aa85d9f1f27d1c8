# Device characterization (thesis Chapter 2): fio sweeps on every device the
# profile lists under `characterize`, alpha and k by the declared rule, and the
# per-device CSVs gathered into one CSV per table for figures and claims.

PIO_EXPERIMENT = "configs/experiments/pio.yaml"
CHARACTERIZED = PROFILE_CONFIG["characterize"]["devices"]
PIO_TABLES = ["sweeps", "alpha_k", "interference", "writeback"]
PIO_RESULTS = [f"results/pio/{table}.csv" for table in PIO_TABLES] if CHARACTERIZED else []


rule characterize_device:
    """fio sweeps, alpha and k, queue depth, interference and the write-back app on one device."""
    input:
        binary=emussd_binary_for,
        experiment=PIO_EXPERIMENT,
        devices="configs/devices.yaml",
        image=image("pio"),
    output:
        csv=expand("results/pio/devices/{{device}}/{table}.csv", table=PIO_TABLES),
        raw=directory("results/raw/pio/{device}"),
    params:
        fio_point=PROFILE_CONFIG["fio_point"],
        max_threads=PROFILE_CONFIG["characterize"]["max_threads"],
    threads: workflow.cores  # a measurement runs alone: any job beside it would disturb it
    log:
        "results/logs/characterize_device/{device}.log",
    benchmark:
        "results/benchmarks/characterize_device/{device}.tsv"
    run:
        steps.characterize_device(wildcards.device, input.binary, output.raw, params.fio_point, params.max_threads, log[0])


rule gather_characterization:
    """One CSV per table over every characterized device."""
    input:
        expand("results/pio/devices/{device}/{table}.csv", device=CHARACTERIZED, table=PIO_TABLES),
    output:
        PIO_RESULTS,
    log:
        "results/logs/gather_characterization.log",
    run:
        steps.gather_characterization([f"results/pio/devices/{d}" for d in CHARACTERIZED], "results/pio", log[0])

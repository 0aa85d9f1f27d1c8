# The tables that describe the setup rather than measure it (thesis Tables 4.1, 4.2, 6.1, 6.4), and
# Table 6.2's devices: the configuration, the devices' alpha and k and the systems' declarations as
# tidy CSVs, which their scripts (figures/scripts/table_*.py) typeset like any other result.

from steps import tables as table_steps

# Table 4.1: the devices Chapter 4 runs on in this profile (none: no table).
TABLE_4_1_CSV = routed("describe_ace_devices")["table_4_1"]
ACE_DEVICE_TABLE = [TABLE_4_1_CSV] if ACE_DEVICES else []
# Table 6.2: in a profile with a table_6_2 key (pio.smk: its devices and where each is measured).
TABLE_6_2_CSV = routed("describe_restore_devices")["table_6_2"]
TABLE_6_2_RESULTS = [TABLE_6_2_CSV] if TABLE_6_2_PROFILE is not None else []
# Tables 4.2, 6.1 and 6.4: from the configuration alone, in every profile (checksummed).
TABLE_4_2_CSV = routed("describe_ace_workloads")["table_4_2"]
TABLE_6_1_CSV = routed("describe_restore_policies")["table_6_1"]
TABLE_6_4_CSV = routed("describe_restore_workloads")["table_6_4"]
CONFIG_TABLE_RESULTS = [TABLE_4_2_CSV, TABLE_6_1_CSV, TABLE_6_4_CSV]


rule describe_ace_devices:
    """Table 4.1: alpha, k_r and k_w of each device Chapter 4 runs on, measured or declared."""
    input:
        alpha_k=[f"results/pio/devices/{d}/alpha_k.csv" for d in ACE_DEVICES if d in CHARACTERIZED],
        devices="configs/devices.yaml",
        presets="configs/emussd_presets.yaml",
        image=image("report"),
    output:
        csv=TABLE_4_1_CSV,
    params:
        devices=ACE_DEVICES,
        alpha_k={d: f"results/pio/devices/{d}/alpha_k.csv" for d in ACE_DEVICES if d in CHARACTERIZED},
    log:
        "results/logs/describe_ace_devices.log",
    run:
        in_its_image(rule, input, output, log, threads, resources, table_steps.describe_ace_devices,
                     devices=params.devices, alpha_k=params.alpha_k, csv_out=output.csv, log=log[0])


rule describe_ace_workloads:
    """Table 4.2: the synthetic workloads of configs/experiments/ace.yaml at this profile's scale."""
    input:
        experiment="configs/experiments/ace.yaml",
        image=image("report"),
    output:
        csv=TABLE_4_2_CSV,
    params:
        workloads=ACE_EXPERIMENT["synthetic_workloads"],
        scale=ACE_PROFILE.get("scale"),
    log:
        "results/logs/describe_ace_workloads.log",
    run:
        in_its_image(rule, input, output, log, threads, resources, table_steps.describe_ace_workloads,
                     workloads=params.workloads, scale=params.scale, csv_out=output.csv, log=log[0])


rule describe_restore_policies:
    """Table 6.1: the features each of Chapter 6's policies captures (systems/restore/restore/tables.py)."""
    input:
        "systems/restore/restore/tables.py",
        experiment="configs/experiments/restore.yaml",
        image=image("report"),
    output:
        csv=TABLE_6_1_CSV,
    params:
        policies=RESTORE_EXPERIMENT["policies"],
    log:
        "results/logs/describe_restore_policies.log",
    run:
        in_its_image(rule, input, output, log, threads, resources, table_steps.describe_restore_policies,
                     policies=params.policies, csv_out=output.csv, log=log[0])


rule describe_restore_workloads:
    """Table 6.4: the static and dynamic workloads of Figures 6.8 and 6.10, with their phases."""
    input:
        "systems/restore/restore/tables.py",
        experiment="configs/experiments/restore.yaml",
        image=image("report"),
    output:
        csv=TABLE_6_4_CSV,
    params:
        workloads=[w for figure in ("fig_6_8", "fig_6_10") for w in RESTORE_EXPERIMENT["figures"][figure]["workloads"]],
    log:
        "results/logs/describe_restore_workloads.log",
    run:
        in_its_image(rule, input, output, log, threads, resources, table_steps.describe_restore_workloads,
                     workloads=params.workloads, csv_out=output.csv, log=log[0])


rule describe_restore_devices:
    """Table 6.2: one thread's 4 KiB read and write latency, alpha and k of each of its devices this
    profile measures, and the reason for each it leaves out."""
    input:
        alpha_k=list(TABLE_6_2_ALPHA_K.values()),
        experiment="configs/experiments/restore.yaml",
        devices="configs/devices.yaml",
        presets="configs/emussd_presets.yaml",
        image=image("report"),
    output:
        csv=TABLE_6_2_CSV,
    params:
        rows=CONFIGS["experiments/restore.yaml"]["table_6_2"],
        alpha_k=TABLE_6_2_ALPHA_K,
        not_run=TABLE_6_2_NOT_RUN,
    resources:
        **memory_as_measured(),
    log:
        "results/logs/describe_restore_devices.log",
    benchmark:
        "results/benchmarks/describe_restore_devices.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, table_steps.describe_restore_devices,
                     rows=params.rows, alpha_k=params.alpha_k, not_run=params.not_run, csv_out=output.csv, log=log[0])

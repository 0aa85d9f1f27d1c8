# Thesis Chapter 3 (and Figure 2.1B, Section 2.4): the PIO model's analytical curves.

PIO_MODEL_CURVES = ["fig_2_1b", "fig_3_1", "fig_3_2", "fig_3_3", "fig_3_4", "expected_idle_channels"]
PIO_MODEL_CSV = routed_pattern("pio_model_curve", "curve")
PIO_MODEL_RESULTS = expand(PIO_MODEL_CSV, curve=PIO_MODEL_CURVES)


rule pio_model_curve:
    """Compute one PIO-model curve over its grid in configs/experiments/pio_model.yaml."""
    input:
        grid="configs/experiments/pio_model.yaml",
        code=["systems/pio/pio/model.py", "systems/pio/pio/curves.py"],
        image=image("pio"),
    output:
        csv=PIO_MODEL_CSV,
        sidecar=f"{PIO_MODEL_CSV}.json",
    wildcard_constraints:
        curve="|".join(PIO_MODEL_CURVES),
    resources:
        **memory_as_measured(),
    log:
        "results/logs/pio_model_curve/{curve}.log",
    benchmark:
        "results/benchmarks/pio_model_curve/{curve}.tsv"
    run:
        in_its_image(rule, input, output, log, threads, resources, pio_steps.pio_model_curve,
                     curve=wildcards.curve, csv=output.csv, log=log[0])

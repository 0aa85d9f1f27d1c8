"""The steps: what each workflow rule does, one module per system (pio, emussd, ace, cave,
restore) and one for the report (figures, claims, document), over `runtime` (where and how a
step runs). The rules call them by keyword; each step hands its system the work (the system
owns its campaign and its results) and writes the tidy CSV and its provenance sidecar.

Configuration reaches a step through one door, its keyword arguments, which its rule gives: the
profile's values as the rule's params, the files of configs/ as the workflow validated them once
(common.smk's CONFIGS, handed on by the run block; a rule whose output depends on a file lists it
among its inputs, so that a change reruns it). A step does not load configs/ again
(tests/test_runtime_on_the_rule.py).

Layers, imports pointing down only: rules -> steps -> systems -> core (ssdartifact).
"""

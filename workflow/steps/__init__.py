"""The steps: what each workflow rule does, one module per system (pio, emussd, ace, cave,
restore) and one for the report (figures, claims, document), over `runtime` (where and how a
step runs). The rules call them by keyword; each step hands its system the work (the system
owns its campaign and its results) and writes the tidy CSV and its provenance sidecar.

Layers, imports pointing down only: rules -> steps -> systems -> core (ssdartifact).
"""

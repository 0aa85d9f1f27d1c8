"""Glue shared by every rule of the workflow: config loading and validation,
provenance sidecars, tidy CSVs, the claims checker, the document generator and
the checksum manifest. Rules call it rather than repeating it."""

from pathlib import Path

# The repository root: rules and tests resolve every declared path against it.
REPO_ROOT = Path(__file__).resolve().parents[2]

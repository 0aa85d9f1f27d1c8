"""Loading and validating every file in configs/ against its JSON schema.

A bad value stops the run before anything executes, with a message naming the
file, the key and what is allowed. Every YAML file under configs/ must have a
schema (SCHEMA_OF), so nothing is read unvalidated.
"""

from __future__ import annotations

import copy
import fnmatch
import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from . import REPO_ROOT, blockdev
from .quoting import PATH_CHARACTERS, quoted

CONFIG_DIR = REPO_ROOT / "configs"
SCHEMA_DIR = CONFIG_DIR / "schemas"

# Which schema validates which config file (paths relative to configs/).
SCHEMA_OF = {
    "profiles/*.yaml": "profile",
    "devices.yaml": "devices",
    "inventory.yaml": "inventory",
    "claims.yaml": "claims",
    "experiments/pio_model.yaml": "pio_model",
    "containers.yaml": "containers",
    "emussd_presets.yaml": "emussd_presets",
    "experiments/emussd.yaml": "emussd",
    "experiments/pio.yaml": "pio",
    "experiments/ace.yaml": "ace",
    "experiments/cave.yaml": "cave",
    "datasets.yaml": "datasets",
    "sources.yaml": "sources",
    "experiments/restore.yaml": "restore",
}


class ConfigError(Exception):
    """A config file is missing, unreadable or does not match its schema."""


def schema_name_for(relative: str) -> str:
    for pattern, name in SCHEMA_OF.items():
        if fnmatch.fnmatch(relative, pattern):
            return name
    raise ConfigError(
        f"configs/{relative}: no schema validates this file; add it to SCHEMA_OF in "
        "workflow/ssdartifact/config.py with a schema in configs/schemas/"
    )


# Parsed YAML by its text: a step loads the same configs for every run it measures (devices.yaml
# twice per ACE run), and parsing the file and every schema again cost 0.7 s a load.
_PARSED: dict[str, Any] = {}
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's: the same YAML, ten times faster


def _read_yaml(path: Path) -> Any:
    """The file's YAML (a copy: callers may change what they get)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{_shown(path)}: file not found") from None
    if text not in _PARSED:
        try:
            _PARSED[text] = yaml.load(text, Loader=_LOADER)  # a safe loader (C or Python)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
            problem = getattr(error, "problem", None) or str(error)
            raise ConfigError(f"{_shown(path)}{where}: not valid YAML: {problem}") from None
    return copy.deepcopy(_PARSED[text])


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def load_schema(name: str) -> dict:
    return _read_yaml(SCHEMA_DIR / f"{name}.schema.yaml")


def _key_path(error: jsonschema.ValidationError, data: Any) -> str:
    """Where the error is, e.g. `devices[3] (name: nvme).max_bytes`: a list item is named by its
    `name` or `id` too, which is how the user knows it (counting items in a long file is not)."""
    parts, node = [], data
    for part in error.absolute_path:
        parts.append(f"[{part}]" if isinstance(part, int) else (f".{_name(part)}" if parts else _name(part)))
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            node = None
        if isinstance(part, int) and isinstance(node, dict):
            label = next((f"{key}: {_name(node[key])}" for key in ("name", "id") if isinstance(node.get(key), str)),
                         None)
            if label:
                parts.append(f" ({label})")
    return "".join(parts) or "(top level)"


def _name(key: object) -> str:
    """A key or a name as the user wrote it, quoted when it is more than letters, digits and . _ - @ +
    (what it holds may not cut or forge the message's line)."""
    text = str(key)  # a YAML key may be a number or a boolean
    return text if re.fullmatch(r"[\w.@+-]{1,60}", text, re.ASCII) else quoted(text)


def _describe(error: jsonschema.ValidationError) -> str:
    """One line saying what is wrong and what is allowed."""
    kind, spec, value = error.validator, error.validator_value, error.instance
    if kind == "enum":
        allowed = ", ".join(repr(v) for v in spec)
        return f"{quoted(value)} is not allowed; allowed values: {allowed}"
    if kind == "const":
        return f"{quoted(value)} is not allowed; it must be {spec!r}"
    if kind == "type":
        return f"{quoted(value)} has the wrong type; expected {spec if isinstance(spec, str) else ' or '.join(spec)}"
    if kind in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        relation = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}[kind]
        return f"{quoted(value)} is out of range; it must be {relation} {spec}"
    if kind == "required":
        missing = [key for key in spec if key not in value]
        return f"missing required key(s): {', '.join(missing)}"
    if kind == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(value) - set(allowed))
        return f"unknown key(s) {', '.join(map(quoted, unknown))}; allowed keys: {', '.join(allowed)}"
    if kind == "pattern":
        return f"{quoted(value)} does not match the required form {spec!r}"
    if kind in ("minItems", "maxItems", "uniqueItems"):
        return error.message
    if kind in ("oneOf", "anyOf"):
        return "matches none of the allowed forms"
    return error.message


def _schema_registry() -> Registry:
    """Every schema under its file name, so one schema can $ref another's definitions."""
    resources = [(path.name, Resource.from_contents(_read_yaml(path), default_specification=DRAFT202012))
                 for path in sorted(SCHEMA_DIR.glob("*.schema.yaml"))]
    return Registry().with_resources(resources)


def validate(data: Any, schema_name: str, shown_path: str) -> Any:
    """Validate data against a named schema; raise ConfigError listing every problem."""
    schema = load_schema(schema_name)
    validator = jsonschema.Draft202012Validator(schema, registry=_schema_registry())
    errors = sorted(validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if errors:
        lines = []
        for error in errors:
            # A schema's description says what is allowed; an unknown key's message lists that already.
            hint = (error.schema.get("description") if isinstance(error.schema, dict)
                    and error.validator != "additionalProperties" else None)
            line = f"{shown_path}: key {_key_path(error, data)}: {_describe(error)}"
            lines.append(line + (f" ({hint})" if hint else ""))
        raise ConfigError("\n".join(lines))
    return data


def load(relative: str) -> Any:
    """Load and validate configs/<relative>. Validated once per content: a run asks for the same
    file many times (the device file at every step and every device opened)."""
    path = CONFIG_DIR / relative
    parsed = _read_yaml(path)
    key = (json.dumps(parsed, sort_keys=True, default=str), schema_name_for(relative), str(SCHEMA_DIR))
    if key not in _VALIDATED:
        _VALIDATED[key] = validate(parsed, schema_name_for(relative), _shown(path))
    return copy.deepcopy(_VALIDATED[key])


_VALIDATED: dict[tuple, Any] = {}  # (content, schema, schema folder) -> the validated content


def all_config_files() -> list[str]:
    return sorted(
        str(path.relative_to(CONFIG_DIR))
        for path in CONFIG_DIR.rglob("*.yaml")
        if SCHEMA_DIR not in path.parents
    )


def profile_names() -> list[str]:
    return sorted(path.stem for path in (CONFIG_DIR / "profiles").glob("*.yaml"))


def load_profile(name: str) -> dict:
    relative = f"profiles/{name}.yaml"
    if not (CONFIG_DIR / relative).exists():
        raise ConfigError(f"profile {quoted(name)} does not exist; choose one of: {', '.join(profile_names())} "
                          "(configs/profiles/)")
    return load(relative)


def _duplicates(values: list[str]) -> list[str]:
    seen, repeated = set(), []
    for value in values:
        if value in seen and value not in repeated:
            repeated.append(value)
        seen.add(value)
    return repeated


def cross_file_problems(loaded: dict[str, Any]) -> list[str]:
    """What a schema cannot see: names that must match across files, files that must exist.
    A file that did not validate is not in `loaded`, and nothing is checked against it: its own
    errors are reported, not every reference to it as well."""
    problems = []
    declared = loaded.get("devices.yaml", {}).get("devices", [])
    devices = [d["name"] for d in declared]
    for name in _duplicates(devices):
        problems.append(f"configs/devices.yaml: device name {quoted(name)} is declared more than once")
    file_devices = [d["name"] for d in declared
                    if d["kind"] == "file" or (d["kind"] == "loop" and d.get("file_system"))]
    for index, device in enumerate(declared):
        where = f"configs/devices.yaml: key devices[{index}] (name: {device['name']})"
        if "emussd_presets.yaml" in loaded and device.get("preset") is not None:
            presets = loaded["emussd_presets.yaml"]["presets"]
            if device["preset"] not in presets:
                problems.append(f"{where}.preset: {quoted(device['preset'])} is not in configs/emussd_presets.yaml; "
                                f"presets: {', '.join(presets)}")
        twin = device.get("file_system_twin")
        if twin is not None and twin not in file_devices:
            problems.append(f"{where}.file_system_twin: {quoted(twin)} is not a declared file device (or loop device "
                            "with a file_system); such devices: "
                            f"{', '.join(file_devices) or 'none'}")
    problems += _device_model_problems(loaded, devices)
    for relative, profile in loaded.items():
        if not relative.startswith("profiles/"):
            continue
        if profile["name"] != Path(relative).stem:
            problems.append(f"configs/{relative}: key name: {quoted(profile['name'])} must equal the file name "
                            f"{Path(relative).stem!r}")
        for device in profile["devices"] if "devices.yaml" in loaded else []:
            if device not in devices:
                problems.append(f"configs/{relative}: key devices: {quoted(device)} is not declared in "
                                f"configs/devices.yaml; declared: {', '.join(devices) or 'none'}")
        for system in ("ace", "cave"):
            for figure, grid in profile.get(system, {}).get("figures", {}).items():
                for device in grid["devices"]:
                    if device not in profile["devices"]:
                        problems.append(f"configs/{relative}: key {system}.figures.{figure}.devices: {quoted(device)} "
                                        f"is not in this profile's devices ({', '.join(profile['devices']) or 'none'})"
                                        "; add it there")
        known = loaded.get("datasets.yaml", {}).get("downloads", {})
        for name in profile.get("cave", {}).get("downloads", []) if "datasets.yaml" in loaded else []:
            if name not in known:
                problems.append(f"configs/{relative}: key cave.downloads: {quoted(name)} is not in "
                                f"configs/datasets.yaml's downloads ({', '.join(known) or 'none'})")
        for figure, grid in profile.get("ace", {}).get("figures", {}).items():
            if "experiments/ace.yaml" not in loaded:
                break
            workloads = loaded["experiments/ace.yaml"]["synthetic_workloads"]
            for workload in grid.get("workloads", []):
                if workload not in workloads:
                    problems.append(f"configs/{relative}: key ace.figures.{figure}.workloads: {quoted(workload)} "
                                    "is not in configs/experiments/ace.yaml's synthetic_workloads "
                                    f"({', '.join(workloads)})")
        for device in profile["characterize"]["devices"]:
            if device not in profile["devices"]:
                problems.append(f"configs/{relative}: key characterize.devices: {quoted(device)} is not in this "
                                f"profile's devices ({', '.join(profile['devices']) or 'none'}); add it there")
        for device in profile.get("raw_vs_fs", {}).get("devices", []):
            twin = next((d.get("file_system_twin") for d in declared if d["name"] == device), None)
            for needed in (device, twin):
                if needed is not None and needed not in profile["devices"]:
                    problems.append(f"configs/{relative}: key raw_vs_fs.devices: {quoted(needed)} is measured for "
                                    f"Figure 2.7 but is not in this profile's devices; add it there")
            if twin is None and device in devices:
                problems.append(f"configs/{relative}: key raw_vs_fs.devices: {quoted(device)} has no file_system_twin "
                                "in configs/devices.yaml; Figure 2.7 compares a raw device with its twin")
        if "table_6_2" in profile and "experiments/restore.yaml" in loaded:
            problems += _table_6_2_problems(relative, profile, loaded["experiments/restore.yaml"]["table_6_2"])
    if "experiments/restore.yaml" in loaded and "devices.yaml" in loaded:
        for index, row in enumerate(loaded["experiments/restore.yaml"]["table_6_2"]):
            if row["device"] not in devices:
                problems.append(f"configs/experiments/restore.yaml: key table_6_2[{index}].device: "
                                f"{quoted(row['device'])} is not declared in configs/devices.yaml; declared: "
                                f"{', '.join(devices)}")
    inventory = loaded.get("inventory.yaml")
    if inventory:
        for kind in ("figures", "tables"):
            ids = [item["id"] for item in inventory[kind]]
            for item_id in _duplicates(ids):
                problems.append(f"configs/inventory.yaml: {kind} id {quoted(item_id)} appears more than once")
            for index, item in enumerate(inventory[kind]):
                where = f"configs/inventory.yaml: key {kind}[{index}]"
                if int(item["id"].split(".")[0]) != item["chapter"]:
                    problems.append(f"{where}.chapter: {item['chapter']} does not match id {quoted(item['id'])}")
                script = item.get("reproduced", {}).get("script")
                if script and not (REPO_ROOT / script).exists():
                    problems.append(f"{where}.reproduced.script: {script} does not exist")
    claims = loaded.get("claims.yaml")
    if claims:
        for claim_id in _duplicates([c["id"] for c in claims["claims"]]):
            problems.append(f"configs/claims.yaml: claim id {quoted(claim_id)} appears more than once")
    return problems


def _table_6_2_problems(relative: str, profile: dict, rows: list[dict]) -> list[str]:
    """A profile's table_6_2: the devices it leaves out are the table's, and those it measures are
    its own (the profile's devices: no run touches an undeclared device)."""
    table = [row["device"] for row in rows]
    not_run = profile["table_6_2"].get("not_run", {})
    problems = [f"configs/{relative}: key table_6_2.not_run: {quoted(device)} is not a device of Table 6.2 "
                f"(configs/experiments/restore.yaml, table_6_2: {', '.join(table)})"
                for device in not_run if device not in table]
    problems += [f"configs/{relative}: key table_6_2: {quoted(device)} is measured for Table 6.2 but is not in this "
                 "profile's devices; add it there, or to table_6_2.not_run with the reason the table prints"
                 for device in table if device not in not_run and device not in profile["devices"]]
    return problems


def _device_model_problems(loaded: dict[str, Any], devices: list[str]) -> list[str]:
    """Every device model an experiment names (the bufferpool simulator's, ReStore's tiers) is a
    preset of configs/emussd_presets.yaml or an emulated device of configs/devices.yaml."""
    if "emussd_presets.yaml" not in loaded or "devices.yaml" not in loaded:
        return []
    presets = loaded["emussd_presets.yaml"]["presets"]
    emulated = {d["name"]: d for d in loaded["devices.yaml"]["devices"] if d["kind"] == "emulated"}
    named = []
    if "experiments/ace.yaml" in loaded:
        simulator = loaded["experiments/ace.yaml"]["simulator"]
        named += [("experiments/ace.yaml", f"simulator.fig_4_2.presets[{i}]", name, None)
                  for i, name in enumerate(simulator["fig_4_2"]["presets"])]
        named.append(("experiments/ace.yaml", "simulator.fig_4_14a.device", simulator["fig_4_14a"]["device"], None))
    if "experiments/restore.yaml" in loaded:
        named += [("experiments/restore.yaml", f"tiers[{i}]", name, "restore")
                  for i, name in enumerate(loaded["experiments/restore.yaml"]["tiers"])]
    problems = []
    for relative, key, name, user in named:
        if name in presets:
            model = presets[name]
        elif name in emulated:
            model = {**presets.get(emulated[name].get("preset"), {}), **emulated[name]}
        else:
            problems.append(f"configs/{relative}: key {key}: {quoted(name)} is neither a preset of "
                            f"configs/emussd_presets.yaml ({', '.join(presets)}) nor an emulated device of "
                            f"configs/devices.yaml ({', '.join(emulated) or 'none'})")
            continue
        if user == "restore" and model["alpha"] < 1:
            problems.append(f"configs/{relative}: key {key}: {quoted(name)} has alpha {model['alpha']:g}; ReStore's "
                            "tiers need alpha >= 1 (a write costs at least a read)")
    return problems


def block_device_problems(declared: list[dict], used: list[str]) -> list[str]:
    """The safety checks of every raw block device the profile uses (blockdev.check_block_device),
    and what a loop device needs, run before anything else: a refused device must not stop the run
    after other jobs have run."""
    problems = []
    for device in declared:
        if device["kind"] == "block" and device["name"] in used:
            try:
                blockdev.check_block_device(device)
            except blockdev.BlockDeviceRefused as error:
                problems.append(f"configs/devices.yaml: {error}")
        if device["kind"] == "loop" and device["name"] in used:
            mkfs = f"mkfs.{device['file_system']}" if device.get("file_system") else None
            missing = [need for need, ok in (("root", os.geteuid() == 0),
                                             ("/dev/loop-control", os.path.exists("/dev/loop-control")),
                                             ("losetup", shutil.which("losetup")),
                                             (mkfs, mkfs is None or shutil.which(mkfs)))
                       if not ok]
            if missing:
                problems.append(f"configs/devices.yaml: loop device {quoted(device['name'])} is used by the profile, "
                                f"but making it needs {', '.join(missing)} (natively, as root, with util-linux and "
                                "e2fsprogs); run as root or take it out of the profile's devices")
    return problems


ARTIFACT_SCRATCH = REPO_ROOT / "scratch"  # the artifact's own work folder: not in git, made as it is needed


def artifact_owned(path: str) -> bool:
    """Whether a file device's declared path is inside the repository's scratch/ folder: the
    artifact's own (configs/devices.yaml's local-disk; a fresh clone has no scratch/), made when
    the device is first opened. Any other path is the user's, and is never made."""
    return ARTIFACT_SCRATCH in Path(os.path.normpath(REPO_ROOT / path)).parents


def file_device_problems(device: dict, *, mounts: bool = True) -> list[str]:
    """What keeps a `file` device from being measured where it is declared. Its path must be a
    directory that exists (the artifact's own may be missing: artifact_owned), held by the file
    system its mount_point and file_system name, when it names them. `mounts`: check those two
    (False inside a step's container, where the host's mounts are not visible: the host checked them)."""
    where, declared = f"configs/devices.yaml: device {quoted(device['name'])}", device["path"]
    path, shown = REPO_ROOT / declared, quoted(declared, PATH_CHARACTERS)
    if not path.exists():
        if artifact_owned(declared):
            return []
        return [f"{where}: key path: {shown} does not exist. Make that directory on the file system to measure, or "
                "correct the path; the workflow never creates it, so that a mistyped or unmounted path is not "
                "measured on the disk under it."]
    if not path.is_dir():
        what = "a regular file, not a directory" if path.is_file() else "not a directory"
        return [f"{where}: key path: {shown} is {what}. Declare a directory on the file system to measure."]
    if not mounts or ("mount_point" not in device and "file_system" not in device):
        return []
    held = blockdev.mount_of(str(path))
    if held is None:
        return [f"{where}: key path: {shown} is on no file system of /proc/self/mountinfo, so its mount_point and "
                "file_system cannot be checked; run where /proc is mounted"]
    mount_point, file_system = held
    mounted, wanted = quoted(mount_point, PATH_CHARACTERS), device.get("mount_point")
    problems = []
    if wanted is not None and os.path.realpath(wanted) != mount_point:
        wanted = quoted(wanted, PATH_CHARACTERS)
        problems.append(f"{where}: key mount_point: path {shown} is on the file system mounted at {mounted}, not at "
                        f"{wanted}. Mount the device at {wanted}, or correct mount_point.")
    wanted = device.get("file_system")  # a file-system type: its pattern allows nothing to escape
    if wanted is not None and wanted != file_system:
        problems.append(f"{where}: key file_system: path {shown} is on a file system of type {file_system} (mounted "
                        f"at {mounted}), not {wanted}. Put the path on a file system of type {wanted}, or correct "
                        "file_system.")
    return problems


def check_all(profile: str) -> dict[str, Any]:
    """Validate every config file and the chosen profile; collect all problems at once."""
    problems, loaded = [], {}
    for relative in all_config_files():
        try:
            loaded[relative] = load(relative)
        except ConfigError as error:
            problems.append(str(error))
    try:
        chosen = load_profile(profile)
    except ConfigError as error:
        problems.append(str(error))
        chosen = None
    problems += cross_file_problems(loaded)
    if chosen is not None and "devices.yaml" in loaded:
        declared = loaded["devices.yaml"]["devices"]
        problems += block_device_problems(declared, chosen["devices"])
        # A device on a cluster's node is checked there, when an experiment opens it (devices.opened).
        problems += [problem for device in declared
                     if device["kind"] == "file" and device["name"] in chosen["devices"] and "cluster" not in device
                     for problem in file_device_problems(device)]
    if problems:
        raise ConfigError("\n".join(problems))
    return loaded


def config_hash(*relatives: str) -> str:
    """sha256 over the validated content of the given config files (order-independent of formatting)."""
    canonical = json.dumps({rel: load(rel) for rel in sorted(relatives)}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

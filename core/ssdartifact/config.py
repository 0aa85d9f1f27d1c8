"""Loading and validating every file in configs/ against its JSON schema.

A bad value stops the run before anything executes, with a message naming the
file, the key and what is allowed. Every YAML file under configs/ must have a
schema (SCHEMA_OF), so nothing is read unvalidated. A folder (claims/, inventory/: one file per
chapter) is loaded as one file, its files merged (_load_folder) and then validated.
"""

from __future__ import annotations

import copy
import fnmatch
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from . import REPO_ROOT, ownprofile
from .quoting import quoted

CONFIG_DIR = REPO_ROOT / "configs"
SCHEMA_DIR = CONFIG_DIR / "schemas"

# Which schema validates which config file or merged folder (paths relative to configs/).
SCHEMA_OF = {
    "profiles/*.yaml": "profile",
    "devices.yaml": "devices",
    "inventory": "inventory",
    "claims": "claims",
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
MERGED_FOLDERS = ("claims", "inventory")  # one file per chapter, loaded as one file each (_load_folder)


class ConfigError(Exception):
    """A config file is missing, unreadable or does not match its schema."""


def schema_name_for(relative: str) -> str:
    for pattern, name in SCHEMA_OF.items():
        if fnmatch.fnmatch(relative, pattern):
            return name
    raise ConfigError(
        f"configs/{relative}: no schema validates this file; add it to SCHEMA_OF in "
        "core/ssdartifact/config.py with a schema in configs/schemas/"
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
    """Load and validate configs/<relative>, a file or a merged folder (claims, inventory). Validated
    once per content: a run asks for the same file many times (the device file at every step)."""
    if relative in MERGED_FOLDERS:
        return _validated(_load_folder(relative), schema_name_for(relative), f"configs/{relative}/")
    loaded = _load_file(CONFIG_DIR / relative, schema_name_for(relative))
    if relative == "devices.yaml":
        loaded["devices"] += local_devices()
    return loaded


def _load_file(path: Path, schema: str) -> Any:
    return _validated(_read_yaml(path), schema, _shown(path))


def _validated(parsed: Any, schema: str, shown_path: str) -> Any:
    key = (json.dumps(parsed, sort_keys=True, default=str), schema, str(SCHEMA_DIR))
    if key not in _VALIDATED:
        _VALIDATED[key] = validate(parsed, schema, shown_path)
    return copy.deepcopy(_VALIDATED[key])


def folder_files(folder: Path) -> list[Path]:
    """A merged folder's files in merge order: by name without .yaml (chapter-3 before chapter-3-...)."""
    return sorted(folder.glob("*.yaml"), key=lambda path: path.stem)


def _load_folder(relative: str) -> dict:
    """The folder's files merged: each top-level key's list is the files' lists one after the other,
    in folder_files's order. An entry's id (claims, figures, tables, supplementary) or number
    (chapters) defined twice stops the load, naming both files."""
    merged: dict[str, list] = {}
    defined: dict[tuple, str] = {}  # (key, id) -> the file that defines it
    for path in folder_files(CONFIG_DIR / relative):
        shown, part = f"configs/{relative}/{path.name}", _read_yaml(path)
        if not isinstance(part, dict):
            raise ConfigError(f"{shown}: a mapping of keys to lists is expected, to merge with configs/{relative}/'s "
                              "other files")
        for key, entries in part.items():
            if not isinstance(entries, list):
                raise ConfigError(f"{shown}: key {key}: a list is expected, to merge with configs/{relative}/'s "
                                  "other files")
            for entry in entries:
                name = entry.get("id", entry.get("number")) if isinstance(entry, dict) else None
                if name is None:
                    continue
                if (key, name) in defined:
                    raise ConfigError(f"{shown}: key {key}: {quoted(name)} is defined more than once (also in "
                                      f"{defined[key, name]})")
                defined[key, name] = shown
            merged.setdefault(key, []).extend(entries)
    if not merged:
        raise ConfigError(f"configs/{relative}/: no .yaml file in this folder")
    return merged


def local_devices_file() -> Path:
    """Your own device, declared by `make characterize DEVICE=...` (steps/own.py); git ignores it. Its
    devices join configs/devices.yaml's wherever that is loaded; the `own` profile runs on them."""
    return CONFIG_DIR / "devices.local.yaml"


def local_devices() -> list[dict]:
    """The devices of configs/devices.local.yaml (your own, from `make characterize`), or none."""
    path = local_devices_file()
    return _load_file(path, "devices")["devices"] if path.exists() else []


_VALIDATED: dict[tuple, Any] = {}  # (content, schema, schema folder) -> the validated content


def all_config_files() -> list[str]:
    """Every config under configs/, a merged folder counting as one."""
    relatives = [path.relative_to(CONFIG_DIR) for path in CONFIG_DIR.rglob("*.yaml")
                 if SCHEMA_DIR not in path.parents and path != local_devices_file()]  # that one is part of devices.yaml
    return sorted({r.parts[0] if r.parts[0] in MERGED_FOLDERS else str(r) for r in relatives})


def profile_names() -> list[str]:
    return sorted([path.stem for path in (CONFIG_DIR / "profiles").glob("*.yaml")] + [ownprofile.NAME])


def load_profile(name: str) -> dict:
    if name == ownprofile.NAME:
        return own_profile()
    relative = f"profiles/{name}.yaml"
    if not (CONFIG_DIR / relative).exists():
        raise ConfigError(f"profile {quoted(name)} does not exist; choose one of: {', '.join(profile_names())} "
                          "(configs/profiles/)")
    return load(relative)


def own_profile() -> dict:
    """The quick profile with your own device (configs/devices.local.yaml) in every device list
    (ownprofile.expand), validated like a profile file."""
    own, local = local_devices(), _shown(local_devices_file())
    if len(own) != 1:
        raise ConfigError(f"profile 'own' runs on one device of {local}, which declares {len(own)}. Declare it "
                          "with `make characterize DEVICE=<a directory on your SSD>` (docs/your-own-ssd.md).")
    expanded = ownprofile.expand(load_profile("quick"), own[0])
    return validate(expanded, "profile", f"profile own (configs/profiles/quick.yaml with {local})")


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
        problems.append(f"configs/devices.yaml: device name {quoted(name)} is declared more than once (here or in "
                        f"{_shown(local_devices_file())})")
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
    inventory = loaded.get("inventory")  # an id defined twice stops its load (_load_folder)
    if inventory:
        for kind in ("figures", "tables"):
            for index, item in enumerate(inventory[kind]):
                where = f"configs/inventory/: key {kind}[{index}]"
                if int(item["id"].split(".")[0]) != item["chapter"]:
                    problems.append(f"{where}.chapter: {item['chapter']} does not match id {quoted(item['id'])}")
                script = item.get("reproduced", {}).get("script")
                if script and not (REPO_ROOT / script).exists():
                    problems.append(f"{where}.reproduced.script: {script} does not exist")
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


def validation_problems(profile: str) -> tuple[dict[str, Any], dict | None, list[str]]:
    """Every config file and the chosen profile validated, and checked across files: the files
    loaded, the profile (None when it is not valid) and every problem found, all at once."""
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
    if chosen is not None and profile == ownprofile.NAME:
        loaded["profiles/own.yaml"] = chosen  # made, not read: checked across files as a file would be
    return loaded, chosen, problems + cross_file_problems(loaded)


def check_all(profile: str) -> dict[str, Any]:
    """Validate every config file and the chosen profile; one error with every problem. What this
    host must offer the profile's devices is checked beside (preflight.check)."""
    loaded, _, problems = validation_problems(profile)
    if problems:
        raise ConfigError("\n".join(problems))
    return loaded


def config_hash(*relatives: str) -> str:
    """sha256 over the validated content of the given config files (order-independent of formatting)."""
    canonical = json.dumps({rel: load(rel) for rel in sorted(relatives)}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

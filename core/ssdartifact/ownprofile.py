"""The `own` profile: the quick profile with every device replaced by your own one.

`make characterize DEVICE=...` declares one device in configs/devices.local.yaml (git ignores
it). `expand` turns the quick profile into a profile that runs every experiment that measures a
device on that one device, and keeps everything else (sizes, fio point, the simulations).

What cannot run on your device is left out, never run on another device:
- Figure 2.7 (`raw_vs_fs`) compares a raw device with its file-system twin;
- Table 6.2 (`table_6_2`) measures the thesis's own devices (emulated stand-ins);
- on a raw block device, Chapters 4 and 5 (`ace`, `cave` figures): a database and a graph
  engine need a file system.
"""

from __future__ import annotations

import copy

NAME = "own"
# Keys of the quick profile that name devices and that the own profile drops (see above).
DROPPED = ("raw_vs_fs", "table_6_2")
NEEDS_FILE_SYSTEM = ("ace", "cave")


def expand(base: dict, device: dict) -> dict:
    """`base` (the quick profile) with `device` (a declaration) in every device list."""
    name = device["name"]
    profile = copy.deepcopy(base)
    profile["name"] = NAME
    profile["description"] = (f"Your own device {name} (configs/devices.local.yaml) in every experiment that "
                              f"measures a device; everything else as the {base['name']} profile.")
    profile["devices"] = [name]
    profile["characterize"]["devices"] = [name]
    for key in DROPPED:
        profile.pop(key, None)
    for system in NEEDS_FILE_SYSTEM:
        figures = profile.get(system, {}).get("figures", {})
        if device["kind"] == "block":
            figures.clear()
        for grid in figures.values():
            grid["devices"] = [name]
    return profile

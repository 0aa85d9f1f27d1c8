"""One rule for the device model's parameters: configs/schemas/devices.schema.yaml and emussd's own
argument checks accept exactly the same values (checked at the edges of every range), so that a
declaration the configuration accepts never fails when the device is mounted, and the reverse."""

from __future__ import annotations

import json
import subprocess

import pytest

from emussd.harness import DEFAULT_BUILD_DIR, build
from ssdartifact import config

BASE = {"read_latency_us": 100, "alpha": 2, "k_r": 4, "k_w": 2}
EDGES = {
    "read_latency_us": [-1, 0, 1e-3, 1, 1e7, 1.0000001e7],
    "alpha": [-1, 0, 1e-6, 0.5, 1, 1000, 1000.5],  # alpha < 1: a device whose writes are cheaper
    "k_r": [0, 1, 2.5, 4096, 4097],
    "k_w": [0, 1, 4096, 4097],
    "page_size": [256, 512, 3000, 4096, 65536, 131072, 1048576, 2097152],
    "channels": [-1, 1, 8192, 8193],  # 0 (no shared limit) is the key's absence in a declaration
    "time_dilation": [0.5, 1, 2.5, 1e5, 100001],
}


@pytest.fixture(scope="module")
def binary():
    build(DEFAULT_BUILD_DIR, targets=("emussd",))
    return DEFAULT_BUILD_DIR / "emussd"


def schema_accepts(device: dict) -> bool:
    document = {"devices": [{"name": "emu", "kind": "emulated", **device}]}
    try:
        config.validate(document, "devices", "configs/devices.yaml")
    except config.ConfigError:
        return False
    return True


def emussd_accepts(binary, device: dict) -> bool:
    arguments = [arg for key, value in device.items() for arg in (f"--{key.replace('_', '-')}", repr(value))]
    result = subprocess.run([str(binary), "--check", *arguments], capture_output=True, text=True, timeout=10)
    assert result.returncode in (0, 2), result.stderr
    if result.returncode == 0:
        params = json.loads(result.stdout)
        for key, value in device.items():
            assert params[key] == pytest.approx(value), (key, params)
    return result.returncode == 0


@pytest.mark.parametrize("key, value", [(key, value) for key, values in EDGES.items() for value in values])
def test_the_schema_and_emussd_accept_the_same_values(binary, key, value):
    device = {**BASE, key: value}
    assert schema_accepts(device) == emussd_accepts(binary, device), device


def test_alpha_below_one_is_a_declarable_device(binary):
    """A course may emulate a device with cached writes; "alpha >= 1 on flash" is a measured claim."""
    device = {**BASE, "alpha": 0.25}
    assert schema_accepts(device) and emussd_accepts(binary, device)


@pytest.fixture(scope="module")
def shared_library():
    from emussd import library  # noqa: PLC0415

    return library.build()


def library_accepts(shared_library, device: dict) -> bool:
    from emussd import library  # noqa: PLC0415

    try:
        library.Device(**{"page_size": 4096, **device}, library=shared_library).close()
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("key, value", [(key, value) for key, values in EDGES.items() for value in values])
def test_the_library_device_and_emussd_accept_the_same_values(binary, shared_library, key, value):
    """One model, one rule: fio's engine, Python's devices and CAVE's --emulate parse the same spec."""
    device = {**BASE, key: value}
    assert library_accepts(shared_library, device) == emussd_accepts(binary, device), device

"""Every config is validated before anything runs; a bad value is reported with
the file, the key and what is allowed."""

import os
import re

import pytest
import yaml

from ssdartifact import REPO_ROOT, blockdev, config, preflight
from steps.__main__ import main


def test_shipped_configs_are_valid():
    for profile in ("quick", "full", "ci", "lab"):
        config.check_all(profile)


def test_every_yaml_file_has_a_schema(configs):
    (configs / "experiments" / "stray.yaml").write_text("a: 1\n")
    with pytest.raises(config.ConfigError, match=r"configs/experiments/stray.yaml: no schema validates this file"):
        config.check_all("quick")


def _edit(path, change):
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def _error(profile="quick"):
    with pytest.raises(config.ConfigError) as caught:
        preflight.check(profile)
    return str(caught.value)


@pytest.mark.parametrize(("relative", "change", "expected"), [
    ("profiles/quick.yaml", lambda d: d.update(runtime="dockr"),
     r"profiles/quick.yaml: key runtime: 'dockr' is not allowed; allowed values: 'native'"),
    ("profiles/quick.yaml", lambda d: d.update(colour="red"),
     r"profiles/quick.yaml: key \(top level\): unknown key\(s\) 'colour'; allowed keys: ace, ace_server, cave, "
     r"characterize, description, devices, fio_point, name, raw_vs_fs, restore, runtime"),
    ("devices.yaml", lambda d: d["devices"][0].update(kind="tape"),
     r"devices.yaml: key devices\[0\] \(name: local-disk\).kind: 'tape' is not allowed; "
     r"allowed values: 'file', 'block', 'emulated'"),
    ("devices.yaml", lambda d: d["devices"].append({"name": "emu", "kind": "emulated", "read_latency_us": 50,
                                                     "alpha": 0, "k_r": 4, "k_w": 2}),
     r"devices.yaml: key devices\[\d+\] \(name: emu\).alpha: 0 is out of range; it must be > 0"),
    ("devices.yaml", lambda d: d["devices"][0].update(path="scratch/x\ny"),
     r"devices.yaml: key devices\[0\] \(name: local-disk\).path: 'scratch/x\\ny' does not match the required form"),
    ("devices.yaml", lambda d: d["devices"].append({"name": "nvme", "kind": "block", "path": "/dev/nvme1n1"}),
     r"devices.yaml: key devices\[\d+\] \(name: nvme\): missing required key\(s\): destructive"),
    ("experiments/pio_model.yaml", lambda d: d["fig_3_2"].update(alphas=[0.5, 2]),
     r"pio_model.yaml: key fig_3_2.alphas\[0\]: 0.5 is out of range; it must be >= 1"),
    ("experiments/pio_model.yaml", lambda d: d["fig_3_4"].update(k_r="many"),
     r"pio_model.yaml: key fig_3_4.k_r: 'many' has the wrong type; expected array"),
    ("claims/chapter-2.yaml", lambda d: d["claims"][0]["check"].update(kind="vibes"),
     r"configs/claims/: key claims\[0\] \(id: pio-2.4-idle-channels-at-n\).check.kind: 'vibes' is not allowed; "
     r"allowed values: 'value', 'monotone'"),
    ("inventory/chapter-1.yaml", lambda d: d["figures"][0].update({"class": "photo"}),
     r"configs/inventory/: key figures\[0\] \(id: 1.1\).class: 'photo' is not allowed"),
    ("inventory/chapter-1.yaml", lambda d: d["figures"].pop(),
     r"configs/inventory/: key figures: .* is too short"),
])
def test_bad_value_names_file_key_and_allowed(configs, relative, change, expected):
    _edit(configs / relative, change)
    assert re.search(expected, _error()), _error()


def test_profile_must_name_declared_devices(configs):
    _edit(configs / "profiles/quick.yaml", lambda d: d.update(devices=["optane"]))
    assert "key devices: 'optane' is not declared in configs/devices.yaml; declared: local-disk, emu-optane" in _error()


def test_profile_name_must_match_file(configs):
    _edit(configs / "profiles/ci.yaml", lambda d: d.update(name="quick"))
    assert "profiles/ci.yaml: key name: 'quick' must equal the file name 'ci'" in _error("ci")


def test_unknown_profile_lists_the_known_ones(configs):
    assert "profile 'fast' does not exist; choose one of: ci, full, lab, own, quick" in _error("fast")


def test_yaml_syntax_error_gives_the_line(configs):
    (configs / "devices.yaml").write_text("devices:\n  - name: x\n    kind: [file\n")
    assert re.search(r"devices.yaml \(line \d+, column \d+\): not valid YAML", _error())


def test_a_load_sees_the_file_as_it_is_now_and_returns_a_copy(configs):
    """Parsed files are reused (a step loads devices.yaml for every run it measures), but by their
    text: an edit is seen at once, even one that keeps the size, and no caller changes another's."""
    path = configs / "profiles/quick.yaml"
    first = config.load("profiles/quick.yaml")
    first["devices"].append("changed by a caller")
    assert config.load("profiles/quick.yaml")["devices"] == first["devices"][:-1]
    text = path.read_text()
    assert "runtime_ms: 300," in text
    path.write_text(text.replace("runtime_ms: 300,", "runtime_ms: 400,"))  # same size, same second
    assert config.load("profiles/quick.yaml")["fio_point"]["runtime_ms"] == 400


def test_reproduced_script_must_exist(configs):
    def change(d):
        d["figures"][0]["reproduced"] = {"script": "figures/scripts/fig_1_1.R", "inputs": ["results/x.csv"]}
    _edit(configs / "inventory/chapter-1.yaml", change)
    assert "figures[0].reproduced.script: figures/scripts/fig_1_1.R does not exist" in _error()


def test_duplicate_claim_ids_are_refused(configs):
    _edit(configs / "claims/chapter-2.yaml", lambda d: d["claims"].append(d["claims"][0]))
    claim_id = yaml.safe_load((configs / "claims/chapter-2.yaml").read_text())["claims"][0]["id"]
    assert (f"configs/claims/chapter-2.yaml: key claims: {claim_id!r} is defined more than once "
            "(also in configs/claims/chapter-2.yaml)") in _error()


def test_an_id_in_two_files_is_refused_naming_both(configs):
    claim = yaml.safe_load((configs / "claims/chapter-2.yaml").read_text())["claims"][0]
    _edit(configs / "claims/chapter-6.yaml", lambda d: d["claims"].append(claim))
    assert (f"configs/claims/chapter-6.yaml: key claims: {claim['id']!r} is defined more than once "
            "(also in configs/claims/chapter-2.yaml)") in _error()
    figure = yaml.safe_load((configs / "inventory/chapter-4.yaml").read_text())["figures"][0]
    _edit(configs / "inventory/chapter-5.yaml", lambda d: d["figures"].insert(0, figure))
    with pytest.raises(config.ConfigError, match=r"configs/inventory/chapter-5.yaml: key figures: '4.1' is defined "
                       r"more than once \(also in configs/inventory/chapter-4.yaml\)"):
        config.load("inventory")


def test_the_folders_merge_in_the_order_of_their_files(configs):
    """Each key's list is the files' lists one after the other, by name without .yaml."""
    names = [path.name for path in config.folder_files(configs / "claims")]
    assert (names.index("chapter-3.yaml") < names.index("chapter-3-measured-devices.yaml")
            < names.index("chapter-4.yaml"))
    claims = [claim["id"] for name in names
              for claim in yaml.safe_load((configs / "claims" / name).read_text())["claims"]]
    assert [claim["id"] for claim in config.load("claims")["claims"]] == claims


def test_all_problems_are_reported_at_once(configs):
    _edit(configs / "profiles/quick.yaml", lambda d: d.update(runtime="x"))
    _edit(configs / "devices.yaml", lambda d: d["devices"][0].update(max_bytes=1))
    message = _error()
    assert "profiles/quick.yaml" in message and "devices.yaml: key devices[0] (name: local-disk).max_bytes" in message


def test_check_config_command_exits_nonzero_with_the_message(configs, capsys):
    _edit(configs / "profiles/quick.yaml", lambda d: d.update(runtime="x"))
    assert main(["check-config", "--profile", "quick"]) == 2
    assert "Configuration error(s); nothing was run" in capsys.readouterr().err


def test_emulated_device_needs_a_preset_or_its_model(configs):
    _edit(configs / "devices.yaml", lambda d: d["devices"].append({"name": "emu", "kind": "emulated", "alpha": 2}))
    assert re.search(r"devices\[\d+\] \(name: emu\): matches none of the allowed forms "
                     r"\(an emulated device needs a preset or all of read_latency_us, alpha, k_r, k_w\)",
                     _error()), _error()


def test_unknown_preset_is_refused(configs):
    _edit(configs / "devices.yaml", lambda d: d["devices"].append({"name": "emu", "kind": "emulated",
                                                                    "preset": "floppy-like"}))
    assert "preset: 'floppy-like' is not in configs/emussd_presets.yaml; presets: optane-like" in _error()


def test_profile_characterizes_only_its_own_devices(configs):
    _edit(configs / "profiles/ci.yaml", lambda d: d["characterize"].update(devices=["emu-pcie"]))
    assert "key characterize.devices: 'emu-pcie' is not in this profile's devices" in _error("ci")


def test_a_cave_figure_runs_only_on_the_profile_s_devices(configs):
    _edit(configs / "profiles/ci.yaml",
          lambda d: d["cave"]["figures"].update(fig_5_8={"devices": ["emu-pcie"], "io_threads": [1, 2]}))
    assert "key cave.figures.fig_5_8.devices: 'emu-pcie' is not in this profile's devices" in _error("ci")


def test_characterization_must_measure_4_kib(configs):
    _edit(configs / "experiments/pio.yaml", lambda d: d["characterization"].update(random_block_sizes=[8192]))
    assert "experiments/pio.yaml: key characterization.random_block_sizes" in _error()


def test_a_file_system_twin_must_be_a_declared_file_device(configs):
    _edit(configs / "devices.yaml", lambda d: d["devices"].append(
        {"name": "nvme-raw", "kind": "block", "path": "/dev/nvme1n1", "destructive": True, "max_bytes": 1 << 30,
         "file_system_twin": "emu-optane"}))
    assert ("file_system_twin: 'emu-optane' is not a declared file device (or loop device with a file_system); "
            "such devices: local-disk, loop-ext4") in _error()


def test_one_bad_key_gives_one_error(configs):
    """Files that refer to a file that did not validate are not checked against it: the user sees
    the one mistake, not every reference to the file it is in."""
    _edit(configs / "devices.yaml", lambda d: d["devices"][2].update(colour="red"))
    problems = _error().splitlines()
    assert len(problems) == 1, problems
    assert re.fullmatch(r".*configs/devices.yaml: key devices\[2\] \(name: [a-z-]+\): unknown key\(s\) 'colour'; "
                        r"allowed keys: .*", problems[0]), problems


def _use_block_device(configs, **declaration):
    _edit(configs / "devices.yaml", lambda d: d["devices"].append(
        {"name": "scratch-nvme", "kind": "block", "max_bytes": 1 << 30, **declaration}))
    _edit(configs / "profiles/quick.yaml", lambda d: d["devices"].append("scratch-nvme"))


def test_a_block_device_not_declared_destructive_is_refused_before_anything_runs(configs):
    _use_block_device(configs, path="/dev/loop7", destructive=False)
    error = _error()
    assert "block device 'scratch-nvme' (/dev/loop7) is not declared destructive" in error
    assert "devices[" not in error


def test_a_block_device_whose_path_does_not_exist_is_refused_before_anything_runs(configs):
    _use_block_device(configs, path="/dev/disk/by-id/no-such-disk", destructive=True)
    assert "block device 'scratch-nvme' (/dev/disk/by-id/no-such-disk) does not exist" in _error()


def test_a_block_device_the_profile_does_not_use_is_not_examined(configs):
    _edit(configs / "devices.yaml", lambda d: d["devices"].append(
        {"name": "spare", "kind": "block", "path": "/dev/disk/by-id/elsewhere", "destructive": True,
         "max_bytes": 1 << 30}))
    preflight.check("quick")


def test_table_6_2_measures_only_the_profile_s_devices_and_leaves_out_only_its_own(configs):
    _edit(configs / "profiles/quick.yaml", lambda d: d.update(devices=[x for x in d["devices"] if x != "emu-hdd"]))
    assert ("key table_6_2: 'emu-hdd' is measured for Table 6.2 but is not in this profile's devices; add it there, "
            "or to table_6_2.not_run") in _error()
    _edit(configs / "profiles/quick.yaml", lambda d: d["table_6_2"]["not_run"].update(
        {"emu-hdd": "a reason of twenty characters", "emu-virtual": "a reason of twenty characters"}))
    assert "key table_6_2.not_run: 'emu-virtual' is not a device of Table 6.2" in _error()


def test_a_table_6_2_device_must_be_declared(configs):
    _edit(configs / "experiments/restore.yaml", lambda d: d["table_6_2"].append(
        {"thesis_device": "Samsung 990 Pro", "device": "emu-samsung"}))
    assert "restore.yaml: key table_6_2[5].device: 'emu-samsung' is not declared in configs/devices.yaml" in _error()


def _use_file_device(configs, **declaration):
    _edit(configs / "devices.yaml", lambda d: d["devices"].append(
        {"name": "my-ssd", "kind": "file", "max_bytes": 1 << 30, **declaration}))
    _edit(configs / "profiles/ci.yaml", lambda d: d["devices"].append("my-ssd"))


def test_a_file_device_whose_path_does_not_exist_is_refused_and_not_created(configs, tmp_path):
    """A mistyped mount point must not be measured on the disk under it."""
    missing = tmp_path / "mnt" / "nvme0" / "bench"
    _use_file_device(configs, path=str(missing))
    assert (f"configs/devices.yaml: device 'my-ssd': key path: '{missing}' does not exist. Make that directory on "
            "the file system to measure, or correct the path; the workflow never creates it, so that a mistyped or "
            "unmounted path is not measured on the disk under it.") in _error("ci").splitlines()
    assert not (tmp_path / "mnt").exists()


def test_a_file_device_whose_path_is_a_regular_file_is_refused(configs, tmp_path):
    (tmp_path / "bench").write_text("")
    _use_file_device(configs, path=str(tmp_path / "bench"))
    assert (f"configs/devices.yaml: device 'my-ssd': key path: '{tmp_path / 'bench'}' is a regular file, not a "
            "directory. Declare a directory on the file system to measure.") in _error("ci").splitlines()


def test_a_file_device_must_be_on_the_file_system_it_declares(configs, tmp_path):
    mount_point, file_system = blockdev.mount_of(str(tmp_path))
    _use_file_device(configs, path=str(tmp_path), mount_point=mount_point, file_system=file_system)
    preflight.check("ci")
    _edit(configs / "devices.yaml", lambda d: d["devices"][-1].update(mount_point=str(tmp_path), file_system="f2fs"))
    assert _error("ci").splitlines() == [
        f"configs/devices.yaml: device 'my-ssd': key mount_point: path '{tmp_path}' is on the file system mounted "
        f"at '{mount_point}', not at '{tmp_path}'. Mount the device at '{tmp_path}', or correct mount_point.",
        f"configs/devices.yaml: device 'my-ssd': key file_system: path '{tmp_path}' is on a file system of type "
        f"{file_system} (mounted at '{mount_point}'), not f2fs. Put the path on a file system of type f2fs, or correct "
        "file_system."]


def test_the_artifact_s_own_file_device_may_be_missing_until_it_is_used(configs):
    """A fresh clone has no scratch/: a device inside it is the artifact's own, made when first opened."""
    own = f"scratch/test-own-device-{os.getpid()}"
    _use_file_device(configs, path=own)
    preflight.check("ci")
    assert not (REPO_ROOT / own).exists()
    (REPO_ROOT / own).parent.mkdir(exist_ok=True)
    (REPO_ROOT / own).write_text("")
    try:
        assert f"device 'my-ssd': key path: '{own}' is a regular file, not a directory." in _error("ci")
    finally:
        (REPO_ROOT / own).unlink()


def test_a_file_device_on_a_cluster_node_is_checked_there(configs, tmp_path):
    """Its path is on the node that holds it: the node checks it when the experiment opens it."""
    _use_file_device(configs, path=str(tmp_path / "absent"), cluster={"node": "n1"})
    preflight.check("ci")


def test_a_file_device_the_profile_does_not_use_is_not_examined(configs, tmp_path):
    _edit(configs / "devices.yaml", lambda d: d["devices"].append(
        {"name": "spare", "kind": "file", "path": str(tmp_path / "absent"), "max_bytes": 1 << 30}))
    preflight.check("ci")


def test_a_value_is_quoted_escaped_and_cut(configs):
    """A NUL or a control character in a value cannot cut a message or forge a line; a long value is cut."""
    _edit(configs / "profiles/quick.yaml", lambda d: d.update(runtime="dock\0r\n" + "x" * 1_000_000))
    _edit(configs / "devices.yaml", lambda d: d["devices"][0].update(name="disk\nfake: line"))
    message = _error()
    assert ("configs/profiles/quick.yaml: key runtime: 'dock\\x00r\\n" + "x" * 53 + "'... (1000007 characters) is "
            "not allowed; allowed values: 'native', 'docker'") in message
    assert "key devices[0] (name: 'disk\\nfake: line').name: 'disk\\nfake: line' does not match" in message
    assert all(len(line) < 400 and not line.startswith("fake") for line in message.splitlines()), message

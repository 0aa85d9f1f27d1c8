"""The document generator, LaTeX escaping, tidy CSVs and the checksum manifest."""

import pytest

from ssdartifact import checksums, config, latex, paper, tidy


def test_latex_escape():
    assert latex.escape("50% of α_r & $x") == r"50\% of $\alpha$\_r \& \$x"
    assert latex.escape("a/b") == r"a/\allowbreak{}b"
    with pytest.raises(ValueError, match="U\\+2603"):
        latex.escape("snow ☃")


def test_every_inventory_caption_can_be_typeset():
    inventory = config.load("inventory.yaml")
    for item in inventory["figures"] + inventory["tables"]:
        latex.escape(item["caption"] + item.get("panels", ""))


def test_coverage_counts():
    inventory = {"figures": [{"id": "1.1", "class": "diagram"},
                             {"id": "3.1", "class": "analytical", "reproduced": {"script": "s", "inputs": []}},
                             {"id": "2.1", "class": "analytical",
                              "reproduced": {"script": "s", "inputs": [], "partial": "panel A"}}],
                 "tables": [{"id": "1.1", "class": "literature-data"}]}
    lines, table = paper.coverage_tex(inventory)
    assert r"\coverageline{2}{3}{figures}{1}" in lines and r"\coverageline{0}{1}{tables}{0}" in lines
    assert "Figure 2.1 & analytical & partially reproduced" in table
    assert "Figure 1.1 & diagram & not reproduced yet" in table


def test_claims_are_matched_to_their_item():
    claims = [{"item": "Figure 3.2C", "status": "pass"}, {"item": "Figure 3.2", "status": "fail"},
              {"item": "Figure 3.21", "status": "pass"}]
    assert paper._claims_for("Figure 3.2", claims) == " Claims checked: 1 pass, 1 fail (see the claims report)."


def test_output_paths_follow_the_script_name():
    assert paper.output_of({"reproduced": {"script": "figures/scripts/fig_2_1b.R"}}) == "figures/generated/fig_2_1b.pdf"
    assert (paper.output_of({"reproduced": {"script": "figures/scripts/table_1_1.py"}})
            == "paper/generated/table_1_1.tex")


def test_tidy_csv_is_deterministic_and_documented(tmp_path):
    path = tmp_path / "t.csv"
    tidy.write_csv(path, {"x": "an x", "y": "a y"}, [{"x": 0.1 + 0.2, "y": 2.0}, {"x": None, "y": True}])
    assert path.read_text() == "x,y\n0.30000000000000004,2\nNA,true\n"
    with pytest.raises(ValueError, match="undocumented column"):
        tidy.write_csv(path, {"x": "an x"}, [{"x": 1, "z": 2}])
    assert path.read_text().startswith("x,y\n"), "a failed write must leave the previous file intact"
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"], "no temporary file is left behind"


def test_manifest_names_each_changed_missing_or_unlisted_file(tmp_path, monkeypatch):
    monkeypatch.setattr(checksums, "REPO_ROOT", tmp_path)
    for name in ("a.csv", "b.pdf", "c.tex"):
        (tmp_path / name).write_text(name)
    manifest = tmp_path / "m.sha256"
    checksums.write_manifest(manifest, ["a.csv", "b.pdf"])
    assert checksums.differences(manifest, ["a.csv", "b.pdf"]) == []
    (tmp_path / "a.csv").write_text("altered")
    (tmp_path / "b.pdf").unlink()
    problems = checksums.differences(manifest, ["a.csv", "b.pdf", "c.tex"])
    assert problems[0].startswith("not in the manifest: c.tex")
    assert any(p.startswith("changed: a.csv") for p in problems)
    assert "missing: b.pdf" in problems


def test_verify_says_which_runtime_made_the_files_it_checked(tmp_path, monkeypatch):
    import json

    monkeypatch.setattr(checksums, "REPO_ROOT", tmp_path)
    docker = {"kind": "docker", "image": "ssd-artifact/report:0", "image_id": "sha256:1", "container_id": "2"}
    for name, runtime in (("a.csv", docker), ("b.pdf", docker), ("c.csv", {"kind": "native"})):
        (tmp_path / f"{name}.json").write_text(json.dumps({"runtime": runtime}))
    assert checksums.made_by(["a.csv", "b.pdf", "c.csv", "d.tex"]) == \
        {"docker ssd-artifact/report:0": 2, "native": 1, "no sidecar": 1}


def test_atomic_writes_get_the_usual_file_mode(tmp_path):
    from ssdartifact.files import _UMASK, atomic_write_text
    atomic_write_text(tmp_path / "r.csv", "x\n")
    assert (tmp_path / "r.csv").stat().st_mode & 0o777 == 0o666 & ~_UMASK

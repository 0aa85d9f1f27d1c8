"""The document generator, LaTeX escaping, tidy CSVs and the checksum manifest."""

import pytest

from ssdartifact import checksums, config, latex, paper, tidy


def test_latex_escape():
    assert latex.escape("50% of α_r & $x") == r"50\% of $\alpha$\_r \& \$x"
    assert latex.escape("a/b") == r"a/\allowbreak{}b"
    with pytest.raises(ValueError, match="U\\+2603"):
        latex.escape("snow ☃")


def test_every_inventory_caption_can_be_typeset():
    inventory = config.load("inventory")
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


def _made(root, path, text, inputs=()):
    """An output as a step leaves it: the file, then its sidecar with its inputs' sha256."""
    from ssdartifact import provenance

    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    provenance.write_sidecar(target, produced_by="a test", inputs=[root / p for p in inputs], started="")


@pytest.fixture
def made_tree(tmp_path, monkeypatch):
    """A tree after a run: a raw file, the measured CSV made from it, a deterministic CSV and the
    figure drawn from it, and the manifest of the deterministic two."""
    from ssdartifact import provenance

    for module in (checksums, provenance):
        monkeypatch.setattr(module, "REPO_ROOT", tmp_path)
    raw = tmp_path / "results/raw/pio/dev/point.json"
    raw.parent.mkdir(parents=True)
    raw.write_text('{"iops": 1}')
    _made(tmp_path, "results/pio/dev/alpha_k.csv", "alpha\n2\n", ["results/raw/pio/dev/point.json"])
    _made(tmp_path, "results/pio_model/fig.csv", "x,y\n1,2\n")
    _made(tmp_path, "figures/generated/fig.pdf", "%PDF", ["results/pio_model/fig.csv"])
    manifest = tmp_path / "checksums/ci.sha256"
    manifest.parent.mkdir()
    checksums.write_manifest(manifest, ["results/pio_model/fig.csv", "figures/generated/fig.pdf"])
    return tmp_path, manifest


def test_verify_names_each_output_changed_since_its_run_before_building(made_tree):
    root, manifest = made_tree
    assert checksums.changed_since_made(manifest) == []
    (root / "results/pio_model/fig.csv").write_text("x,damaged\n1,2\n")  # newer than the figure drawn from it
    (root / "results/raw/pio/dev/point.json").write_text('{"iops": 2}')
    (root / "results/pio/dev/alpha_k.csv").write_text("alpha\n3\n")
    problems = checksums.changed_since_made(manifest)
    assert [line.split()[1] for line in problems] == ["results/pio/dev/alpha_k.csv", "results/pio_model/fig.csv",
                                                      "results/raw/pio/dev/point.json"]
    assert f"results/pio_model/fig.csv differs from {manifest}" in problems[1]
    assert "changed after the run that made it" in problems[0] and "changed after the run that made it" in problems[1]
    assert "recorded when results/pio/dev/alpha_k.csv was made from it" in problems[2]
    assert not any("fig.pdf" in line for line in problems), "the figure is as drawn: only its input changed"


def test_a_result_made_again_by_its_step_is_not_a_change(made_tree):
    """Made again, with its sidecar: the figure drawn from the old one is out of date, not changed
    (Snakemake draws it again); a deterministic output unlike the manifest's says so."""
    root, manifest = made_tree
    _made(root, "results/pio/dev/alpha_k.csv", "alpha\n4\n", ["results/raw/pio/dev/point.json"])
    _made(root, "results/pio_model/fig.csv", "x,y\n1,3\n")
    problems = checksums.changed_since_made(manifest)
    assert len(problems) == 1 and "results/pio_model/fig.csv" in problems[0]
    assert "is what its step wrote" in problems[0] and "make checksums" in problems[0]
    # a copy of another tree's results records that tree's paths: not this tree's outputs
    copy = root / "results/e2e/ci/results/pio/dev"
    copy.mkdir(parents=True)
    for name in ("alpha_k.csv", "alpha_k.csv.json"):
        (copy / name).write_bytes((root / "results/pio/dev" / name).read_bytes())
    (copy / "alpha_k.csv").write_text("edited")
    assert checksums.changed_since_made(manifest) == problems


def test_make_verify_names_a_changed_file_and_builds_nothing_first(made_tree, capsys):
    """`make verify` runs this check first, and Snakemake only after it passed."""
    import re

    from ssdartifact import REPO_ROOT
    from steps.__main__ import main

    root, manifest = made_tree
    (root / "results/pio_model/fig.csv").write_text("x,damaged\n1,2\n")
    assert main(["checksums", "changed", str(manifest)]) == 1
    said = capsys.readouterr().err
    assert "verify: changed: results/pio_model/fig.csv" in said and "FAILED before building anything" in said
    assert "delete it and run `make verify` again" in said
    recipe = re.search(r"^verify:.*\n((?:\t.*\n)+)", (REPO_ROOT / "Makefile").read_text(), re.M)[1].splitlines()
    assert "checksums changed checksums/$(PROFILE).sha256" in recipe[0] and "$(SNAKEMAKE)" in recipe[1]

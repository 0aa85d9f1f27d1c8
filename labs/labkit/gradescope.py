"""Gradescope's autograder for one lab (`make lab-gradescope LAB=<n> KEY=<file>`): a zip with
Gradescope's two scripts at its top (setup.sh, run_autograder), the artifact's files as the
students' copy has them (labkit.dist: no lab's solution or graders' tests, no key) under
`artifact/`, and the instructor's key, once, under `secret/` (run_autograder reads it there; never
an environment variable). The same files give the same bytes.

Gradescope unpacks the zip at /autograder/source and runs setup.sh there once, as root, when it
builds the autograder's image (Ubuntu 22.04 by default; Debian 12, the artifact's own, works too):
it installs what grading needs that the image lacks and builds the systems the lab needs, so that
no submission waits for a build. For each submission it runs run_autograder in a fresh container
of that image: the grader (`labkit.grade`) on /autograder/submission for the student named in
/autograder/submission_metadata.json, into /autograder/results/results.json. Whatever happens, a
results.json is written: one that could not be graded scores 0 and says why (the grader's own
message goes to the autograder's log, which only the instructor sees: it may hold hidden values).

    python -m labkit.gradescope build --lab N --key FILE [--config FILE] [--out ZIP] [--student-id email|sid|id]
                                      [--timeout-min M]

and, inside the autograder (setup.sh and run_autograder call them):

    python -m labkit.gradescope locked LOCK            # exit 0: this Python has python.lock's packages
    python -m labkit.gradescope prepare --lab N        # build what the lab's grader builds; the sandbox
    python -m labkit.gradescope student METADATA [--field email|sid|id]   # the student's id
    python -m labkit.gradescope submission TOP --lab N  # the folder to grade in what was uploaded
    python -m labkit.gradescope not-graded --lab N --results FILE --why TEXT [--log FILE]"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import stat
import sys
import zipfile
from pathlib import Path

from .grade import LABS_DIR, CannotGrade, check_student, lab_dir, load_grader

REPO_ROOT = LABS_DIR.parent
SOURCE = "/autograder/source"          # where Gradescope unpacks the zip
ARTIFACT = "artifact"                  # the artifact's files, in the zip
KEY_PATH = "secret/lab.key"            # the instructor's key, in the zip (run_autograder reads it there)
OVERRIDES = "lab-overrides.yaml"       # the instructor's overrides of lab.yaml (CONFIG=<file>), when given
PYTHON_ENV = "python.env"              # setup.sh's record of the interpreter that holds the locked environment
METADATA = "/autograder/submission_metadata.json"
RESULTS = "/autograder/results/results.json"
ID_FIELDS = ("email", "sid", "id")     # a user's fields in submission_metadata.json that may name the student
DEFAULT_TIMEOUT_MIN = 10               # Gradescope's default autograder timeout (an assignment's setting, up to 40)
MARGIN_S = 60                          # kept from Gradescope's timeout to write a results.json after a stopped grading
# The labs whose grader mounts a hidden emulated SSD (labkit.device): they need /dev/fuse today, which
# Gradescope's containers lack: there, labkit.device gives them the library device, whose fio engine is
# built against fio/source.yaml's fio (the zip carries its source, setup.sh builds that fio if need be).
DEVICE_LABS = {1, 2, 3}
ZIP_TIME = (1980, 1, 1, 0, 0, 0)       # the earliest a zip can hold: every entry's, so that the bytes repeat


# ----------------------------------------------------------------------------- building the zip


def _uv_version(root: Path) -> str:
    found = re.search(r"^UV_VERSION=(\S+)$", (root / "workflow" / "setup.sh").read_text(), re.MULTILINE)
    if not found:
        raise CannotGrade("workflow/setup.sh pins no UV_VERSION: the autograder's setup.sh installs the same uv")
    return found.group(1)


def _pythonpath(root: Path) -> str:
    """The project's packages (pyproject's wheel packages) where the autograder has them."""
    import tomllib  # noqa: PLC0415 (building only)

    packages = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"][
        "packages"]
    return ":".join(dict.fromkeys(f"{SOURCE}/{ARTIFACT}/{Path(package).parent}" for package in packages))


def grading_limit_s(config: dict, timeout_min: float) -> int:
    """How long run_autograder lets one grading run: the lab's own limit (grading_limit_s, as a
    class's grading has), within Gradescope's timeout less a margin to write the results."""
    return int(max(60, min(config.get("grading_limit_s", 1800), timeout_min * 60 - MARGIN_S)))


def fio_block(lab: int) -> str:
    """setup.sh's step 3 for a lab with a hidden device: fio at the version the library device's
    engine is built against (emussd's fio/source.yaml), built from the zip's copy of its source
    where the image has another (Ubuntu 22.04's is 3.28)."""
    if lab not in DEVICE_LABS:
        return ""
    import yaml  # noqa: PLC0415

    lock = yaml.safe_load((REPO_ROOT / "systems" / "emussd" / "fio" / "source.yaml").read_text())
    version, orig = lock["version"].split("-")[0], lock["orig"]
    return f"""# 3. fio {version}: the library device's engine is built against its headers
# (systems/emussd/fio/source.yaml).
if [ "$(fio --version 2>/dev/null || true)" != fio-{version} ]; then
  say "building fio {version} (this image's: $(fio --version 2>/dev/null || echo none))"
  mkdir -p "$SOURCE/tools/fio" "$SOURCE/bin"
  tar -xzf "$ARTIFACT/systems/emussd/build-library/fio-source/{orig['file']}" -C "$SOURCE/tools/fio"
  (cd "$SOURCE/tools/fio/{orig['top_directory']}" && ./configure --disable-native >/dev/null \\
    && make -j"$(nproc)" >/dev/null)
  ln -sf "$SOURCE/tools/fio/{orig['top_directory']}/fio" "$SOURCE/bin/fio"
fi
"""


def setup_script(lab: int, title: str, uv_version: str, pythonpath: str) -> str:
    return f"""#!/usr/bin/env bash
# Gradescope's setup.sh for lab {lab}, {title}: written by `make lab-gradescope` (labs/labkit/gradescope.py).
# Gradescope runs it once, as root, when it builds the autograder's image (Ubuntu 22.04 by default;
# Debian 12, the artifact's own system, works too). It installs what grading needs that the image lacks:
# the lab image's packages (containers/{{python,toolchain,lab}}/packages.txt), Python 3.11 and uv.lock's
# locked environment; then builds the systems the lab grades with, so that run_autograder builds nothing
# per submission. What is there already is not installed again: in an image that has it all (the
# artifact's `lab` image) it installs nothing and needs no network.
set -euo pipefail
umask 022
SOURCE={SOURCE}
ARTIFACT=$SOURCE/{ARTIFACT}
LAB={lab}
UV_VERSION={uv_version}
export DEBIAN_FRONTEND=noninteractive
say() {{ printf 'setup: %s\\n' "$*"; }}

# The grader runs each call into a submission as a user of its own (labkit.sandbox), which must read
# the artifact and pass through the folders above it, and must never read the key.
chmod o+x /autograder "$SOURCE"
chmod -R go+rX,go-w "$ARTIFACT"
chmod 700 "$SOURCE/secret"
chmod 600 "$SOURCE/{KEY_PATH}"

ID=unknown VERSION_ID=
# shellcheck disable=SC1091
[ -r /etc/os-release ] && . /etc/os-release
say "lab $LAB on ${{PRETTY_NAME:-$ID}}"

# An interpreter that holds the locked environment: python.lock's packages at their versions.
locked() {{
  [ -x "$1" ] && PYTHONPATH="$ARTIFACT/labs" "$1" -m labkit.gradescope locked "$ARTIFACT/containers/python/python.lock"
}}
PYTHON=
for candidate in "$ARTIFACT/.venv/bin/python" /opt/venv/bin/python; do
  if locked "$candidate"; then PYTHON=$candidate; break; fi
done

# 1. Packages (Debian's names, Ubuntu's too). procps: the sandbox's kill.
mapfile -t wanted < <(sed 's/#.*//' "$ARTIFACT"/containers/{{python,toolchain,lab}}/packages.txt | awk NF | sort -u)
wanted+=(procps)
[ -n "$PYTHON" ] || wanted+=(ca-certificates)
# g++ 12 as in Debian 12 and the lab image, where students compile (Ubuntu 22.04's is 11).
if [ "$ID" = ubuntu ] && [ "${{VERSION_ID%%.*}}" -lt 23 ]; then wanted+=(g++-12); fi
missing=()
for pkg in "${{wanted[@]}}"; do
  dpkg-query -W -f='${{Status}}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${{#missing[@]}}" -eq 0 ]; then
  say "every package grading needs is installed"
else
  say "installing ${{missing[*]}}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${{missing[@]}}" >/dev/null
fi
if [ -x /usr/bin/g++-12 ] && [ "$(g++ -dumpversion | cut -d. -f1)" -lt 12 ]; then
  say "g++ 12 as gcc, g++, cc and c++ ($SOURCE/bin, first on the PATH of setup.sh and run_autograder)"
  mkdir -p "$SOURCE/bin"
  for tool in gcc cc; do ln -sf /usr/bin/gcc-12 "$SOURCE/bin/$tool"; done
  for tool in g++ c++; do ln -sf /usr/bin/g++-12 "$SOURCE/bin/$tool"; done
fi
export PATH="$SOURCE/bin:$PATH"

# 2. The locked Python environment (uv.lock's runtime packages), with the uv workflow/setup.sh pins.
if [ -n "$PYTHON" ]; then
  say "the locked Python environment is there: $PYTHON"
else
  python=$(command -v python3.11 || true)
  if [ -z "$python" ]; then  # Ubuntu 22.04: in universe
    apt-get install -y -qq --no-install-recommends python3.11 >/dev/null 2>&1 || true
    python=$(command -v python3.11 || true)
  fi
  say "installing uv $UV_VERSION"
  python3 -m venv "$SOURCE/tools/uv"
  "$SOURCE/tools/uv/bin/pip" install -q --disable-pip-version-check "uv==$UV_VERSION"
  if [ -n "$python" ]; then
    export UV_PYTHON_DOWNLOADS=never
  else  # no Python 3.11 package here (Ubuntu 24.04): uv's own build of it
    export UV_PYTHON_DOWNLOADS=automatic UV_PYTHON_INSTALL_DIR="$SOURCE/tools/python"
  fi
  export UV_SYSTEM_CERTS=1  # the system's certificates, as workflow/setup.sh: a proxy's own CA works too
  say "creating the locked Python environment $ARTIFACT/.venv from uv.lock"
  (cd "$ARTIFACT" && UV_PROJECT_ENVIRONMENT="$ARTIFACT/.venv" "$SOURCE/tools/uv/bin/uv" sync --frozen --quiet \\
    --no-default-groups --no-install-project --compile-bytecode --python "${{python:-3.11}}")
  PYTHON=$ARTIFACT/.venv/bin/python
  locked "$PYTHON" || {{ say "$PYTHON lacks packages of containers/python/python.lock"; exit 1; }}
fi
printf 'PYTHON=%q\\n' "$PYTHON" >"$SOURCE/{PYTHON_ENV}"

{fio_block(lab)}
# 4. What the lab's grader builds (once here, not per submission), and what its sandbox is made of.
export PYTHONPATH={pythonpath}
# Each submission's container has a host name of its own: the emulated device's calibration, made here,
# is found again under this name (the gap is measured again before each hidden device anyway).
export EMUSSD_CALIBRATION_HOST=gradescope-lab-{lab}
cd "$ARTIFACT"
"$PYTHON" -m labkit.gradescope prepare --lab "$LAB"
"$PYTHON" -m compileall -q labs systems workflow >/dev/null || true
say "done"
"""


# run_autograder's last resort, where no Python can write results.json: the reason's backslashes and
# quotes escaped for JSON by bash itself.
JSON_BY_HAND = r'''  local why=${1//\\/\\\\}
  why=${why//\"/\\\"}'''


def run_script(lab: int, title: str, pythonpath: str, field: str, limit_s: int) -> str:
    return f"""#!/usr/bin/env bash
# Gradescope's run_autograder for lab {lab}, {title}: written by `make lab-gradescope` (labs/labkit/gradescope.py).
# Grades /autograder/submission for the student named in submission_metadata.json (the {field} of its users; the
# smallest one for a group, so that a group keeps one set of hidden parameters whoever uploads), with
# the instructor's key from this autograder's own files, into results.json. Whatever happens, a
# results.json is written: a submission that could not be graded gets score 0 and the reason, and the
# grader's own message goes to this log (the instructor's only: it may name hidden values).
set -uo pipefail
umask 022
SOURCE={SOURCE}
ARTIFACT=$SOURCE/{ARTIFACT}
KEY=$SOURCE/{KEY_PATH}
SUBMISSION=/autograder/submission
RESULTS={RESULTS}
LAB={lab}
LIMIT_S={limit_s}
mkdir -p "$(dirname "$RESULTS")"
rm -f "$RESULTS"
log=$(mktemp)
unset LAB_SECRET_KEY  # the key is this autograder's file, never an environment's
config=()
[ -f "$SOURCE/{OVERRIDES}" ] && config=(--config "$SOURCE/{OVERRIDES}")
export PATH="$SOURCE/bin:$PATH"
export PYTHONPATH={pythonpath}
# Each submission's container has a host name of its own: the emulated device's calibration, made here,
# is found again under this name (the gap is measured again before each hidden device anyway).
export EMUSSD_CALIBRATION_HOST=gradescope-lab-{lab}
PYTHON=
# shellcheck disable=SC1091
[ -r "$SOURCE/{PYTHON_ENV}" ] && . "$SOURCE/{PYTHON_ENV}"

not_graded() {{  # $1: why, in words of the autograder's own (shown to the student)
  echo "run_autograder: not graded: $1" >&2
  if [ -n "$PYTHON" ] && "$PYTHON" -m labkit.gradescope not-graded --lab "$LAB" --results "$RESULTS" --why "$1" \\
      --log "$log"; then
    return
  fi
{JSON_BY_HAND}
  printf '{{"score": 0, "output": "Not graded: %s.", "visibility": "visible", "stdout_visibility": "hidden",%s\\n' \\
    "$why" ' "tests": []}}' >"$RESULTS"
}}

if [ -z "$PYTHON" ] || [ ! -x "$PYTHON" ]; then
  PYTHON=
  not_graded "the autograder has no Python environment (its setup.sh did not finish)"
  exit 0
fi
cd "$ARTIFACT" || {{ not_graded "the autograder's files are missing"; exit 0; }}
if ! student=$("$PYTHON" -m labkit.gradescope student {METADATA} --field {field} 2>>"$log"); then
  cat "$log" >&2
  not_graded "$(tail -n 1 "$log" | sed 's/^gradescope: //')"
  exit 0
fi
# The lab's file at the upload's top, or in the lab's starter folder of a copy of the artifact (GitHub).
folder=$("$PYTHON" -m labkit.gradescope submission "$SUBMISSION" --lab "$LAB" 2>>"$log") || folder=$SUBMISSION
echo "run_autograder: lab $LAB for $student, $folder (at most $LIMIT_S s)"
timeout --kill-after=15 "$LIMIT_S" "$PYTHON" -m labkit.grade --lab "$LAB" --submission "$folder" \\
  --student "$student" --key "$KEY" "${{config[@]}}" --results "$RESULTS" 2>&1 | tee -a "$log"
status=${{PIPESTATUS[0]}}
if [ ! -s "$RESULTS" ]; then
  case $status in
    124 | 137) not_graded "the grading took longer than $LIMIT_S s, the autograder's limit" ;;
    2) not_graded "the grader could not grade it here (exit status 2)" ;;
    *) not_graded "the grader stopped with exit status $status" ;;
  esac
fi
exit 0
"""


def runs_with(lab: int) -> list[str]:
    """What the autograder runs besides the students' copy, packed whether dist withholds it or git
    does not track it yet: this module (setup.sh and run_autograder call it), the lab's grader and
    its settings."""
    directory = lab_dir(lab)
    return ["labs/labkit/gradescope.py", f"labs/{directory.name}/grader.py", f"labs/{directory.name}/lab.yaml"]


def _mode(path: Path) -> int:
    return 0o755 if path.stat().st_mode & 0o111 else 0o644


def contents(lab: int, key_file: Path, root: Path = REPO_ROOT, field: str = "email",
             timeout_min: float = DEFAULT_TIMEOUT_MIN, overrides: Path | None = None) -> dict[str, tuple[bytes, int]]:
    """{path in the zip: (bytes, mode)}: the two scripts, the artifact's files as labkit.dist packs
    them for students (with this lab's grader and lab.yaml whatever dist withholds), the key, and
    the instructor's overrides of lab.yaml when given."""
    from . import dist, seeds  # noqa: PLC0415 (building only)

    if field not in ID_FIELDS:
        raise CannotGrade(f"--student-id {field!r}: one of {', '.join(ID_FIELDS)}")
    directory = lab_dir(lab)
    key = seeds.load_key(key_file)
    config = load_grader(directory).load_config(overrides)  # overrides that do not load are refused here
    paths = set(dist.members(root)) | set(runs_with(lab))
    files: dict[str, tuple[bytes, int]] = {}
    for path in sorted(paths):
        source = root / path
        if not source.is_file():  # deleted since it was tracked
            continue
        data = source.read_bytes()
        if key in data:
            raise CannotGrade(f"{path} holds the instructor's key: move the key out of the repository")
        files[f"{ARTIFACT}/{path}"] = (data, _mode(source))
    pythonpath = _pythonpath(root)
    files["setup.sh"] = (setup_script(lab, config["title"], _uv_version(root), pythonpath).encode(), 0o755)
    files["run_autograder"] = (run_script(lab, config["title"], pythonpath, field,
                                          grading_limit_s(config, timeout_min)).encode(), 0o755)
    if lab in DEVICE_LABS:  # fio's source, for the library device's engine (and fio itself where it is older)
        tarball = fio_source_tarball()
        files[f"{ARTIFACT}/{tarball.relative_to(root)}"] = (tarball.read_bytes(), 0o644)
    files[KEY_PATH] = (Path(key_file).read_bytes(), 0o600)
    if overrides is not None:
        files[OVERRIDES] = (Path(overrides).read_bytes(), 0o644)
    return files


def fio_source_tarball() -> Path:
    """fio/source.yaml's tarball, fetched on this machine (Debian's mirror) where emussd's library
    build looks for it, so that setup.sh needs no network for it."""
    from emussd import library  # noqa: PLC0415 (building only)

    return library._fetch(library._source_lock(), library.LIBRARY_BUILD_DIR / "fio-source")


def build(lab: int, key_file: Path, out: Path, root: Path = REPO_ROOT, field: str = "email",
          timeout_min: float = DEFAULT_TIMEOUT_MIN, overrides: Path | None = None) -> Path:
    files = contents(lab, key_file, root, field, timeout_min, overrides)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name in sorted(files):
            data, mode = files[name]
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.create_system = 3  # Unix: the modes below are kept (unzip, Gradescope)
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_name(f".{out.name}.{os.getpid()}")
    temporary.write_bytes(buffer.getvalue())
    os.chmod(temporary, 0o600)  # it holds the key
    temporary.replace(out)
    return out


def extract(archive: Path, target: Path) -> None:
    """Unpack an autograder zip as unzip and Gradescope do, modes included (zipfile's own
    extractall drops them)."""
    with zipfile.ZipFile(archive) as packed:
        for info in packed.infolist():
            path = packed.extract(info, target)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(path, mode)


# ----------------------------------------------------------------------------- inside the autograder


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _applies(marker: str) -> bool:
    """Whether a requirement's environment marker holds here (python.lock's: `sys_platform == 'win32'`,
    `platform_machine == ... or ...`). Evaluated by `packaging` where it is installed, else by
    Python itself with the marker's names as strings (the lock is the autograder's own file)."""
    if not marker.strip():
        return True
    try:
        from packaging.markers import Marker  # noqa: PLC0415 (not every interpreter has it)

        return Marker(marker).evaluate()
    except ImportError:
        import platform  # noqa: PLC0415

        names = {"sys_platform": sys.platform, "platform_machine": platform.machine(), "os_name": os.name,
                 "platform_system": platform.system(), "implementation_name": sys.implementation.name,
                 "python_version": ".".join(platform.python_version_tuple()[:2])}
        return bool(eval(marker, {"__builtins__": {}}, names))  # noqa: S307


def locked_missing(lock: Path) -> list[str]:
    """python.lock's `name==version` lines (those whose marker holds here) that this interpreter does
    not have installed."""
    from importlib import metadata  # noqa: PLC0415

    have = {_canonical(dist.metadata["Name"] or ""): dist.version for dist in metadata.distributions()}
    missing = []
    for name, version, marker in re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;([^\\\n]*))?",
                                            Path(lock).read_text(), re.MULTILINE):
        if not _applies(marker):
            continue
        if have.get(_canonical(name)) != version:
            missing.append(f"{name}=={version}" + (f" (has {have[_canonical(name)]})" if _canonical(name) in have
                                                   else ""))
    return missing


def student_of(metadata: dict, field: str = "email") -> str:
    """The student's id from submission_metadata.json: the `field` of its users (an email in lower
    case); for a group, the smallest, so that the group keeps one set of hidden parameters
    whoever uploads."""
    users = metadata.get("users") if isinstance(metadata, dict) else None
    values = set()
    for user in users if isinstance(users, list) else []:
        value = user.get(field) if isinstance(user, dict) else None
        if value is not None and str(value).strip():
            values.add(str(value).strip().lower() if field == "email" else str(value).strip())
    if not values:
        raise CannotGrade(f"submission_metadata.json has no user with a {field!r}")
    return check_student(min(values))


def _real_folder(path: Path, top: Path) -> bool:
    """Whether `path` and every folder from `top` down to it is a folder, not a link to one (a
    submission's link would otherwise have the grader copy what it points to: the key, say)."""
    step = top
    try:
        for part in path.relative_to(top).parts:
            step = step / part
            if not stat.S_ISDIR(os.lstat(step).st_mode):
                return False
    except OSError:  # not there
        return False
    return top.is_dir()


def submission_folder(top: Path, lab: int) -> Path:
    """The folder to grade in what the student uploaded: its top when the lab's file is there (the
    file uploaded, or the starter folder's files); else, when it holds the file, the lab's starter
    folder in it (the students' copy of the artifact, submitted from GitHub) or the one folder
    it holds (a zip of a folder), or that folder's starter folder. Never through a link; the top
    when none holds the file (the grader then says it is missing)."""
    directory = lab_dir(lab)
    grader = load_grader(directory)
    name = getattr(grader, "SUBMISSION_FILE", None) or getattr(grader, "SUBMISSION_MODULE", None)
    top = Path(top)
    if not name or not top.is_dir():
        return top
    starter = Path("labs") / directory.name / "starter"
    candidates = [top, top / starter]
    inside = [entry for entry in sorted(top.iterdir()) if not entry.name.startswith((".", "__MACOSX"))]
    if len(inside) == 1:
        candidates += [inside[0], inside[0] / starter]
    for folder in candidates:
        file = folder / name
        if _real_folder(folder, top) and file.is_file() and not file.is_symlink():
            return folder
    return top


def prepare(lab: int, say=print) -> None:
    """Build what the lab's grader builds before it grades (its grader's prepare()), without the
    systems' unit tests, then say what the sandbox is made of here and whether the lab's device
    can be had."""
    from . import device, sandbox  # noqa: PLC0415

    _configure_without_tests()
    load_grader(lab_dir(lab)).prepare(say)
    full, made_of = sandbox.strength()
    say(f"sandbox: {made_of}" + ("" if full else " (not in full: the results will say so)"))
    say(f"hidden device: {device.kind()} (labkit.device)" if lab in DEVICE_LABS else "no hidden device")


def _configure_without_tests() -> None:
    """Configure the systems' build folders as their own build() does (once, Release), without their
    unit tests: the autograder never runs them, and building them (and listing them,
    gtest_discover_tests) took half of setup.sh's time for lab 4."""
    import subprocess  # noqa: PLC0415

    from ace import sim  # noqa: PLC0415
    from emussd import harness  # noqa: PLC0415
    from restore import engine  # noqa: PLC0415

    for source, build, option in ((sim.SIM_DIR, sim.SIM_BUILD, "ACE_SIM_TESTS"),
                                  (engine.RESTORE_DIR, engine.BUILD_DIR, "RESTORE_TESTS"),
                                  (harness.EMUSSD_DIR, harness.DEFAULT_BUILD_DIR, "EMUSSD_TESTS")):
        if (Path(build) / "CMakeCache.txt").exists():
            continue
        done = subprocess.run(["cmake", "-S", str(source), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                               f"-D{option}=OFF"], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"configuring {source} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")


def not_graded(lab: int, why: str, results: Path, log: Path | None = None) -> dict:
    """results.json for a submission that could not be graded: score 0, every test of the lab at 0
    with the reason. The grader's own words (its log) are printed for the instructor, not put in
    the results: a grader's message may name a hidden value."""
    from . import report  # noqa: PLC0415

    if log is not None and Path(log).is_file():
        print(f"--- the grader's log (the instructor's only):\n{Path(log).read_text(errors='replace')[-8000:]}")
    try:
        config = load_grader(lab_dir(lab)).load_config()
        tests = [report.TestResult(spec["what"], spec["points"]).failed("not graded") for spec in
                 config["tests"].values()]
        title = f"Lab {lab} ({config['title']})"
    except Exception:  # noqa: BLE001 (whatever broke the grading may break this too: results.json all the same)
        tests, title = [], f"Lab {lab}"
    summary = (f"{title}: not graded: {why}. This is the autograder's problem, not your submission's: your "
               "instructor sees the details in the autograder's output and can regrade it.")
    result = report.results(tests, summary)
    report.write(result, results)
    return result


# ----------------------------------------------------------------------------- the command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.gradescope", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    sub = commands.add_parser("build", help="write a lab's Gradescope autograder zip")
    sub.add_argument("--lab", type=int, required=True)
    sub.add_argument("--key", type=Path, required=True, help="the instructor's key file (make lab-key)")
    sub.add_argument("--config", type=Path, help="overrides of the lab's lab.yaml (a YAML file), graded with")
    sub.add_argument("--out", type=Path, help="default labs/build/gradescope/lab-<n>.zip")
    sub.add_argument("--student-id", choices=ID_FIELDS, default="email",
                     help="the field of submission_metadata.json's users that names a student (default email)")
    sub.add_argument("--timeout-min", type=float, default=DEFAULT_TIMEOUT_MIN,
                     help="the assignment's autograder timeout on Gradescope, in minutes (default 10)")
    sub = commands.add_parser("locked", help="exit 0 when this Python holds every package of a python.lock")
    sub.add_argument("lock", type=Path)
    sub = commands.add_parser("prepare", help="build what the lab's grader builds; say what the sandbox holds")
    sub.add_argument("--lab", type=int, required=True)
    sub = commands.add_parser("student", help="print the student's id from submission_metadata.json")
    sub.add_argument("metadata", type=Path)
    sub.add_argument("--field", choices=ID_FIELDS, default="email")
    sub = commands.add_parser("submission", help="print the folder to grade in what the student uploaded")
    sub.add_argument("top", type=Path)
    sub.add_argument("--lab", type=int, required=True)
    sub = commands.add_parser("not-graded", help="write results.json for a submission that could not be graded")
    sub.add_argument("--lab", type=int, required=True)
    sub.add_argument("--results", type=Path, required=True)
    sub.add_argument("--why", required=True)
    sub.add_argument("--log", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            out = build(args.lab, args.key, args.out or LABS_DIR / "build" / "gradescope" / f"lab-{args.lab}.zip",
                        field=args.student_id, timeout_min=args.timeout_min, overrides=args.config)
            print(f"lab-gradescope: {out} (upload it as the assignment's autograder; it holds the key: keep it "
                  "private)")
        elif args.command == "locked":
            if sys.version_info[:2] != (3, 11):
                print(f"{sys.executable} is Python {sys.version.split()[0]}, not 3.11", file=sys.stderr)
                return 1
            missing = locked_missing(args.lock)
            if missing:
                print(f"{sys.executable} lacks {len(missing)} locked packages: {', '.join(missing[:5])}",
                      file=sys.stderr)
                return 1
        elif args.command == "prepare":
            prepare(args.lab, say=lambda message: print(f"setup: {message}", flush=True))
        elif args.command == "student":
            try:
                metadata = json.loads(args.metadata.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                raise CannotGrade(f"cannot read {args.metadata}: {error}") from error
            print(student_of(metadata, args.field))
        elif args.command == "submission":
            print(submission_folder(args.top, args.lab))
        elif args.command == "not-graded":
            not_graded(args.lab, args.why, args.results, args.log)
    except (CannotGrade, ValueError, RuntimeError) as error:
        print(f"gradescope: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

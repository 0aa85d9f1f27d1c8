# The artifact's user-facing commands. `make help` lists them.
# PROFILE selects configs/profiles/<name>.yaml (quick, full, ci, lab).
PROFILE ?= quick
CORES ?= 2
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

VENV := .venv
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
# RUNTIME=docker runs every step in its system's image (overrides the profile's runtime). Changing it
# reruns nothing by itself (each output's sidecar says which runtime made it; `make verify` checks
# those bytes): RERUN_ON_RUNTIME_CHANGE=true reruns the steps made in another runtime or image.
RUNTIME ?=
RERUN_ON_RUNTIME_CHANGE ?=
# CLUSTER=slurm submits every job to SLURM (workflow/profiles/slurm, docs/cluster.md); CORES is then
# what a job that takes a whole machine asks for: the cores of a node.
CLUSTER ?=
SNAKEMAKE := snakemake --cores $(CORES) $(if $(CLUSTER),--workflow-profile workflow/profiles/$(CLUSTER)) \
	--config profile=$(PROFILE) $(if $(RUNTIME),runtime=$(RUNTIME)) \
	$(if $(RERUN_ON_RUNTIME_CHANGE),rerun_on_runtime_change=$(RERUN_ON_RUNTIME_CHANGE)) --rerun-incomplete

.PHONY: help setup setup-test check-config calibrate characterize reproduce figures paper claims ace-server plan report verify checksums checksums-add test test-unit test-e2e test-quick test-released test-gradescope test-images test-cgroup-v2 test-ace-matrix test-ace-patches lint clean guide guide-check which figures-doc \
	images images-lock images-save grade lab-key labs lab-dist lab-gradescope lab-grade-all

help:
	@echo "make reproduce   install what is missing, run the $(PROFILE) profile, build the PDF and the claims report"
	@echo "make characterize DEVICE=dir   declare your own SSD (a directory on it; a raw device: DEVICE=/dev/... DESTRUCTIVE=true), measure its alpha and k; then PROFILE=own"
	@echo "make test        install what is missing and run every test (unit, then end to end; the lab profile measured)"
	@echo "make test-quick  the quick profile's own check from a fresh copy (about 40 minutes, alone; not in make test)"
	@echo "make test-released  restore-sim's released preset beside the authors' agent (real time, alone; not in make test)"
	@echo "make test-gradescope  every lab's Gradescope autograder in an unprivileged container (about 7 minutes)"
	@echo "make test-cgroup-v2  the memory limits on a real cgroup v2 host (Debian's kernel in QEMU, about 30 s)"
	@echo "make test-ace-matrix  ACE's regression suite and crash test for all 4 policies, with and without ACE"
	@echo "make test-ace-patches every prefix of ACE's patch series builds and runs (about 40 minutes)"
	@echo "make verify      name every output changed since its run, then rebuild what is missing and compare deterministic outputs, whichever runtime made them, with checksums/$(PROFILE).sha256"
	@echo "make figures | paper | claims   build only those"
	@echo "make ace-server  build the patched PostgreSQL of Chapter 4 (systems/ace/README.md)"
	@echo "make calibrate   take emussd's calibration of this machine again (after a run on a busy machine, once it is idle)"
	@echo "make checksums   record the sha256 of the deterministic outputs (commit the result)"
	@echo "make checksums-add FILES=...   record only those outputs' sha256, keeping the manifest's other entries"
	@echo "make lint        snakemake --lint, actionlint (with shellcheck and pyflakes), ruff, clang-format and lintr"
	@echo "make guide       take the guide's numbers (docs/) from the last $(PROFILE) run and test reports; guide-check: are they current"
	@echo "make which FIG=4.8  what makes a figure (TABLE=4.3, SUPP=S1): script, CSVs, rule, step, system code, config keys"
	@echo "make figures-doc  write docs/figures.md, every figure's and table's chain, from configs/inventory/'s routes"
	@echo "make images      build the pinned container image of every system (containers/, configs/containers.yaml)"
	@echo "make images-save write each image as a tarball with its sha256 (IMAGES_DIR=results/images; IMAGES=lab: one)"
	@echo "make images-lock re-resolve the images' package locks (then commit them)"
	@echo "make labs        typeset every lab's handout: labs/build/lab-<n>.pdf (LAB=n: one)"
	@echo "make grade LAB=n SUBMISSION=dir STUDENT=id KEY=file   grade a course lab's submission (labs/README.md)"
	@echo "make lab-key KEY=file   write an instructor's secret key for the labs' hidden parameters"
	@echo "make lab-dist LAB=n [KEY=file]   the students' tarball (no solutions, no graders' tests, no key)"
	@echo "make lab-gradescope LAB=n KEY=file   Gradescope's autograder zip for a lab: labs/build/gradescope/lab-<n>.zip (holds the key)"
	@echo "make lab-grade-all LAB=n SUBMISSIONS=dir KEY=file   grade one subfolder per student into one CSV"
	@echo "make clean       remove generated outputs (keeps the measurements, results/reference and the Python environment)"
	@echo "make plan        the $(PROFILE) profile's jobs per device and node, their estimated hours and the critical path"
	@echo "make report      Snakemake's HTML report: every figure with its caption, the claims, each result's provenance"
	@echo "Options: PROFILE=quick|full|ci|lab|own  CORES=N  RUNTIME=native|docker  RERUN_ON_RUNTIME_CHANGE=true  CLUSTER=slurm  NODES=N (plan)"

# Debian packages, uv and the locked Python environment; a no-op when all is there.
setup:
	@workflow/setup.sh

# what only the tests need besides (a SLURM, a browser: workflow/debian-packages-test.txt)
setup-test:
	@workflow/setup.sh workflow/debian-packages-test.txt

check-config: setup
	@python -m steps check-config --profile $(PROFILE)

# emussd's calibration of this machine, taken again (systems/emussd/README.md, "Time dilation"): one
# taken while other work kept the machine busy gives larger time dilations than the machine needs.
calibrate: setup
	@python -m emussd.device calibrate --profile $(PROFILE)

# Your own SSD in one command (docs/your-own-ssd.md): DEVICE declared in configs/devices.local.yaml
# (git ignores it) and checked before anything runs, its alpha and k measured and printed. A raw
# block device is overwritten: it needs DESTRUCTIVE=true. `make reproduce PROFILE=own` then runs every figure on it.
characterize: setup
	@python -m steps own declare --device "$(DEVICE)" --name "$(NAME)" --destructive "$(DESTRUCTIVE)" \
	  --force "$(FORCE)" --medium "$(MEDIUM)" --max-bytes "$(MAX_BYTES)"
	@python -m steps check-config --profile own
	@snakemake --cores $(CORES) $(if $(CLUSTER),--workflow-profile workflow/profiles/$(CLUSTER)) --config profile=own \
	  $(if $(RUNTIME),runtime=$(RUNTIME)) --rerun-incomplete $$(python -m steps own target)
	@python -m steps own show

reproduce: check-config
	@$(SNAKEMAKE)
	@echo
	@echo "Done (profile $(PROFILE)):"
	@echo "  document:      paper/build/artifact.pdf"
	@echo "  figures:       figures/generated/"
	@echo "  claims report: results/claims/report.html (also report.md)"
	@grep -m1 -E '^[0-9]+ passed' results/claims/report.md | sed 's/^/  claims:        /'
	@sed -n -e 's/^Not run: /  not run:       /p' -e '/^To run them: /{s/`//g;s/^To run them: /  to run them:   /p}' \
	  results/claims/report.md

figures: check-config
	@$(SNAKEMAKE) figures_and_tables

paper: check-config
	@$(SNAKEMAKE) paper/build/artifact.pdf

claims: check-config
	@$(SNAKEMAKE) results/claims/report.md

# The patched PostgreSQL of thesis Chapter 4 (systems/ace); results/ace/server.json says where it is.
ace-server: check-config
	@$(SNAKEMAKE) results/ace/server.json
	@echo "ACE server: $$(python -c 'import json; print(json.load(open("results/ace/server.json"))["install"])')"

# How long the profile takes, per device and node, before anything runs (workflow/steps/plan.py:
# the quick run's benchmarks scaled by the profile's sizes; docs/cluster.md).
NODES ?= 1
plan: setup
	@python -m steps plan --profile $(PROFILE) --nodes $(NODES)

# Snakemake's HTML report of the profile's last run (builds what is missing first): one file that
# opens offline (workflow/rules/report.smk).
REPORT := results/report/report.html
report: check-config
	@$(SNAKEMAKE) report_contents
	@$(SNAKEMAKE) --report $(REPORT) report_contents
	@echo "report: $(REPORT) (open it in a browser; it needs no network)"

DETERMINISTIC_LIST := results/checksums/$(PROFILE).files

# First, before anything is built: every output changed since the run that made it (the manifest's, a
# sidecar's or a raw file's sha256), so that none is used to build another (Snakemake goes by time stamps,
# and would redraw a figure from a CSV edited by hand). Then what is missing is built, and all compared.
verify: check-config
	@python -m steps checksums changed checksums/$(PROFILE).sha256
	@$(SNAKEMAKE) --quiet rules -- deterministic_outputs $(DETERMINISTIC_LIST)
	@python -m steps checksums verify checksums/$(PROFILE).sha256 --list $(DETERMINISTIC_LIST)

# The guide's generated numbers (docs/numbers.json and the pages' markers) from this checkout's last
# run of PROFILE and its test reports (results/); `make guide-check` says whether a page is out of date.
guide: setup
	@python -m steps guide update --profile $(PROFILE)

guide-check: setup
	@python -m steps guide check --results .

# A figure's or table's chain (configs/inventory/: its entry and `routes`; ssdartifact.routes):
# script -> CSVs -> rule -> step -> system code -> config keys. docs/figures.md lists every one.
which: setup
	@test -n "$(FIG)$(TABLE)$(SUPP)" || { echo "usage: make which FIG=4.8 (or TABLE=4.3, SUPP=S1)" >&2; exit 2; }
	@python -m ssdartifact.routes which $(if $(FIG),figure $(FIG),$(if $(TABLE),table $(TABLE),supplementary $(SUPP))) \
	  --profile $(PROFILE)

figures-doc: setup
	@python -m ssdartifact.routes docs

checksums: check-config
	@$(SNAKEMAKE) --quiet rules -- deterministic_outputs $(DETERMINISTIC_LIST)
	@python -m steps checksums write checksums/$(PROFILE).sha256 --list $(DETERMINISTIC_LIST)

# Only the named deterministic outputs (FILES="a.pdf b.tex"), built and recorded in the profile's
# manifest beside its other entries: a new figure joins without rerunning the whole profile.
checksums-add: check-config
	@test -n "$(FILES)" || { echo 'make checksums-add: name the outputs, FILES="figures/generated/fig_1_1.pdf ..."'; exit 2; }
	@$(SNAKEMAKE) --quiet rules -- $(FILES)
	@mkdir -p results/checksums && printf '%s\n' $(FILES) >results/checksums/$(PROFILE).added
	@python -m steps checksums add checksums/$(PROFILE).sha256 --list results/checksums/$(PROFILE).added

# `make test`: first everything that times nothing, side by side: the unit tests, the builds the
# end-to-end checks need (the ACE tests' PostgreSQL with assertions; the images when there is a
# Docker engine, at a lower priority) and the three lanes of end-to-end checks (below), the docker
# lane once the images are built (the native lane's ACE tests wait on the PostgreSQL build's lock).
# Then, alone on an otherwise idle machine, the checks that time the wall clock. The work before
# them is CPU-bound with gaps (the SLURM lane waits on the scheduler's polling, the image builds on
# their downloads, the unit tests use one core), which side by side fill each other's: CI of
# 2026-11-28 ran the lanes after the checks that time something and ran out of its 90 minutes; the
# next, with the quick profile's check among them, did too: that check is test-quick's (below).
# A failed build or unit test stops the run before the part that times something.
# PostgreSQL's build is not at a lower priority: the native lane's ACE tests wait for it, and at nice
# 10 they waited 14.5 of CI's minutes (2026-12-03), the lane ending last.
test: setup-test
	@mkdir -p results/tests; status=0; export $(TEST_BUILD_CACHE); \
	python -m ace.build cassert >results/tests/prebuild-ace.log 2>&1 & ace=$$!; \
	if docker info >/dev/null 2>&1; then \
	  ( nice -n 10 python -m ssdartifact.containers build >results/tests/prebuild-images.log 2>&1 || exit $(IMAGES_FAILED); \
	    $(call e2e_lane,$(E2E_DOCKER_LANE),docker) ) & docker=$$!; \
	else ( $(call e2e_lane,$(E2E_DOCKER_LANE),docker) ) & docker=$$!; fi; \
	( $(call e2e_lane,$(E2E_SLURM_LANE),slurm) ) & slurm=$$!; \
	( $(call e2e_lane,$(E2E_NATIVE_LANE),native) ) & native=$$!; \
	$(MAKE) --no-print-directory test-unit || status=2; \
	if ! wait $$ace; then status=2; echo "make test: building PostgreSQL for the tests failed (results/tests/prebuild-ace.log):"; \
	  tail -n 30 results/tests/prebuild-ace.log; fi; \
	lane=0; wait $$docker || lane=$$?; if [ $$lane -eq $(IMAGES_FAILED) ]; then status=2; \
	  echo "make test: building the images failed (results/tests/prebuild-images.log):"; tail -n 30 results/tests/prebuild-images.log; \
	  echo "(the docker lane did not run)" >results/tests/e2e-docker.log; \
	elif [ $$lane -ne 0 ]; then status=1; fi; \
	wait $$slurm || status=1; wait $$native || status=1; \
	if [ $$status -eq 2 ]; then $(E2E_PRINT_LANES); exit 1; fi; \
	echo "--- the end-to-end checks that time something, alone"; \
	$(E2E_WALL_CLOCK) || status=1; \
	$(E2E_PRINT_LANES); exit $$status

# Each writes a JUnit report under results/tests/ (CI uploads it).
test-unit: setup-test
	@python -m pytest -m "not e2e" --durations=20 --junitxml=results/tests/unit.xml

# Slow end-to-end checks: the workflow from a clean output tree, determinism, verify, bad configs,
# docker mode, PostgreSQL's suites, SLURM, the quick profile. Those that time the wall clock (an
# emulated device's latency, a speedup, the quick profile's claims) run one at a time on an
# otherwise idle machine; the others in three lanes side by side, docker mode in one, the SLURM
# cluster in another: they time nothing, and one lane alone leaves a core idle for part of its
# time (2 cores, a fresh clone, 2026-11-26: 15.6 minutes for two lanes, where the project's CI
# took 20.7 for the same checks one after the other). Every part runs, even after a failure.
E2E := e2e and not full_matrix and not quick_profile and not every_lab and not authors_agent and not slow_images
E2E_QUICK := e2e and quick_profile
E2E_ALONE := $(E2E) and wall_clock
E2E_DOCKER_LANE := $(E2E) and not wall_clock and docker
E2E_SLURM_LANE := $(E2E) and not wall_clock and not docker and slurm
E2E_NATIVE_LANE := $(E2E) and not wall_clock and not docker and not slurm
E2E_LANES := docker slurm native
# The tests build the same native code (CAVE, the two simulators, emussd) in each fresh copy of the
# repository they make, five or six times a run: ccache compiles each file once (results/tests/ccache),
# through the compiler launcher CMake takes from the environment. Paths are made relative to each
# build folder (CCACHE_BASEDIR=/), so a copy elsewhere hits; the steps in images do not see it.
TEST_BUILD_CACHE := CCACHE_DIR=$(CURDIR)/results/tests/ccache CCACHE_BASEDIR=/ CCACHE_NOHASHDIR=true \
	CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
# one lane: pytest on the checks marker expression $(1) selects, output in results/tests/e2e-$(2).log
e2e_lane = python -m pytest -p no:cacheprovider -m "$(1)" --durations=10 --junitxml=results/tests/e2e-$(2).xml \
	>results/tests/e2e-$(2).log 2>&1
E2E_WALL_CLOCK = python -m pytest -m "$(E2E_ALONE)" --durations=15 --junitxml=results/tests/e2e-wall-clock.xml
E2E_PRINT_LANES = for lane in $(E2E_LANES); do echo "--- end-to-end, $$lane lane"; cat results/tests/e2e-$$lane.log; done
IMAGES_FAILED := 97
test-e2e: setup-test
	@mkdir -p results/tests; status=0; export $(TEST_BUILD_CACHE); \
	$(E2E_WALL_CLOCK) || status=1; \
	echo "--- the other end-to-end checks, in three lanes (results/tests/e2e-{docker,slurm,native}.log)"; \
	( $(call e2e_lane,$(E2E_DOCKER_LANE),docker) ) & docker=$$!; \
	( $(call e2e_lane,$(E2E_SLURM_LANE),slurm) ) & slurm=$$!; \
	( $(call e2e_lane,$(E2E_NATIVE_LANE),native) ) || status=1; \
	wait $$docker || status=1; wait $$slurm || status=1; \
	$(E2E_PRINT_LANES); exit $$status

# The quick profile from a fresh copy, its claims, the guide's quick numbers from its run and
# `make verify` (tests/test_workflow_e2e.py), alone: about 40 minutes of measurements that nothing
# may share the machine with, so not in `make test`, whose 50 minutes on 2 cores it would take
# nearly whole (CI ran out of its 90 with it, 2026-11-28); `make test` measures the lab profile
# instead. Run it before a release and after changing a measured step (docs/tests-and-ci.md).
test-quick: setup-test
	@mkdir -p results/tests
	@python -m pytest -m "$(E2E_QUICK)" --durations=10 --junitxml=results/tests/e2e-quick.xml

# restore-sim's released preset beside the authors' own agent (systems/restore/tests/test_released.py),
# alone: their agent runs in real time and its counts move with the machine's speed, so it is not in
# `make test` (agreement on a loaded machine, not on an idle one: docs/notes/restore.md).
test-released: setup-test
	@mkdir -p results/tests
	@python -m pytest -m "authors_agent" --durations=5 --junitxml=results/tests/e2e-released.xml

# Every lab's Gradescope autograder run as Gradescope runs it, in a container without privileges
# (tests/test_gradescope.py; make test runs labs 2 and 4's: labs 1 and 3's add 4 minutes, lab 3's
# setup building CAVE twice), alone: their hidden devices time the wall clock.
test-gradescope: setup-test
	@python -m pytest -m e2e tests/test_gradescope.py

# The images' two slowest checks, alone (tests/test_containers.py): the parent image built again from
# nothing has the same ID (bit-reproducible images), and a student grades lab 4 in the lab image from
# the students' tarball. Not in `make test`: about 20 minutes of a loaded CI machine's 50, for what
# changes only with configs/containers.yaml, the lock files or labs/labkit/dist.py.
test-images: setup-test
	@python -m pytest -m "e2e and slow_images" --durations=5

# ssdartifact.memlimit on a real cgroup v2 host: Debian's kernel in QEMU (tests/cgroup-v2-vm/run.sh;
# about 30 s once its kernel is fetched; not in make test: it downloads a kernel and QEMU).
test-cgroup-v2: setup-test
	@bash tests/cgroup-v2-vm/run.sh

# ACE's regression suite and crash test with every replacement policy, with and without ACE
# (CI runs two of the eight combinations as part of test-e2e).
test-ace-matrix: setup
	@python -m pytest -m "full_matrix and not ace_patches" systems/ace/tests

# Each prefix of ACE's patch series (systems/ace/patches/series) applied, built (one full build,
# then incrementally) and run with pgbench; not in CI (full_matrix keeps it out of test-e2e).
test-ace-patches: setup
	@python -m pytest -s -m ace_patches systems/ace/tests

# lintr (R): .lintr holds lintr's defaults with lines of 120, without object_usage_linter, which cannot
# see ggplot2's column names in aes() nor the helpers every script gets from theme.R by source().
# actionlint checks the CI workflow's run: scripts with shellcheck and its Python ones with pyflakes
# (both from workflow/debian-packages.txt); it would drop either check silently if its tool were missing.
LINT_TOOLS := shellcheck pyflakes3
lint: setup
	@snakemake --lint --config profile=$(PROFILE)
	@git grep -lz --untracked -e '' -- 'systems/*.cc' 'systems/*.h' 'labs/*.cc' 'labs/*.h' \
	  | xargs -0 -r clang-format --dry-run -Werror
	@for tool in $(LINT_TOOLS); do command -v $$tool >/dev/null || \
	  { echo "make lint: $$tool is missing (workflow/debian-packages.txt): run make setup"; exit 1; }; done
	@actionlint -shellcheck shellcheck -pyflakes pyflakes3
	@ruff check --quiet .
	@git ls-files -z '*.R' | xargs -0 -r Rscript -e 'n <- 0; for (f in commandArgs(TRUE)) { l <- lintr::lint(f); print(l); n <- n + length(l) }; quit(status = n > 0)'

IMAGES_DIR ?= results/images

images: setup
	@python -m ssdartifact.containers build

# Re-resolve containers/*/packages.lock and python.lock from the mirror and uv.lock; commit the result.
images-lock: setup
	@python -m ssdartifact.containers lock

# <name>.tar and <name>.tar.sha256 per image; archive them with containers/.cache/.
images-save: setup
	@python -m ssdartifact.containers save $(IMAGES) --out $(IMAGES_DIR)

# Measurements are kept (results/pio, results/ace, results/cave/devices, results/raw), and so is
# Snakemake's record of the parameters and inputs each output was made with (.snakemake/metadata):
# a later run with another profile then redoes the kept measurements whose parameters changed.
clean:
	rm -rf results/pio_model results/ace/sim results/restore results/cave/table_5_1.csv results/cave/table_5_1.csv.json \
	  results/claims results/logs results/benchmarks results/checksums figures/generated paper/generated paper/build
	[ ! -d .snakemake ] || find .snakemake -mindepth 1 -maxdepth 1 ! -name metadata ! -name incomplete -exec rm -rf {} +

# Course labs (labs/README.md). KEY: the instructor's secret (or $$LAB_SECRET_KEY); CONFIG: overrides
# of the lab's lab.yaml; RESULTS: where results.json goes.
grade: setup
	@test -n "$(LAB)" -a -n "$(SUBMISSION)" -a -n "$(STUDENT)" || \
	  { echo "usage: make grade LAB=<n> SUBMISSION=<folder> STUDENT=<id> [KEY=<file>] [CONFIG=<file>] [RESULTS=<file>]"; exit 2; }
	@python -m labkit.grade --lab "$(LAB)" --submission "$(SUBMISSION)" --student "$(STUDENT)" \
	  $(if $(KEY),--key "$(KEY)") $(if $(CONFIG),--config "$(CONFIG)") $(if $(RESULTS),--results "$(RESULTS)")

labs: setup
	@python -m labkit.handout $(if $(LAB),--lab "$(LAB)")

lab-key:
	@test -n "$(KEY)" || { echo "usage: make lab-key KEY=<file> (a new secret; an existing file is kept)"; exit 2; }
	@if [ -e "$(KEY)" ]; then echo "lab-key: $(KEY) exists: kept (delete it first to make a new one)"; exit 2; fi
	@(umask 077; head -c 32 /dev/urandom | base64 > "$(KEY)") && echo "lab-key: wrote $(KEY) (keep it secret)"

lab-dist: setup
	@test -n "$(LAB)" || { echo "usage: make lab-dist LAB=<n>"; exit 2; }
	@python -m labkit.dist --lab "$(LAB)" $(if $(KEY),--key "$(KEY)")

# Gradescope's autograder (labs/labkit/gradescope.py): CONFIG, overrides of lab.yaml as for grade; TIMEOUT_MIN,
# the assignment's autograder timeout on Gradescope (default 10); STUDENT_ID, the field of
# submission_metadata.json's users that names a student (email, the default; sid; id).
lab-gradescope: setup
	@test -n "$(LAB)" -a -n "$(KEY)" || \
	  { echo "usage: make lab-gradescope LAB=<n> KEY=<file> [CONFIG=<file>] [TIMEOUT_MIN=<minutes>] [STUDENT_ID=email|sid|id]"; exit 2; }
	@python -m labkit.gradescope build --lab "$(LAB)" --key "$(KEY)" $(if $(CONFIG),--config "$(CONFIG)") \
	  $(if $(TIMEOUT_MIN),--timeout-min "$(TIMEOUT_MIN)") $(if $(STUDENT_ID),--student-id "$(STUDENT_ID)")

lab-grade-all: setup
	@test -n "$(LAB)" -a -n "$(SUBMISSIONS)" || \
	  { echo "usage: make lab-grade-all LAB=<n> SUBMISSIONS=<folder of one folder per student id> [KEY=<file>] [CONFIG=<file>] [WEAK_SANDBOX=1]"; exit 2; }
	@python -m labkit.grade --lab "$(LAB)" --all "$(SUBMISSIONS)" $(if $(KEY),--key "$(KEY)") $(if $(CONFIG),--config "$(CONFIG)") \
	  $(if $(WEAK_SANDBOX),--weak-sandbox)

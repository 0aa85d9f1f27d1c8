# ACE inside PostgreSQL (thesis Chapter 4): PostgreSQL's source, fetched and checked on
# the host, and the server built from it with the patch series of systems/ace/patches/.
# The experiments of Chapter 4 start this server (ACE_SERVER records where it is).

from ace import build as ace_build

ACE_SOURCE_LOCK = "systems/ace/source.yaml"
ACE_TARBALL = f"systems/ace/build/downloads/{ace_build.source_lock()['orig']['file']}"
ACE_SERVER = "results/ace/server.json"
ACE_RESULTS = [ACE_SERVER] if PROFILE_CONFIG.get("ace_server", False) else []


rule fetch_postgresql_source:
    """apt-get source of the pinned PostgreSQL (systems/ace/source.yaml), checked by sha256."""
    input:
        ACE_SOURCE_LOCK,
    output:
        tarball=ACE_TARBALL,
    log:
        "results/logs/fetch_postgresql_source.log",
    run:
        steps.fetch_postgresql_source(output.tarball, log[0])


rule build_ace_server:
    """PostgreSQL with the replacement policies and ACE (release build; cached by source + patches)."""
    input:
        tarball=ACE_TARBALL,
        series="systems/ace/patches/series",
        patches=glob_wildcards_files("systems/ace/patches/{name}.patch"),
        image=image("ace"),
    output:
        record=ACE_SERVER,
    threads: workflow.cores  # make -j uses every core: nothing, a measurement least of all, runs beside it
    log:
        "results/logs/build_ace_server.log",
    benchmark:
        "results/benchmarks/build_ace_server.tsv"
    run:
        steps.build_ace_server(output.record, threads, log[0])

"""A SLURM cluster on this one machine, for the cluster tests (tests/test_cluster_e2e.py).

Debian's slurm-wlm and munge, configured here and nowhere else: every file (munge's key and
socket, slurm.conf, state, spool, logs, pid files) is under the given folder, the daemons listen
on free ports, and the client commands find the cluster through SLURM_CONF, so another cluster on
the machine (or another test's) is not touched. Two nodes on the one host (Debian builds slurmd
with MULTIPLE_SLURMD), each with its own features: the "device nodes" a device declaration names
(docs/cluster.md, "Tested against a real SLURM").
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

TOOLS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel", "srun")
CLIENTS = ("sbatch", "srun", "squeue", "sinfo", "scancel", "scontrol", "sacct")


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for each in sockets:
        each.bind(("127.0.0.1", 0))
    ports = [each.getsockname()[1] for each in sockets]
    for each in sockets:
        each.close()
    return ports


def _slurm_conf(top: Path, nodes: dict[str, list[str]], ports: list[int], cpus: int, memory_mb: int) -> str:
    host = socket.gethostname().split(".")[0]
    lines = [
        f"ClusterName=artifact{ports[0]}",
        f"SlurmctldHost={host}(127.0.0.1)",
        f"SlurmctldPort={ports[0]}",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        f"AuthInfo=socket={top}/munge/munge.socket",
        "CredType=cred/munge",
        # no systemd, no cgroup delegation needed: processes tracked by /proc, no task binding
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        "AccountingStorageType=accounting_storage/none",
        "JobAcctGatherType=jobacct_gather/none",
        "ReturnToService=2",
        # the executor reads job states from squeue (no slurmdbd, so no sacct): a finished job must
        # stay visible long enough, and the plugin wants MinJobAge >= 3 x its first wait
        "MinJobAge=300",
        "MailProg=/bin/true",
        f"StateSaveLocation={top}/state",
        f"SlurmdSpoolDir={top}/spool/%n",
        f"SlurmctldPidFile={top}/run/slurmctld.pid",
        f"SlurmdPidFile={top}/run/slurmd-%n.pid",
        f"SlurmctldLogFile={top}/log/slurmctld.log",
        f"SlurmdLogFile={top}/log/slurmd-%n.log",
    ]
    for (name, features), port in zip(nodes.items(), ports[1:]):
        lines.append(f"NodeName={name} NodeHostname={host} NodeAddr=127.0.0.1 Port={port} CPUs={cpus} "
                     f"RealMemory={memory_mb}" + (f" Feature={','.join(features)}" if features else ""))
    lines.append(f"PartitionName=main Nodes={','.join(nodes)} Default=YES MaxTime=INFINITE State=UP")
    return "\n".join(lines) + "\n"


def _stop(pid_file: Path) -> None:
    try:
        pid = int(pid_file.read_text())
    except (FileNotFoundError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(100):  # about 6 s for slurmd (cluster.md)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@contextmanager
def single_host_cluster(top: Path, nodes: dict[str, list[str]], cpus: int = 2, memory_mb: int = 4000):
    """Start munged, slurmctld and one slurmd per node under `top`; yield the environment the
    client commands (and Snakemake's executor) need. Every daemon is stopped and every job cancelled
    on the way out, whatever happened inside."""
    for sub in ("munge", "state", "run", "log", *(f"spool/{name}" for name in nodes)):
        (top / sub).mkdir(parents=True, exist_ok=True)
    ports = _free_ports(1 + len(nodes))
    conf = top / "slurm.conf"
    conf.write_text(_slurm_conf(top, nodes, ports, cpus, memory_mb))
    # The clients find this cluster through SLURM_CONF; but inside a job, Snakemake's jobstep drops
    # every SLURM_* variable before its srun (a real cluster's slurm.conf is in /etc/slurm, where
    # srun looks without it). Wrappers first in PATH, which jobs inherit, name it for each client.
    (top / "bin").mkdir(exist_ok=True)
    for client in CLIENTS:
        wrapper = top / "bin" / client
        wrapper.write_text(f'#!/bin/sh\nSLURM_CONF={conf} exec {shutil.which(client) or "/usr/bin/" + client} "$@"\n')
        wrapper.chmod(0o755)
    env = {**os.environ, "SLURM_CONF": str(conf), "PATH": f"{top / 'bin'}:{os.environ['PATH']}"}
    key = top / "munge/munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    munge_pid = top / "munge/munged.pid"
    pid_files = [munge_pid, top / "run/slurmctld.pid", *(top / f"run/slurmd-{name}.pid" for name in nodes)]
    try:
        # --force: munged otherwise refuses to run as root with its files outside /etc/munge
        subprocess.run(["munged", "--force", f"--key-file={key}", f"--socket={top}/munge/munge.socket",
                        f"--pid-file={munge_pid}", f"--log-file={top}/log/munged.log",
                        f"--seed-file={top}/munge/munged.seed"], check=True, capture_output=True, text=True)
        subprocess.run(["slurmctld", "-f", str(conf)], env=env, check=True, capture_output=True, text=True)
        for name in nodes:
            subprocess.run(["slurmd", "-f", str(conf), "-N", name], env=env, check=True, capture_output=True,
                           text=True)
        deadline = time.monotonic() + 60
        while True:
            states = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], env=env, capture_output=True, text=True)
            if states.returncode == 0 and states.stdout.split() and set(states.stdout.split()) == {"idle"}:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the SLURM nodes did not become idle in 60 s: {states.stdout}{states.stderr}\n"
                                   + "".join(p.read_text()[-2000:] for p in sorted((top / "log").glob("*.log"))))
            time.sleep(0.2)
        yield env
    finally:
        subprocess.run(["scancel", "--full", f"--user={os.getuid()}"], env=env, capture_output=True)
        for pid_file in reversed(pid_files):
            _stop(pid_file)


def jobs(env: dict, states: str = "all") -> list[dict[str, str]]:
    """The cluster's jobs: id, name, state, node, features and memory asked for (squeue's "2000M")."""
    shown = subprocess.run(["squeue", "-h", f"--states={states}", "-o", "%i|%j|%T|%N|%f|%k|%m"], env=env,
                           capture_output=True, text=True, check=True).stdout
    keys = ("id", "name", "state", "node", "features", "comment", "memory")
    return [dict(zip(keys, line.split("|"))) for line in shown.splitlines() if line.strip()]

"""One whole-process run of a command, timed, with the command's own peak RSS; and the
peak RSS of the calling process (`vm_hwm_mib`), for the peers' in-process figures; and the
JSON line a command reports (`last_json`).

Shared by the side-by-side scripts here. The command is started by a small launcher that
runs under `python -S` (a few MiB): it forks, execs the command with its output in a file,
waits with wait4 and prints the wall seconds, the child's own peak RSS (KiB) and its exit
status. A process exec'ed straight from a benchmark script would carry that interpreter's
peak RSS instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

LAUNCHER = r"""
import json, os, sys, time
argv = sys.argv[1:]
out = os.open(os.environ["TIMED_PROCESS_OUT"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.dup2(out, 1)
    os.dup2(out, 2)
    try:
        os.execv(argv[0], argv)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
t1 = time.perf_counter()
print(json.dumps({"seconds": t1 - t0, "maxrss_kib": ru.ru_maxrss, "status": os.waitstatus_to_exitcode(status)}))
"""


def run_timed(binary: str, args: list[str], out_file: str, extra_env: dict | None = None,
              timeout: float = 3600) -> dict:
    """Runs `binary args` through the launcher: `seconds`, `maxrss_kib`, `status` (its exit
    code) and `output` (stdout and stderr). Raises if the launcher itself failed."""
    env = dict(os.environ, TIMED_PROCESS_OUT=out_file, **(extra_env or {}))
    p = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, binary, *args], capture_output=True,
                       text=True, env=env, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"launcher failed: {p.stderr.strip()[-1500:]}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    with open(out_file, errors="replace") as fh:
        r["output"] = fh.read()
    return r


def vm_hwm_mib() -> float | None:
    """Peak RSS of this process (VmHWM), MiB."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def last_json(text: str) -> dict | None:
    """The last line of `text` that starts with `{`, parsed (`None` if it does not parse):
    the one-line JSON report a command prints after any progress output."""
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def run_child(script: str, args: list[str], label: str, timeout: float) -> dict:
    """Runs `script --child ARGS` under this interpreter (a peer measured in a fresh
    process) and returns the JSON of its `CHILD ` line; a failure or a missing line raises,
    naming `label` and the end of the child's stderr."""
    cmd = [sys.executable, os.path.abspath(script), "--child", *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{label} failed (exit {p.returncode}): {p.stderr.strip()[-1500:]}")
    for line in p.stdout.splitlines():
        if line.startswith("CHILD "):
            return json.loads(line[6:])
    raise RuntimeError(f"{label}: no result line; stderr: {p.stderr.strip()[-1500:]}")

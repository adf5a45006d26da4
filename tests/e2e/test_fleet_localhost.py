"""`osmeter fleet run` on `localhost ansible_connection=local`, as the issue-28 report wrote it (no
ansible_python_interpreter: on a machine with pyenv, Ansible's discovery took a shim and the host failed
with raw JSON text), then a local run of the same machine: `compare --by host` shows them as one host,
beside another machine's run. About 20 s; needs ansible-core and ansible-runner (an optional tool)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import DATA, osmeter_command, subprocess_env
from probe_helpers import optional_tool_missing

pytestmark = pytest.mark.slow

TINY = ["--repeat", "1", "--min-time", "0.001", "--max-time", "0.01", "--min-samples", "2"]
TMP = Path(tempfile.gettempdir())


def _osmeter(probe: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = subprocess_env() | {"OSMETER_PROBE": probe}
    return subprocess.run(osmeter_command(*args), capture_output=True, text=True, env=env, timeout=300)


def test_localhost_of_the_local_connection_works_and_is_this_machine(real_probe: str, tmp_path: Path) -> None:
    try:
        import ansible_runner  # noqa: F401
    except ImportError:
        optional_tool_missing("ansible-runner is missing (pip install 'ansible-runner>=2.3' 'ansible-core>=2.14')")
    private = set(TMP.glob("osmeter-fleet.*"))
    inventory = tmp_path / "inv.ini"
    inventory.write_text("localhost ansible_connection=local\n")
    store = str(tmp_path / "s.db")
    r = _osmeter(real_probe, "fleet", "run", str(inventory), "--suite", "quick", *TINY, "--store", store)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "  localhost: stored run 1 (complete" in r.stderr and "localhost: run 1" in r.stdout
    assert set(TMP.glob("osmeter-fleet.*")) <= private and not list(TMP.glob("osmeter-fleet-*"))

    r = _osmeter(real_probe, "run", "syscall.null", *TINY, "--store", store)  # the same machine, locally: run 2
    assert r.returncode == 0, r.stderr
    r = _osmeter(real_probe, "import", str(DATA / "run_x86_64.jsonl"), "--store", store)  # another: run 3
    assert r.returncode == 0, r.stderr
    r = _osmeter(real_probe, "compare", "--by", "host", "1", "2", "3", "--store", store, "--json")
    assert r.returncode == 0, r.stderr
    name = os.uname().nodename
    columns = {c["name"]: sorted(c["runs"]) for c in json.loads(r.stdout)["columns"]}
    assert columns == {"testbox": [3], name: [1, 2]}, columns
    r = _osmeter(real_probe, "compare", "--by", "host", "1", "2", "--store", store)
    assert r.returncode == 2 and f"({name}: runs 1, 2 are of one machine;" in r.stderr, r.stderr

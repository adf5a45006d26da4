"""Fleet on the machine you're on (issue 28): `localhost ansible_connection=local` works out of the box
(a host of the local connection without ansible_python_interpreter gets the Python that runs osmeter),
and a host whose Python did not run fails with a reason that names the interpreter, the host and the
fix, not Ansible's raw JSON text. (The real run: tests/e2e/test_fleet_localhost.py.)"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from osmeter import errors
from osmeter.fleet import plays
from osmeter.fleet.events import ArchStep, RunStep, ansible_reason, python_failure
from osmeter.fleet.inventory import local_interpreters, vars_source
from probe_helpers import optional_tool_missing

FIX = "set ansible_python_interpreter=/usr/bin/python3 (or another Python the host has) for {} in the inventory"

# What ansible-core 2.19 sent for `localhost ansible_connection=local` on a machine with pyenv: its
# discovery took the shim, which found no python3.13 (the event's res, as ansible-runner gave it).
PYENV_SHIM = {
    "msg": "Module result deserialization failed: No start of json char found",
    "module_stdout": "",
    "module_stderr": "pyenv: python3.13: command not found\n\nThe `python3.13' command exists in these Python "
                     "versions:\n  3.13.0\n\nNote: See 'pyenv help global' for tips on allowing multiple\n"
                     "      Python versions to be found at the same time.\n",
    "rc": 127,
    "ansible_facts": {"discovered_interpreter_python": "/root/.pyenv/shims/python3.13"},
    "changed": False,
    "exception": "(traceback unavailable)",
    "warnings": ["Host 'localhost' is using the discovered Python interpreter at '/root/.pyenv/shims/python3.13', "
                 "but future installation of another Python interpreter could cause a different interpreter to "
                 "be discovered."],
}


# -- the interpreter: inventory -> the variables Ansible gets ---------------------------------------------


def test_a_local_host_without_an_interpreter_gets_this_python() -> None:
    hostvars = {  # ansible-inventory --list's hostvars: host and group variables merged
        "localhost": {"ansible_connection": "local"},
        "builtin": {"ansible_connection": "ansible.builtin.local", "foo": 1},
        "named": {"ansible_connection": "local", "ansible_python_interpreter": "/usr/bin/python3"},
        "remote": {"ansible_host": "192.0.2.10"},
        "ssh": {"ansible_connection": "ssh"},
    }
    python = "/opt/venv/bin/python3"
    assert local_interpreters(hostvars, python, env={}) == {
        "localhost": {"ansible_python_interpreter": python}, "builtin": {"ansible_python_interpreter": python}}
    # Ansible's own setting for every host is the user's choice: nothing added
    assert local_interpreters(hostvars, python, env={"ANSIBLE_PYTHON_INTERPRETER": "/usr/bin/python3"}) == {}
    assert local_interpreters(hostvars, "/odd/{{ x }}/python", env={}) == {}  # Ansible would template it
    assert local_interpreters({}, python, env={}) == {}
    assert local_interpreters(hostvars, env={})["localhost"] == {"ansible_python_interpreter": sys.executable}


def test_the_added_variables_are_an_inventory_source_of_their_own(tmp_path: Path) -> None:
    source = vars_source({"localhost": {"ansible_python_interpreter": "/opt/venv/bin/python3"}}, tmp_path / "v.yml")
    assert json.loads(source.read_text()) == {
        "all": {"hosts": {"localhost": {"ansible_python_interpreter": "/opt/venv/bin/python3"}}}}


@pytest.mark.slow  # Ansible reads the inventory (a second or two); CI runs it
def test_ansible_reads_the_inventory_and_the_python_goes_to_local_hosts_only(tmp_path: Path) -> None:
    """Through Ansible's own reading (group_vars and [all:vars] included) to the source it then reads."""
    try:
        import ansible_runner  # noqa: F401

        from osmeter.fleet.ansible import AnsibleSession, ansible_bin

        ansible_bin("ansible-inventory")
    except (ImportError, errors.MissingDependencyError):
        optional_tool_missing("Ansible is missing (pip install 'ansible-core>=2.14' 'ansible-runner>=2.3')")
    (tmp_path / "group_vars").mkdir()
    (tmp_path / "group_vars" / "boards.yml").write_text("ansible_connection: local\n")
    inventory = tmp_path / "inv.ini"
    inventory.write_text("[lab]\nlocalhost ansible_connection=local\nnamed ansible_connection=local "
                         "ansible_python_interpreter=/usr/bin/python3\nremote ansible_host=192.0.2.10\n"
                         "[boards]\nrpi\n[all:vars]\nfoo=1\n")
    with AnsibleSession(1, out=io.StringIO()) as session:
        session.take_inventory(inventory)
        added = session.local_python(["localhost", "named", "remote", "rpi"])
        assert added == {h: {"ansible_python_interpreter": sys.executable} for h in ("localhost", "rpi")}
        (source,) = session.sources
        assert json.loads(source.read_text())["all"]["hosts"] == added
        assert session.local_python(["remote", "named"]) == {} and session.sources == []  # --limit: none local


# -- a Python that did not run: the reason -----------------------------------------------------------------


def test_a_discovered_shim_is_named_with_the_fix() -> None:
    reason = python_failure(PYENV_SHIM, "localhost")
    assert reason == ("Ansible's modules did not run with the Python Ansible's discovery found there, "
                      "/root/.pyenv/shims/python3.13 (pyenv: python3.13: command not found); "
                      + FIX.format("localhost") + " (docs/fleet.md, \"The hosts' Python\")")
    assert ansible_reason("runner_on_failed", PYENV_SHIM, "localhost") == reason
    assert "{" not in reason and "No start of json" not in reason


@pytest.mark.parametrize("res, which", [
    ({"msg": "The module interpreter '/usr/bin/python3' was not found.", "module_stderr":
      "/bin/sh: 1: /usr/bin/python3: not found\n", "rc": 127},  # ansible-core 2.19, a named one missing
     "the Python it was told to use, /usr/bin/python3 (/bin/sh: 1: /usr/bin/python3: not found)"),
    ({"msg": "MODULE FAILURE\nSee stdout/stderr for the exact error", "module_stdout": "",
      "module_stderr": "  File \"/tmp/ansible/AnsiballZ_setup.py\", line 17\n    def f(*, a):\n"
                       "        ^\nSyntaxError: invalid syntax\n", "rc": 1},  # 2.14: a Python 2 on the host
     "the Python it was told to use (SyntaxError: invalid syntax)"),
    ({"msg": "The module failed to execute correctly, you probably need to set the interpreter.\nSee stdout/stderr "
      "for the exact error", "module_stderr": "/bin/sh: /usr/bin/python: No such file or directory\n", "rc": 127,
      "ansible_facts": {"discovered_interpreter_python": "/usr/bin/python"}},  # 2.14, discovery's fallback
     "the Python Ansible's discovery found there, /usr/bin/python (/bin/sh: /usr/bin/python: No such file or "
     "directory)"),
])
def test_each_ansibles_words_for_a_python_that_did_not_run(res: dict, which: str) -> None:
    assert python_failure(res, "rpi4") == (f"Ansible's modules did not run with {which}; {FIX.format('rpi4')} "
                                           "(docs/fleet.md, \"The hosts' Python\")")


def test_other_failures_keep_ansibles_message() -> None:
    res = {"msg": "Destination directory /nope does not exist"}
    assert python_failure(res, "h") is None
    assert ansible_reason("runner_on_failed", res, "h") == "Destination directory /nope does not exist"
    unreachable = {"msg": "Failed to connect to the host via ssh: Connection refused"}
    assert ansible_reason("runner_on_unreachable", unreachable, "h").startswith("unreachable: Failed to connect")


def _event(kind: str, host: str, task: str, res: dict) -> dict:
    return {"event": kind, "event_data": {"host": host, "task": task, "res": res}}


def test_the_steps_report_it_for_the_host() -> None:
    """The facts step (the first module a host runs) and a later module step (copy) both say it."""
    out = io.StringIO()
    step = ArchStep(out=out)
    step(_event("runner_on_start", "localhost", "setup", {}))
    step(_event("runner_on_failed", "localhost", "setup", PYENV_SHIM))
    assert step.failed["localhost"].startswith("Ansible's modules did not run with the Python Ansible's discovery")
    assert "  localhost: failed: Ansible's modules did not run" in out.getvalue()
    assert FIX.format("localhost") in out.getvalue()
    run = RunStep(arch_of=lambda h: "x86-64", running="running", made=lambda h, p: None, fetched=lambda h: "",
                  removed=lambda h: None, out=io.StringIO())
    run(_event("runner_on_failed", "rpi4", plays.T_COPY, dict(PYENV_SHIM, results=[])))
    assert run.failed["rpi4"].endswith(FIX.format("rpi4") + " (docs/fleet.md, \"The hosts' Python\") "
                                       "(while copying the probe)")

"""ansible-runner's events turned into per-host progress and outcomes.

Each host gets one line per step on stderr (`  HOST: connecting`,
`copying the aarch64 probe`, `running --suite quick`, `fetching the
output`, `stored run N ...`, `failed: REASON`). A host's first failure is
its outcome; what happens after it (the `always` clean-up) only records a
remote directory that could not be removed.

A module whose Python did not run on the host (Ansible's discovery picked
a pyenv shim; the interpreter named is not there; a Python too old) comes
back as raw text that is not JSON; its failure names the interpreter, what
the host said, and the fix (python_failure).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import IO, Any, Callable

from .. import textsafe
from .plays import T_ARCH, T_COPY, T_FETCH, T_OLD, T_REMOVE, T_RUN, T_TMP, failure_text

UNREACHABLE = "unreachable"
# What Ansible says when a module's output was not JSON: its Python did not run
# (2.19: "Module result deserialization failed", "The module interpreter '...' was not
# found"; before: "MODULE FAILURE", "... you probably need to set the interpreter").
PYTHON_SIGNS = ("module result deserialization failed", "module interpreter", "module failure",
                "need to set the interpreter")
PYTHON_FIX = "/usr/bin/python3"


def say(out: IO[str], host: str, text: str) -> None:
    out.write(f"  {textsafe.line(host)}: {textsafe.line(text)}\n")
    out.flush()


def timed_out(res: dict[str, Any]) -> bool:
    """Whether Ansible stopped the task at its `timeout` (in a loop: an item)."""
    items = [res] + [i for i in res.get("results") or () if isinstance(i, dict)]
    return any(i.get("timedout") for i in items)


def python_failure(res: dict[str, Any], host: str) -> str | None:
    """Why a module did not run, when it is the host's Python (Ansible got
    text that is not JSON back, PYTHON_SIGNS), in a line that names the
    interpreter, the host's words and the fix; else None."""
    msg = str(res.get("msg") or "")
    if not any(sign in msg.lower() for sign in PYTHON_SIGNS):
        return None
    found = (res.get("ansible_facts") or {}).get("discovered_interpreter_python")
    named = re.search(r"interpreter '([^']+)'", msg)  # 2.19 names one that is not there
    which = (f"the Python Ansible's discovery found there, {found}" if found else
             f"the Python it was told to use, {named.group(1)}" if named else "the Python it was told to use")
    lines = [s.strip() for s in str(res.get("module_stderr") or res.get("module_stdout") or "").splitlines()
             if s.strip()]
    errors = [s for s in lines if re.match(r"\w+(Error|Exception)\b", s)]  # a Python's traceback: its error
    said = errors[-1] if errors else lines[0] if lines else ""
    return (f"Ansible's modules did not run with {which}" + (f" ({said[:200]})" if said else "")
            + f"; set ansible_python_interpreter={PYTHON_FIX} (or another Python the host has) for {host} in the "
            "inventory (docs/fleet.md, \"The hosts' Python\")")


def ansible_reason(event: str, res: dict[str, Any], host: str = "the host") -> str:
    """Why a task failed, in a line: `unreachable: MSG`, the host's Python
    that did not run (python_failure), or Ansible's message."""
    msg = str(res.get("msg") or "").strip() or "no message"
    if event == "runner_on_unreachable":
        return f"{UNREACHABLE}: {msg}"
    python = python_failure(res, host)
    if python is not None:
        return python
    if res.get("results"):  # a loop: the first item that failed
        for item in res["results"]:
            if isinstance(item, dict) and item.get("failed"):
                return str(item.get("msg") or msg).strip()
    stderr = str(res.get("stderr") or res.get("module_stderr") or "").strip()
    return f"{msg}: {stderr[-500:]}" if stderr and stderr not in msg else msg


@dataclass
class ArchStep:
    """Step 1: each host's `ansible_architecture`, or why it has none."""

    out: IO[str] = field(default_factory=lambda: sys.stderr)
    arches: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("event", "")
        data = event.get("event_data") or {}
        host = data.get("host")
        if not host:
            return
        res = data.get("res") or {}
        if kind == "runner_on_start":
            say(self.out, host, "connecting")
        elif kind == "runner_on_ok":
            arch = (res.get("ansible_facts") or {}).get("ansible_architecture")
            if isinstance(arch, str) and arch:
                self.arches[host] = arch
            else:
                self._fail(host, "Ansible's facts have no ansible_architecture")
        elif kind in ("runner_on_failed", "runner_on_unreachable"):
            if timed_out(res):
                period = (res.get("timedout") or {}).get("period")
                self._fail(host, f"timed out: Ansible's facts took more than {period} s" if period
                           else "timed out while Ansible read its facts")
            else:
                self._fail(host, ansible_reason(kind, res, host))

    def _fail(self, host: str, reason: str) -> None:
        if host not in self.failed:
            self.failed[host] = reason
            say(self.out, host, f"failed: {reason}")


@dataclass
class RunStep:
    """Step 2: progress lines, and calls back as a host's temporary directory
    is made (`made`), its output fetched (`fetched`, which stores it and
    returns the line to show) and the directory removed (`removed`)."""

    arch_of: Callable[[str], str]
    running: str  # what "running ..." says
    made: Callable[[str, str], None]
    fetched: Callable[[str], str]
    removed: Callable[[str], None]
    out: IO[str] = field(default_factory=lambda: sys.stderr)
    host_timeout: float | None = None  # each host's deadline (--host-timeout), seconds
    failed: dict[str, str] = field(default_factory=dict)
    done: set[str] = field(default_factory=set)

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("event", "")
        data = event.get("event_data") or {}
        host, task = data.get("host"), data.get("task")
        if not host or host in self.failed:
            return self._after_failure(kind, host, task, data)
        res = data.get("res") or {}
        if kind == "runner_on_start":
            shown = {T_COPY: f"copying the {self.arch_of(host)} probe", T_RUN: self.running,
                     T_FETCH: "fetching the output"}.get(task)
            if shown:
                say(self.out, host, shown)
        elif kind == "runner_on_ok":
            self._ok(host, task, res)
        elif kind in ("runner_on_failed", "runner_on_unreachable"):
            self.fail(host, self._reason(kind, host, task, res))

    def _ok(self, host: str, task: str | None, res: dict[str, Any]) -> None:
        if task == T_TMP and isinstance(res.get("path"), str):
            self.made(host, res["path"])
        elif task == T_FETCH:
            try:
                line = self.fetched(host)
            except Exception as e:  # a file the import refuses: this host failed, the others go on
                self.fail(host, getattr(e, "message", None) or f"{type(e).__name__}: {e}")
                return
            self.done.add(host)
            say(self.out, host, line)
        elif task == T_REMOVE:
            self.removed(host)

    def _reason(self, kind: str, host: str, task: str | None, res: dict[str, Any]) -> str:
        if timed_out(res) and task != T_REMOVE:
            limit = f"its {self.host_timeout:g} s" if self.host_timeout else "its time"
            reason = f"timed out: the host took more than {limit} (--host-timeout)"
        elif kind == "runner_on_failed" and task == T_RUN:
            return failure_text(res)
        else:
            reason = ansible_reason(kind, res, host)
        step = {T_OLD: "removing what an earlier attempt left", T_TMP: "making a temporary directory",
                T_COPY: "copying the probe", T_RUN: "running the probe", T_FETCH: "fetching the output",
                T_REMOVE: "removing the temporary directory", T_ARCH: "reading its architecture"}.get(task or "")
        return f"{reason} (while {step})" if step else reason

    def _after_failure(self, kind: str, host: str | None, task: str | None, data: dict[str, Any]) -> None:
        if host and kind == "runner_on_ok" and task == T_REMOVE:
            self.removed(host)

    def fail(self, host: str, reason: str) -> None:
        if host not in self.failed and host not in self.done:
            self.failed[host] = reason
            say(self.out, host, f"failed: {reason}")

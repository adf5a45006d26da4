"""ansible-runner's events turned into per-host progress and outcomes.

Each host gets one line per step on stderr (`  HOST: connecting`,
`copying the aarch64 probe`, `running --suite quick`, `fetching the
output`, `stored run N ...`, `failed: REASON`). A host's first failure is
its outcome; what happens after it (the `always` clean-up) only records a
remote directory that could not be removed.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import IO, Any, Callable

from .. import textsafe
from .plays import T_ARCH, T_COPY, T_FETCH, T_OLD, T_REMOVE, T_RUN, T_TMP, failure_text

UNREACHABLE = "unreachable"


def say(out: IO[str], host: str, text: str) -> None:
    out.write(f"  {textsafe.line(host)}: {textsafe.line(text)}\n")
    out.flush()


def timed_out(res: dict[str, Any]) -> bool:
    """Whether Ansible stopped the task at its `timeout` (in a loop: an item)."""
    items = [res] + [i for i in res.get("results") or () if isinstance(i, dict)]
    return any(i.get("timedout") for i in items)


def ansible_reason(event: str, res: dict[str, Any]) -> str:
    """Why a task failed, in a line: `unreachable: MSG` or Ansible's message."""
    msg = str(res.get("msg") or "").strip() or "no message"
    if event == "runner_on_unreachable":
        return f"{UNREACHABLE}: {msg}"
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
                self._fail(host, ansible_reason(kind, res))

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
            self.fail(host, self._reason(kind, task, res))

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

    def _reason(self, kind: str, task: str | None, res: dict[str, Any]) -> str:
        if timed_out(res) and task != T_REMOVE:
            limit = f"its {self.host_timeout:g} s" if self.host_timeout else "its time"
            reason = f"timed out: the host took more than {limit} (--host-timeout)"
        elif kind == "runner_on_failed" and task == T_RUN:
            return failure_text(res)
        else:
            reason = ansible_reason(kind, res)
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

"""Ansible, through ansible-runner, in a private directory that is removed
with everything Ansible started.

An AnsibleSession owns one private data directory (`osmeter-fleet.XXXXXX`
in the temporary directory): the copy of the inventory Ansible reads
(osmeter.fleet.inventory), ansible-runner's inputs and artifacts, the
fetched files, Ansible's local temporary files and its SSH control sockets
(ANSIBLE_SSH_CONTROL_PATH_DIR), so the SSH master connections Ansible
keeps (ControlPersist) are found by their socket's path; and beside the
inventory's copy, the variables osmeter adds (the Python of a host of the
local connection: AnsibleSession.local_python). On every way out,
Ctrl-C included, the session kills each process that names the directory in
its arguments (ansible-playbook, its workers, ssh, the SSH masters) and then
removes the directory.

A SIGKILL leaves no way out: the directory's `owner` file is locked
(flock) for as long as its session lives, and the next session removes
every directory of this user whose owner lock it can take (its osmeter
is gone), after stopping what still names it (an ansible-playbook that
outlived its osmeter, its ssh connections).

While ansible-runner runs, SIGINT, SIGTERM and SIGHUP only set a flag that
its cancel callback reports (ansible-runner then kills the ansible-playbook
process group); the interruption is raised once it has returned. Without
that callback ansible-runner would install handlers of its own for good.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType, TracebackType
from typing import IO, Any, Callable, Mapping, Sequence

from ..errors import MissingDependencyError, Terminated, UsageError
from .inventory import copy_inventory, local_interpreters, vars_source

PRIVATE_PREFIX = "osmeter-fleet."
OWNER_FILE = "owner"  # in the private directory: locked while its session lives, with the owner's pid
INSTALL_HINT = "pip install 'ansible-core>=2.14' 'ansible-runner>=2.3'"
LIST_TIMEOUT_S = 120.0
CANCEL_POLL_S = 0.5  # how often ansible-runner asks whether to cancel
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def ansible_bin(name: str = "ansible-playbook") -> Path:
    """An Ansible executable: beside this Python (a virtual environment), else on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which(name)
    if found:
        return Path(found)
    raise MissingDependencyError(f"{name} not found (beside {sys.executable} or on PATH): osmeter fleet needs "
                                 f"Ansible; {INSTALL_HINT}")


def ansible_env(private: Path | None = None, env: Mapping[str, str] = os.environ,
                task_timeout: int | None = None) -> dict[str, str]:
    """The environment Ansible runs in: its executables first on PATH, an
    inventory it cannot parse an error (not a warning and no hosts), host keys
    checked unless the user says otherwise (ansible-runner would turn that
    off), with a private directory: its temporary files and SSH control
    sockets there, and with task_timeout: the longest a task (without a
    `timeout` of its own) may take on a host."""
    out = {
        "PATH": os.pathsep.join([str(ansible_bin().parent), env.get("PATH", os.defpath)]),
        "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True",
        "ANSIBLE_HOST_KEY_CHECKING": env.get("ANSIBLE_HOST_KEY_CHECKING", "True"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_DEPRECATION_WARNINGS": "False",
        "ANSIBLE_RETRY_FILES_ENABLED": "False",
    }
    if private is not None:
        out["ANSIBLE_SSH_CONTROL_PATH_DIR"] = str(private / "cp")
        out["ANSIBLE_LOCAL_TEMP"] = str(private / "tmp")
    if task_timeout is not None:
        out["ANSIBLE_TASK_TIMEOUT"] = str(max(1, int(task_timeout)))
    return out


def inventory_message(stderr: str) -> str:
    """Ansible's own words on why an inventory did not parse, without its
    repetitions: the plugins' first lines and the final error."""
    keep: list[str] = []
    for raw in stderr.splitlines():
        text = raw.strip()
        m = re.match(r"\[(WARNING|ERROR)\]:\s*(.*)", text)
        if m and m.group(2) and m.group(2) not in keep:
            keep.append(m.group(2))
    return "; ".join(keep)[-1500:] or stderr.strip()[-1500:] or "no message"


def list_hosts(inventory: Path, pattern: str, shown: Path | None = None) -> list[str]:
    """The inventory's hosts that match `pattern`, in Ansible's order
    (`inventory`: the copy Ansible reads; `shown`: the user's path, which
    messages name). UsageError for a malformed inventory (naming the file
    and quoting Ansible) and for a pattern that matches no host."""
    shown = shown or inventory
    argv = [str(ansible_bin("ansible")), pattern, "-i", str(inventory), "--list-hosts"]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=LIST_TIMEOUT_S, stdin=subprocess.DEVNULL,
                           env={**os.environ, **ansible_env()})
    except subprocess.TimeoutExpired:
        raise UsageError(f"inventory {shown}: ansible took more than {LIST_TIMEOUT_S:.0f} s to list its hosts") \
            from None
    if p.returncode != 0:
        raise UsageError(f"inventory {shown}: Ansible cannot read it: "
                         f"{inventory_message(p.stderr.replace(str(inventory), str(shown)))}")
    hosts = [line.strip() for line in p.stdout.splitlines()[1:] if line.strip()]
    if not p.stdout.lstrip().startswith("hosts (") or not hosts:
        raise UsageError(f"inventory {shown}: no host matches the pattern {pattern!r}"
                         + (f" ({inventory_message(p.stderr)})" if p.stderr.strip() else ""))
    return hosts


def host_vars(inventory: Path) -> dict[str, Any]:
    """Each host's variables as Ansible resolves them from the inventory
    (`ansible-inventory --list`'s hostvars: host and group variables and the
    group_vars/host_vars files merged); {} when it cannot tell (list_hosts
    has already refused an inventory Ansible cannot read)."""
    argv = [str(ansible_bin("ansible-inventory")), "-i", str(inventory), "--list"]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=LIST_TIMEOUT_S, stdin=subprocess.DEVNULL,
                           env={**os.environ, **ansible_env()})
        doc = json.loads(p.stdout) if p.returncode == 0 else {}
    except (subprocess.TimeoutExpired, ValueError):
        return {}
    found = (doc.get("_meta") or {}).get("hostvars") if isinstance(doc, dict) else None
    return found if isinstance(found, dict) else {}


def processes_naming(text: str) -> list[int]:
    """Pids of the processes (not this one) whose arguments contain `text`."""
    found = []
    needle = text.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def kill_processes_naming(text: str, grace_s: float = 2.0) -> None:
    """SIGTERM to every process naming `text`, SIGKILL to those still there after `grace_s`."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 0.0)):
        pids = processes_naming(text)
        for pid in pids:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + wait
        while pids and time.monotonic() < deadline:
            time.sleep(0.05)
            pids = processes_naming(text)
        if not pids:
            return


def _take_owner_lock(directory: Path, create: bool) -> int | None:
    """The locked `owner` file of a private directory (its fd, close-on-exec:
    no process Ansible starts holds it), or None when another process holds
    the lock (or, without create, when there is no such file). A new one is
    locked before it gets its name, so no other osmeter sees it unlocked."""
    name = f".{OWNER_FILE}.new" if create else OWNER_FILE
    flags = os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW | (os.O_CREAT | os.O_EXCL if create else 0)
    try:
        fd = os.open(directory / name, flags, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if create:
            os.write(fd, f"{os.getpid()}\n".encode())
            os.rename(directory / name, directory / OWNER_FILE)
    except OSError:
        os.close(fd)
        return None
    return fd


def remove_abandoned(tmp: Path | None = None) -> list[Path]:
    """Remove the private directories of fleet runs that were killed (their
    owner lock is free: the process that held it is gone), after stopping
    every process that still names one; the directories removed. Only this
    user's directories with an owner file are touched."""
    tmp = tmp or Path(tempfile.gettempdir())
    removed = []
    for directory in sorted(tmp.glob(PRIVATE_PREFIX + "*")):
        try:
            if directory.is_symlink() or not directory.is_dir() or directory.stat().st_uid != os.geteuid():
                continue
        except OSError:
            continue
        fd = _take_owner_lock(directory, create=False)
        if fd is None:
            continue
        try:
            kill_processes_naming(str(directory))
            shutil.rmtree(directory, ignore_errors=True)
        finally:
            os.close(fd)
        removed.append(directory)
    return removed


class AnsibleSession:
    """A private data directory and the ansible-runner invocations in it."""

    def __init__(self, forks: int, out: IO[str] | None = None) -> None:
        self.forks = forks
        self.inventory: Path | None = None  # the copy Ansible reads (take_inventory)
        self.sources: list[Path] = []  # inventory sources Ansible reads after it (local_python)
        for gone in remove_abandoned():
            (out or sys.stderr).write(f"osmeter: removed {gone}, left by a fleet run that was killed\n")
        self.private = Path(tempfile.mkdtemp(prefix=PRIVATE_PREFIX)).absolute()
        self._owner = _take_owner_lock(self.private, create=True)
        self.cancelled: int | None = None  # the signal that asked to stop
        self._count = 0
        try:
            import ansible_runner  # noqa: F401, PLC0415  (checked now: before any host is touched)
        except ImportError:
            self.close()
            raise MissingDependencyError(f"ansible-runner is not installed: {INSTALL_HINT}") from None

    def __enter__(self) -> "AnsibleSession":
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def stop_processes(self) -> None:
        """Stop what the earlier steps left running: ansible-playbook, its
        workers, ssh and the SSH masters (they name the private directory)."""
        kill_processes_naming(str(self.private))

    def close(self) -> None:
        self.stop_processes()
        shutil.rmtree(self.private, ignore_errors=True)
        if self._owner is not None:
            os.close(self._owner)
            self._owner = None

    def take_inventory(self, path: Path) -> Path:
        """The inventory at `path` (relative to the current directory), copied
        within bounds into the private directory: what Ansible reads from now on."""
        self.inventory = copy_inventory(path, self.private / "inventory")
        return self.inventory

    def local_python(self, hosts: Sequence[str]) -> dict[str, dict[str, str]]:
        """Those of `hosts` that Ansible reaches by its local connection with
        no ansible_python_interpreter get the Python that runs osmeter
        (osmeter.fleet.inventory.local_interpreters), in a second inventory
        source; the variables added, by host."""
        if self.inventory is None:
            raise RuntimeError("AnsibleSession.local_python before take_inventory")
        wanted = set(hosts)
        added = {h: v for h, v in local_interpreters(host_vars(self.inventory)).items() if h in wanted}
        self.sources = [vars_source(added, self.private / "osmeter-vars.yml")] if added else []
        return added

    def directory(self, name: str) -> Path:
        path = self.private / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def output_tail(self, chars: int = 800) -> str:
        """The end of what Ansible printed in the last step (its artifacts'
        stdout): the reason when a step failed before any host was reached."""
        path = self.private / "artifacts" / f"step{self._count}" / "stdout"
        try:
            text = path.read_text(errors="replace")
        except OSError:
            return ""
        return inventory_message(text) if "[ERROR]" in text or "[WARNING]" in text else text.strip()[-chars:]

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.cancelled = signum

    def run(self, handler: Callable[[dict[str, Any]], Any], limit: list[str], task_timeout: int | None = None,
            **kwargs: Any) -> str:
        """ansible-runner's run() on the hosts `limit` (a --limit file, so no
        host name is read as a pattern); `handler` gets every event;
        task_timeout bounds each task without a `timeout` of its own.
        Returns ansible-runner's status; raises KeyboardInterrupt (or
        Terminated) if a signal asked to stop."""
        import ansible_runner  # noqa: PLC0415

        if self.inventory is None:
            raise RuntimeError("AnsibleSession.run before take_inventory")
        self._count += 1
        limit_file = self.private / f"limit.{self._count}"
        limit_file.write_text("".join(h + "\n" for h in limit))
        previous = {s: signal.signal(s, self._on_signal) for s in SIGNALS}
        try:
            result = ansible_runner.run(
                private_data_dir=str(self.private), ident=f"step{self._count}",
                inventory=[str(p) for p in (self.inventory, *self.sources)] if self.sources else str(self.inventory),
                limit=f"@{limit_file}", forks=self.forks, quiet=True, event_handler=lambda e: handler(e) or True,
                cancel_callback=lambda: self.cancelled is not None,
                envvars=ansible_env(self.private, task_timeout=task_timeout),
                settings={"pexpect_timeout": CANCEL_POLL_S, "suppress_ansible_output": True}, **kwargs)
        finally:
            for s, h in previous.items():
                signal.signal(s, h)
        if self.cancelled is not None:
            if self.cancelled == signal.SIGINT:
                raise KeyboardInterrupt
            raise Terminated(self.cancelled)
        return str(result.status)

"""A kernels group's id and the state kept for `--resume` (as a fleet run's:
osmeter.fleet.state).

The id is `kernels-YYYYmmddTHHMMSSZ-xxxx`; it is stored in each run's `fleet`
column, so `compare --by kernel --fleet ID` and `report --fleet ID` take the
group as they take a fleet run. The state lives in
$XDG_STATE_HOME/osmeter/kernels/<id>/state.json: the kernels as given, what
the guests run, the VM, the store, and per kernel its last outcome; a
failed kernel's console log is kept beside it (<id>/<n>.console.log). The
store decides what is done: a kernel is done when the store holds a complete
run of this group with the kernel's host name (its release; `RELEASE#N`,
N its place in the list, when an earlier kernel of the group has the same
release: a rebuilt kernel). One attempt at a
time: an attempt holds an exclusive flock on <id>/lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator, Mapping

from ..errors import UsageError
from ..fleet import state as fleet_state
from ..store.base import Store

STATE_FILE = "state.json"
ID_PATTERN = re.compile(r"kernels-\d{8}T\d{6}Z-[0-9a-f]{4}")
LATEST = "latest"


def new_id(now: datetime | None = None) -> str:
    return fleet_state.new_id(now, prefix="kernels")


def state_root(env: Mapping[str, str] = os.environ) -> Path:
    return fleet_state.state_root(env, kind="kernels")


@dataclass
class KernelOutcome:
    status: str = "pending"  # pending / stored / failed
    release: str | None = None
    host: str | None = None  # the run's host name in the group (host_name)
    reason: str | None = None
    run_id: int | None = None
    console_log: str | None = None  # kept for a failed kernel


@dataclass
class GroupState:
    id: str
    created: str
    kernels: list[str]  # the --kernel values, in order
    commands: list[list[str]]  # the plan: the probe commands each guest runs
    probe_options: dict[str, Any]
    machine: dict[str, Any]  # accel, cpus, memory_mib, append, pin
    timeout: float
    store: str
    label: str | None = None
    outcomes: dict[str, KernelOutcome] = field(default_factory=dict)  # by --kernel value
    attempts: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "GroupState":
        outcomes = {k: KernelOutcome(**v) for k, v in doc.get("outcomes", {}).items()}
        keys = ("id", "created", "kernels", "commands", "probe_options", "machine", "timeout", "store", "label",
                "attempts")
        return cls(**{k: doc[k] for k in keys if k in doc}, outcomes=outcomes)

    def directory(self, root: Path | None = None) -> Path:
        return (root or state_root()) / self.id


def save(state: GroupState, root: Path | None = None) -> Path:
    return fleet_state.write_state(state.to_json(), state.directory(root))


def load(ref: str, root: Path | None = None) -> GroupState:
    """The state of group `ref` (an id, or `latest`); UsageError if there is none."""
    root = root or state_root()
    ref, doc = fleet_state.read_state(ref, root, ID_PATTERN, "kernels group")
    try:
        return GroupState.from_json(doc)
    except (KeyError, TypeError) as e:
        raise UsageError(f"--resume {ref}: cannot read {root / ref / STATE_FILE}: {e}") from None


def done_kernels(store: Store, state: GroupState) -> dict[str, int]:
    """--kernel value -> its complete run in the store (by the host name the last attempt gave it)."""
    complete = {r.host: r.id for r in store.fleet_runs(state.id) if r.status == "complete" and r.host}
    return {k: complete[o.host] for k, o in state.outcomes.items() if o.host in complete}


def host_name(state: GroupState, kernel: str, release: str) -> str:
    """The run's host for `kernel`: its release, or RELEASE#N when a kernel before it in the
    list has the same release (two builds of one release stay two runs of the group)."""
    index = state.kernels.index(kernel) if kernel in state.kernels else len(state.kernels)
    earlier = [state.outcomes[k].release for k in state.kernels[:index] if k in state.outcomes]
    return release if release not in earlier else f"{release}#{index + 1}"


@contextlib.contextmanager
def locked(state: GroupState, root: Path | None = None) -> Iterator[None]:
    """Hold the group's lock for the block; UsageError at once when another attempt holds it."""
    directory = state.directory(root)
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = os.pread(fd, 40, 0).decode(errors="replace").strip() or "(unknown)"
            raise UsageError(f"kernels group {state.id} is being run by pid {pid}; wait for it to end "
                             "(one attempt of a group at a time)") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)

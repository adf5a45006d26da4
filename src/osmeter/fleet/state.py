"""A fleet run's id and the state kept for `--resume`.

The id is `fleet-YYYYmmddTHHMMSSZ-xxxx` (UTC start time, four random hex
digits), so ids sort by time. The state lives in
$XDG_STATE_HOME/osmeter/fleet/<id>/state.json (default ~/.local/state):
the inventory, host pattern, suite, the options given to the probe, the
store and, per host, its last outcome and any remote temporary directory
that could not be removed (an unreachable host), which the next attempt
removes first. The store, not this file, decides what is done: a host is
done when the store has a complete run with this fleet id and its name.

One attempt at a time: an attempt holds an exclusive lock (flock) on the
`lock` file of the fleet run's state directory, with its pid in it; a
second attempt (two `--resume` at once, or one while the first attempt
runs) is refused, naming that pid. The lock goes with its process, a
killed one included.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from ..errors import UsageError
from ..store.base import Store

STATE_FILE = "state.json"
LOCK_FILE = "lock"
ID_PATTERN = re.compile(r"fleet-\d{8}T\d{6}Z-[0-9a-f]{4}")
LATEST = "latest"


def new_id(now: datetime | None = None, prefix: str = "fleet") -> str:
    """`PREFIX-YYYYmmddTHHMMSSZ-xxxx` (a kernels group's prefix is `kernels`)."""
    now = now or datetime.now(timezone.utc)
    return f"{prefix}-{now.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(2)}"


def state_root(env: Mapping[str, str] = os.environ, kind: str = "fleet") -> Path:
    base = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "state")
    return Path(base) / "osmeter" / kind


@dataclass
class HostState:
    status: str = "pending"  # pending / stored / failed
    reason: str | None = None  # why it failed
    run_id: int | None = None  # the stored run
    arch: str | None = None
    leftovers: list[str] = field(default_factory=list)  # remote temporary directories still to remove


@dataclass
class FleetState:
    id: str
    created: str
    inventory: str  # absolute path
    limit: str  # the host pattern
    suite: str
    probe_options: dict[str, Any]  # what decides the measurement: params, time budget, repetitions
    store: str  # the store location, without a password
    hosts: dict[str, HostState] = field(default_factory=dict)
    attempts: int = 0
    label: str | None = None  # --label: every run of the fleet run gets it

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "FleetState":
        hosts = {name: HostState(**h) for name, h in doc.get("hosts", {}).items()}
        fields = {k: doc[k] for k in ("id", "created", "inventory", "limit", "suite", "probe_options", "store")}
        return cls(**fields, hosts=hosts, attempts=int(doc.get("attempts", 0)), label=doc.get("label"))


def save(state: FleetState, root: Path | None = None) -> Path:
    """Write the state atomically (a temporary file renamed over the old one)."""
    return write_state(state.to_json(), (root or state_root()) / state.id)


def write_state(doc: Mapping[str, Any], directory: Path) -> Path:
    """`doc` as directory/state.json, atomically (a temporary file renamed over the old one)."""
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".state.", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, directory / STATE_FILE)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return directory / STATE_FILE


@contextlib.contextmanager
def locked(fleet_id: str, resuming: bool, root: Path | None = None) -> Iterator[None]:
    """Hold fleet run `fleet_id`'s lock for the block; UsageError at once
    (naming the holder's pid) when another attempt holds it."""
    directory = (root or state_root()) / fleet_id
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid, _, how = os.pread(fd, 200, 0).decode(errors="replace").strip().partition(" ")
            doing = "resumed" if how == "resume" else "run"
            raise UsageError(f"fleet {fleet_id} is being {doing} by pid {pid or '(unknown)'}; wait for it to end "
                             "(one attempt of a fleet run at a time)") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {'resume' if resuming else 'run'}\n".encode(), 0)
        try:
            yield
        finally:
            if not (directory / STATE_FILE).exists():  # a first attempt refused before it saved anything
                with contextlib.suppress(OSError):
                    (directory / LOCK_FILE).unlink()
                    directory.rmdir()
    finally:
        os.close(fd)


def known_ids(root: Path | None = None, pattern: re.Pattern[str] = ID_PATTERN) -> list[str]:
    """Ids (of fleet runs, or `pattern`'s) with a state file, oldest first."""
    root = root or state_root()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if pattern.fullmatch(p.name) and (p / STATE_FILE).is_file())


def load(ref: str, root: Path | None = None) -> FleetState:
    """The state of fleet run `ref` (an id, or `latest`); UsageError if there is none."""
    root = root or state_root()
    ref, doc = read_state(ref, root, ID_PATTERN, "fleet run")
    try:
        return FleetState.from_json(doc)
    except (KeyError, TypeError) as e:
        raise UsageError(f"--resume {ref}: cannot read {root / ref / STATE_FILE}: {e}") from None


def read_state(ref: str, root: Path, pattern: re.Pattern[str], what: str) -> tuple[str, Mapping[str, Any]]:
    """The id `ref` names (an id, or `latest`) under `root` and its state document (a fleet run's,
    or a kernels group's: `what` names it); UsageError when there is none or it cannot be read."""
    ids = known_ids(root, pattern)
    if ref == LATEST:
        if not ids:
            raise UsageError(f"--resume: no {what} to resume (none in {root}); start one without --resume")
        ref = ids[-1]
    if ref not in ids:
        shown = ", ".join(reversed(ids[-5:])) or "none"
        raise UsageError(f"--resume {ref}: no such {what} in {root} (the latest: {shown})")
    path = root / ref / STATE_FILE
    try:
        doc = json.loads(path.read_text())
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        return ref, doc
    except (OSError, ValueError) as e:
        raise UsageError(f"--resume {ref}: cannot read {path}: {e}") from None


def complete_hosts(store: Store, fleet_id: str) -> dict[str, int]:
    """Host name -> the id of its complete run in fleet `fleet_id` (the latest if several)."""
    done: dict[str, int] = {}
    for run in store.runs():
        if run.fleet == fleet_id and run.host is not None and run.status == "complete":
            done[run.host] = max(run.id, done.get(run.host, 0))
    return done


def hosts_to_run(hosts: Iterable[str], done: Mapping[str, int]) -> list[str]:
    """The hosts of the inventory with no complete run in the store yet, in inventory order."""
    return [h for h in hosts if h not in done]


def refuse_changes(state: FleetState, suite: str | None, probe_options: Mapping[str, Any],
                   given: Iterable[str]) -> None:
    """--resume measures what the fleet run measured: a different --suite or
    probe option (--param, the time budget, --repeat) given now is refused."""
    if suite is not None and suite != state.suite:
        raise UsageError(f"--resume {state.id}: that fleet run measures --suite {state.suite}, not {suite}; "
                         "leave --suite out, or start a new fleet run without --resume")
    for key in given:
        if probe_options.get(key) != state.probe_options.get(key):
            option = "--param" if key == "params" else "--" + key.replace("_", "-")
            raise UsageError(f"--resume {state.id}: that fleet run was started with {option} "
                             f"{_shown(state.probe_options.get(key))}, not {_shown(probe_options.get(key))}; "
                             "leave it out to resume with the same, or start a new fleet run without --resume")


def _shown(value: Any) -> str:
    if value is None:
        return "(not given)"
    if isinstance(value, (list, tuple)):
        return " ".join(map(str, value)) or "(none)"
    return str(value)

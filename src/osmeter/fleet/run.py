"""`osmeter fleet run`: the steps, from the hosts of an inventory to their
runs in the store (docs/fleet.md).

1. The hosts the inventory's pattern gives; on --resume only those with no
   complete run of this fleet id in the store.
2. Each host's architecture (Ansible's facts) and the static probe for it
   (osmeter.fleet.probes); a host without one fails, the others go on.
3. The playbook (osmeter.fleet.plays) on those hosts, `--forks` at a time;
   each host's output is imported as soon as it is fetched, as one run of
   R repetitions with its host name and the fleet id (osmeter import's
   machinery: read_probe_file, store_probe_file, RunRecorder).
4. The state file is written after every change, so an interrupted fleet run
   can be resumed, and a remote directory that could not be removed is
   removed by the next attempt.

Each host has a time limit (--host-timeout; by default default_host_timeout
of the suite's budget): past it, the host fails ("timed out") and the
others go on. Ansible's facts have FACTS_TIMEOUT_S at most.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Sequence

from .. import textsafe
from ..errors import ProbeError
from ..ingest import read_probe_file, refuse_cut_short, store_files
from ..probe import PROBE_NAME
from ..recorder import RunContext
from ..runner import RunOptions
from ..store.base import Store
from . import plays
from . import state as fleet_state
from .ansible import AnsibleSession
from .events import ArchStep, RunStep
from .probes import HELPER_NAME, ProbeFinder, ProbeSet, arch_of

CLEANUP_TIMEOUT_S = 60
FACTS_TIMEOUT_S = 120  # Ansible's facts of a host (step 1), at most
# The default per-host time limit: per repetition, per benchmark instance twice its
# longest sampling time and 2 s of set-up (processes, files, peers, calibration), then
# HOST_MARGIN_S for Ansible's steps (connecting, copying the probe, fetching the output).
PER_INSTANCE_S = 2.0
HOST_MARGIN_S = 600.0
FALLBACK_HOST_TIMEOUT_S = 4 * 3600.0  # when no probe here can tell the suite's size


def default_host_timeout(max_time_s: float | None, instances: int | None, repetitions: int) -> float:
    """The per-host time limit for a suite of `instances` benchmark instances
    of at most `max_time_s` of sampling each, run `repetitions` times
    (None: unknown, FALLBACK_HOST_TIMEOUT_S)."""
    if max_time_s is None or instances is None:
        return FALLBACK_HOST_TIMEOUT_S
    per_repetition = instances * (2 * max_time_s + PER_INSTANCE_S)
    return round(HOST_MARGIN_S + repetitions * per_repetition)


@dataclass
class FleetRun:
    """One attempt of a fleet run: its state, the store and what is sent."""

    st: fleet_state.FleetState
    store: Store
    opts: RunOptions
    probe_args: list[str]  # after the probe's path: run --die-with-parent --suite S ...
    finder: ProbeFinder
    label: str | None = None
    host_timeout: float = FALLBACK_HOST_TIMEOUT_S  # seconds each host may take (step 3)
    out: IO[str] = field(default_factory=lambda: sys.stderr)
    state_root: Path | None = None
    sets: dict[str, ProbeSet] = field(default_factory=dict)  # host -> what it gets
    made: dict[str, str] = field(default_factory=dict)  # host -> its remote directory, until removed
    fetch_dirs: dict[str, Path] = field(default_factory=dict)

    def save(self) -> None:
        fleet_state.save(self.st, self.state_root)

    def set_outcome(self, host: str, status: str, reason: str | None = None, run_id: int | None = None) -> None:
        h = self.st.hosts.setdefault(host, fleet_state.HostState())
        h.status, h.reason, h.run_id = status, reason, run_id
        self.save()

    # -- step 2: architectures and probes -------------------------------------------------------------

    def choose_probes(self, arches: dict[str, str], failed: dict[str, str]) -> list[str]:
        """The hosts that have a probe to get; the others are marked failed."""
        ready = []
        for host, reason in failed.items():
            self.set_outcome(host, "failed", reason)
        for host, uname in arches.items():
            try:
                arch = arch_of(uname)
                self.sets[host] = self.finder.probe_for(arch)
            except ProbeError as e:
                self.set_outcome(host, "failed", e.message)
                self.out.write(f"  {textsafe.line(host)}: failed: {textsafe.line(e.message)}\n")
                continue
            self.st.hosts.setdefault(host, fleet_state.HostState()).arch = arch.name
            ready.append(host)
        self.save()
        return ready

    # -- step 3: the playbook -------------------------------------------------------------------------

    def extravars(self, session: AnsibleSession, hosts: Sequence[str]) -> dict[str, Any]:
        head, tail = plays.run_command(self.probe_args, self.opts.repetitions)
        plan = {}
        for i, host in enumerate(hosts):
            fetch = session.directory(f"fetched/{i}")
            self.fetch_dirs[host] = fetch
            s = self.sets[host]
            files = [{"src": plays.b64(str(s.probe)), "name": PROBE_NAME}]
            if s.helper is not None:
                files.append({"src": plays.b64(str(s.helper)), "name": HELPER_NAME})
            plan[host] = {"files": files, "fetch_dir": plays.b64(str(fetch)),
                          "leftovers": [plays.b64(p) for p in self.st.hosts[host].leftovers]}
        return {"osmeter_plan": plan, "osmeter_head": plays.b64(head), "osmeter_tail": plays.b64(tail),
                "osmeter_prefix": plays.b64(f"osmeter-{self.st.id}."),
                "osmeter_reps": plays.rep_files(self.opts.repetitions), "osmeter_deadline": self.host_timeout}

    def on_made(self, host: str, path: str) -> None:
        self.made[host] = path
        h = self.st.hosts[host]
        h.leftovers = [path]  # what an earlier attempt left is gone (removed before this was made)
        self.save()

    def on_removed(self, host: str) -> None:
        self.made.pop(host, None)
        self.st.hosts[host].leftovers = []
        self.save()

    def on_fetched(self, host: str) -> str:
        """Import the host's files as one run; the progress line to show."""
        files = [read_probe_file(self.fetch_dirs[host] / name) for name in plays.rep_files(self.opts.repetitions)]
        context = RunContext(
            label=self.label,
            argv=[PROBE_NAME, *self.probe_args],
            params={**asdict(self.opts), "repeat": self.opts.repetitions,
                    "fleet": {"id": self.st.id, "inventory": self.st.inventory, "host": host,
                              "arch": self.sets[host].arch.name, "probe": self.sets[host].origin}},
            source="import",
            host=host,
            fleet=self.st.id,
        )
        refuse_cut_short(files, allow_incomplete=False)
        stored = store_files(self.store, context, files)
        run_id, counts = stored.recorder.run_id, stored.counts
        self.set_outcome(host, "stored", None, run_id)
        gaps = stored.recorder.profile_note() if self.opts.profile else None
        return (f"stored run {run_id} ({stored.status}: {counts['ok']} ok, {counts['skip']} skipped, "
                f"{counts['error']} failed)" + (f"; --profile: {gaps}" if gaps else ""))

    def run_playbook(self, session: AnsibleSession, hosts: list[str]) -> RunStep:
        budget = f", {self.opts.repetitions} repetitions" if self.opts.repetitions > 1 else ""
        step = RunStep(arch_of=lambda h: self.sets[h].arch.name, running=f"running --suite {self.st.suite}{budget}",
                       made=self.on_made, fetched=self.on_fetched, removed=self.on_removed, out=self.out,
                       host_timeout=self.host_timeout)
        try:
            status = session.run(step, hosts, playbook=plays.playbook(), extravars=self.extravars(session, hosts))
        finally:
            for host, reason in step.failed.items():
                if self.st.hosts[host].status != "stored":
                    self.set_outcome(host, "failed", reason)
        for host in hosts:
            if host not in step.done and host not in step.failed:
                reason = (f"the playbook ended ({status}) before this host's output was fetched: "
                          f"{session.output_tail() or 'no message'}")
                step.fail(host, reason)
                self.set_outcome(host, "failed", reason)
        return step

    def remove_leftovers(self, session: AnsibleSession) -> None:
        """After an interruption: remove the remote directories still there, best effort
        (a host that cannot be reached keeps its directory in the state, for --resume).
        The interrupted step's connections are closed first: an SSH master
        that outlived its ansible-playbook could still start the run script."""
        hosts = [h for h in self.made if h in self.sets]
        if not hosts:
            return
        session.stop_processes()
        self.out.write(f"osmeter: removing the temporary directories on {len(hosts)} host(s)\n")
        plan = {h: {"leftovers": [plays.b64(p) for p in self.st.hosts[h].leftovers]} for h in hosts}
        session.cancelled = None
        cleaned: list[str] = []

        def handler(event: dict[str, Any]) -> None:
            data = event.get("event_data") or {}
            if event.get("event") == "runner_on_ok" and data.get("host"):
                cleaned.append(data["host"])

        try:
            session.run(handler, hosts, playbook=plays.cleanup_playbook(), extravars={"osmeter_plan": plan},
                        timeout=CLEANUP_TIMEOUT_S)
        finally:
            for host in cleaned:
                self.on_removed(host)

    # -- the whole attempt ----------------------------------------------------------------------------

    def execute(self, session: AnsibleSession, hosts: list[str]) -> None:
        """Steps 1 to 3 on `hosts` (the session has the inventory); outcomes land in the state."""
        try:
            arch_step = ArchStep(out=self.out)
            session.run(arch_step, hosts, module="setup", module_args=plays.FACTS, host_pattern="all",
                        task_timeout=round(min(FACTS_TIMEOUT_S, self.host_timeout)))
            for host in hosts:
                if host not in arch_step.arches and host not in arch_step.failed:
                    arch_step.failed[host] = f"Ansible gave no facts for it: {session.output_tail() or 'no message'}"
            ready = self.choose_probes({h: arch_step.arches[h] for h in hosts if h in arch_step.arches},
                                       arch_step.failed)
            if ready:
                self.run_playbook(session, ready)
        except KeyboardInterrupt:
            self._interrupted(session)
            raise

    def _interrupted(self, session: AnsibleSession) -> None:
        for host, h in self.st.hosts.items():
            if h.status == "pending":
                h.status, h.reason = "failed", "interrupted"
        self.save()
        try:
            self.remove_leftovers(session)
        except KeyboardInterrupt:
            pass

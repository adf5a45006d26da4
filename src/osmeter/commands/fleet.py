"""osmeter fleet run: the probe on every host of an Ansible inventory, the
results in one store (docs/fleet.md; the steps: osmeter.fleet.run).

Everything that can be checked here is checked before a host is touched:
no other attempt of the fleet run is under way (its state's lock), the
inventory (copied within bounds: Ansible reads the copy) parses and the
pattern matches hosts (Ansible's own words otherwise), the suite and
parameters are ones the probe accepts (the installed probe checks them and
is stopped once it has; its first records tell the suite's size, for the
default --host-timeout), the store opens, and on --resume the fleet run
exists and nothing it measures is changed.

Paths given on the command line (the inventory, --probe, --store) are read
here, relative to the current directory: Ansible runs elsewhere and gets
only copies in the private directory, by absolute path.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .. import textsafe
from ..errors import EXIT_BENCH_ERRORS, EXIT_OK, HostsFailed, ProbeError, UsageError
from ..fleet import state as fleet_state
from ..fleet.ansible import AnsibleSession, list_hosts
from ..fleet.probes import ARCH_NAMES, ProbeFinder, arch_named
from ..fleet.run import FleetRun, default_host_timeout
from ..probe import PROBE_USAGE_EXIT, ProbeProcess, locate_probe, probe_message
from ..runner import SUITES, RunOptions, probe_argv
from ..store import ENV_STORE, describe, open_store, resolve_location
from ..store.base import Store
from ..store.urls import scheme_without_slashes
from .options import add_budget_options, add_store_option, positive_float, positive_int
from .run import param_assignment

NAME = "fleet"
DEFAULT_FORKS = 5
# The options that decide what is measured: kept in the state, the same on --resume.
PROBE_OPTIONS = ("params", "min_time", "max_time", "min_samples", "max_samples", "target_rse", "repeat", "profile")


def probe_choice(text: str) -> tuple[str, Path]:
    """argparse type for --probe ARCH=PATH."""
    arch, sep, path = text.partition("=")
    if not sep or not path or arch not in ARCH_NAMES:
        raise argparse.ArgumentTypeError(f"{text!r} is not ARCH=PATH with ARCH one of {', '.join(ARCH_NAMES)}")
    return arch, Path(os.path.abspath(Path(path).expanduser()))  # relative to here, not to Ansible's directory


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(NAME, help="run the probe on many hosts through Ansible",
                       description="Run benchmarks on the hosts of an Ansible inventory (docs/fleet.md).")
    fleet_sub = p.add_subparsers(dest="fleet_command", metavar="SUBCOMMAND", required=True)
    r = fleet_sub.add_parser("run", help="run a suite on every host and store one run per host",
                             description="Copy the static probe of each host's architecture to it, run a suite "
                             "there, fetch the output and store it as a run with the host's name and the fleet "
                             "run's id. Hosts run in parallel; a failed host is reported and the others go on.")
    r.add_argument("inventory", metavar="INVENTORY", help="an Ansible inventory (INI or YAML file, or directory)")
    r.add_argument("--suite", choices=SUITES, help="the suite to run on every host (on --resume: the fleet run's)")
    r.add_argument("--param", action="append", default=[], type=param_assignment, metavar="KEY=VALUE",
                   help="a parameter, as for `osmeter run`")
    r.add_argument("--limit", metavar="PATTERN",
                   help="an Ansible host pattern (default: all; on --resume: the fleet run's)")
    r.add_argument("--forks", type=positive_int, default=DEFAULT_FORKS, metavar="N",
                   help=f"hosts at a time (default {DEFAULT_FORKS})")
    r.add_argument("--resume", nargs="?", const=fleet_state.LATEST, metavar="FLEET_ID",
                   help="run only the hosts with no complete run in fleet run FLEET_ID (default: the latest)")
    add_budget_options(r, "host")
    r.add_argument("--profile", action="store_const", const=True, default=None,
                   help="also sample each benchmark's timed region and store the profile with its result, "
                   "as `osmeter run --profile` (for compare --explain); a host where sampling is impossible "
                   "runs without and says why")
    r.add_argument("--probe", action="append", default=[], type=probe_choice, metavar="ARCH=PATH",
                   help=f"a static probe of one's own for ARCH ({', '.join(ARCH_NAMES)}) instead of the "
                   "installed or cross-built one; osmeter-exec-helper beside it goes along")
    r.add_argument("--label", help="a label for every run of this fleet run (set by its first attempt: "
                   "--resume keeps it and refuses another)")
    r.add_argument("--host-timeout", type=positive_float, metavar="S",
                   help="seconds each host may take, from its first step to its output fetched; a host "
                   "past it fails (timed out) and the others go on (default: from the suite's size and time "
                   "budget, with a margin; docs/fleet.md)")
    add_store_option(r)
    return p


def _options(args: argparse.Namespace, suite: str, given: dict[str, Any]) -> RunOptions:
    return RunOptions(names=(), suite=suite, params=tuple(given.get("params") or ()), cpu=None, label=args.label,
                      min_time=given.get("min_time"), max_time=given.get("max_time"),
                      min_samples=given.get("min_samples"), fifo=None, mlock=False, clock=None,
                      max_samples=given.get("max_samples"), target_rse=given.get("target_rse"),
                      repeat=given.get("repeat"), profile=bool(given.get("profile")))


def check_probe_arguments(argv: list[str]) -> tuple[float | None, int | None]:
    """The installed probe checks the suite and parameters (it refuses bad
    input before it writes anything); it is stopped once its `meta` shows it
    accepted them and its first `progress` how many instances the suite has.
    Returns (the longest sampling time of an instance, the instances), each
    None when unknown. Without an installed probe the hosts' probes check them."""
    try:
        probe = locate_probe()
    except ProbeError:
        return None, None
    records: list[dict[str, Any]] = []
    with ProbeProcess.start([str(probe), *argv]) as proc:
        for line in proc.lines():
            try:
                records.append(json.loads(line.text))
            except ValueError:
                break
            if len(records) == 2:
                break  # `meta`: accepted; `progress`: the first of `total` instances
        proc.terminate()
        returncode = proc.close()
        if returncode == PROBE_USAGE_EXIT:
            raise UsageError(probe_message(proc.stderr_text()) or "osmeter-probe rejected the arguments")
    meta, progress = (records + [{}, {}])[:2]
    max_time = (meta.get("budget") or {}).get("max_time_s") if isinstance(meta, dict) else None
    total = progress.get("total") if isinstance(progress, dict) else None
    return (float(max_time) if isinstance(max_time, (int, float)) else None,
            total if isinstance(total, int) else None)


def _prepare(args: argparse.Namespace) -> tuple[fleet_state.FleetState, RunOptions, str]:
    """The fleet run's state, the probe's options, and the store's location."""
    location = resolve_location(args.store)
    explicit = args.store is not None or bool(os.environ.get(ENV_STORE))
    given = {k: getattr(args, "param" if k == "params" else k) for k in PROBE_OPTIONS}
    given["params"] = list(given["params"])
    named = [k for k in PROBE_OPTIONS if given[k] not in (None, [])]
    if args.resume is not None:
        st = fleet_state.load(args.resume)
        fleet_state.refuse_changes(st, args.suite, given, named)
        if args.label is not None and st.label is None:  # every run of a fleet run has its first attempt's label
            raise UsageError(f"--resume {st.id}: that fleet run's runs have no label (it was started without "
                             f"--label), not {args.label!r}; a fleet run's label is set by its first attempt: "
                             "leave --label out")
        for what, kept, now in (("stores its runs in", st.store, kept_store(location) if explicit else None),
                                ("was started with --limit", st.limit, args.limit),
                                ("labels its runs", st.label, args.label)):
            if now is not None and now != kept:
                raise UsageError(f"--resume {st.id}: that fleet run {what} {kept}, not {now}; leave the option "
                                 "out to keep the fleet run's")
        args.limit, args.label = st.limit, st.label
        opts = _options(args, st.suite, {**st.probe_options, "params": st.probe_options.get("params") or []})
        return st, opts, location if explicit else st.store
    if args.suite is None:
        raise UsageError("fleet run needs --suite (quick, standard, full or lebench), or --resume")
    args.limit = args.limit or "all"
    opts = _options(args, args.suite, given)
    st = fleet_state.FleetState(
        id=fleet_state.new_id(), created=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        inventory=str(Path(args.inventory).resolve()), limit=args.limit, suite=args.suite,
        probe_options={k: given[k] for k in PROBE_OPTIONS}, store=kept_store(location), label=args.label)
    return st, opts, location


def kept_store(location: str) -> str:
    """The store as the fleet state keeps it: an SQLite file by its absolute
    path (a --resume from another directory finds the same file), a URL
    without its password."""
    if "://" in location or scheme_without_slashes(location):
        return describe(location)
    return str(Path(location).expanduser().resolve())


def _summary(st: fleet_state.FleetState, hosts: list[str], done_before: dict[str, int], store: Store) -> int:
    failed = [h for h in hosts if st.hosts.get(h) is not None and st.hosts[h].status == "failed"]
    stored = [h for h in hosts if h not in failed]
    print(f"fleet {st.id}: {len(stored)} of {len(hosts)} host(s) stored, {len(failed)} failed")
    errors = 0
    for host in hosts:
        h = st.hosts.get(host) or fleet_state.HostState()
        if host in failed:
            print(f"  {textsafe.line(host)}: failed: {textsafe.line(h.reason or 'no reason given')}")
            continue
        run_id = h.run_id if host not in done_before else done_before[host]
        earlier = " (stored by an earlier attempt)" if host in done_before else ""
        print(f"  {textsafe.line(host)}: run {run_id}{earlier}")
        if run_id is not None:
            errors += sum(1 for r in store.results(run_id) if r.status == "error")
    sys.stdout.flush()
    if failed:
        raise HostsFailed(f"fleet {st.id}: {len(failed)} host(s) failed: {', '.join(map(textsafe.line, failed))}; "
                          f"`osmeter fleet run {st.inventory} --resume {st.id}` runs them again")
    return EXIT_BENCH_ERRORS if errors else EXIT_OK


def run(args: argparse.Namespace) -> int:
    st, opts, location = _prepare(args)
    resuming = args.resume is not None
    with fleet_state.locked(st.id, resuming):
        if resuming:
            st = fleet_state.load(st.id)  # as the last attempt left it, now that none other runs
        with AnsibleSession(args.forks) as session:
            return _attempt(args, st, opts, location, session)


def _attempt(args: argparse.Namespace, st: fleet_state.FleetState, opts: RunOptions, location: str,
             session: AnsibleSession) -> int:
    inventory = Path(args.inventory)
    if args.resume is not None and str(inventory.resolve()) != st.inventory:
        textsafe.say("note", f"fleet {st.id} was started with the inventory {st.inventory}; its hosts are "
                     f"taken from {inventory} now")
    hosts = list_hosts(session.take_inventory(inventory), args.limit, shown=inventory)
    session.local_python(hosts)  # `localhost ansible_connection=local`: this Python, not a shim Ansible finds
    probe_args = probe_argv(Path("osmeter-probe"), opts)[1:] + ["--quiet"]
    max_time, instances = check_probe_arguments(probe_args)
    host_timeout = args.host_timeout or default_host_timeout(max_time, instances, opts.repetitions)
    given = {arch_named(a).name: p for a, p in args.probe}
    store = open_store(location, create=True)
    try:
        done = fleet_state.complete_hosts(store, st.id) if args.resume is not None else {}
        todo = fleet_state.hosts_to_run(hosts, done)
        print(f"fleet {st.id}: {len(todo)} host(s) to run" + (f", {len(done)} stored before" if done else "")
              + f"; each within {host_timeout:g} s (--host-timeout)", file=sys.stderr, flush=True)
        st.attempts += 1
        for host in todo:
            st.hosts.setdefault(host, fleet_state.HostState()).status = "pending"
        finder = ProbeFinder(given, os.environ, staging=session.directory("probes"))
        fleet = FleetRun(st, store, opts, probe_args, finder, label=args.label, host_timeout=host_timeout)
        fleet.save()
        if todo:
            fleet.execute(session, todo)
        return _summary(st, hosts, {h: done[h] for h in hosts if h in done}, store)
    finally:
        store.close()
        print(f"fleet {st.id}: state in {fleet_state.state_root() / st.id}", file=sys.stderr, flush=True)

"""`osmeter kernels run`: each kernel booted in a VM with the probe as init,
its output stored as one run of the group (docs/kernels.md).

Per kernel, in the order given:

1. the image (osmeter.kernels.images: a path, an installed release, a
   Debian package downloaded and unpacked into the cache);
2. the initramfs (osmeter.kernels.initramfs): the static probe as /init and
   the plan, R `run` commands (the repetitions, as `osmeter run --repeat R`);
3. the boot (osmeter.kernels.qemu) within the kernel's time limit;
4. the channel decoded (osmeter.kernels.channel); every repetition's
   output imported as one run (osmeter import's checks: ingest), with the
   kernel's release as the run's host (state.host_name) and the group id as its fleet. Under
   TCG every result is flagged `emulated`. The guest's machine description
   (the probe's, inside the VM) gets `vm_accel` and, when the image's config
   is known, `kernel_config_sha256`; the host's own description, the qemu
   command line and the image go into the run's parameters (`kernels`).

A kernel that fails (cannot be had, qemu cannot start, panics, hangs, the
probe fails inside) is reported with why and the console's last lines;
its console log is kept in the group's state directory; the others go on.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .. import textsafe
from ..errors import OsmeterError
from ..ingest import read_probe_file, refuse_cut_short, store_files
from ..fleet.probes import MAX_PROBE_BYTES, ProbeFinder, arch_named
from ..inputs import read_bounded
from ..probe import PROBE_NAME, locate_probe
from ..records import EMULATED
from ..recorder import RunContext
from ..runner import RunOptions, probe_argv
from ..store.base import Store
from ..sysinfo import probe_sysinfo
from . import channel, cleanup, images, initramfs, qemu
from . import state as group_state



@dataclass
class Group:
    """One attempt of a kernels group."""

    st: group_state.GroupState
    store: Store
    machine: qemu.Machine
    probe: bytes  # the static probe (the guest's /init)
    helper: bytes | None
    host_machine: dict[str, Any]  # the host's own sysinfo
    out: IO[str] = field(default_factory=lambda: sys.stderr)
    unit: str = "repetition"  # what a plan's command is, in progress lines ("part": the study's)

    def save(self) -> None:
        group_state.save(self.st)

    def say(self, text: str) -> None:
        self.out.write(textsafe.terminal(text) + "\n")
        self.out.flush()

    def fail(self, kernel: str, reason: str, console: list[str] | None = None, log: Path | None = None) -> None:
        o = self.st.outcomes.setdefault(kernel, group_state.KernelOutcome())
        o.status, o.reason, o.run_id = "failed", reason, None
        if log is not None and log.is_file():
            n = self.st.kernels.index(kernel) + 1 if kernel in self.st.kernels else 0
            kept = self.st.directory() / f"{n}.console.log"
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(log, kept)
            o.console_log = str(kept)
        self.save()
        self.say(f"  {kernel}: failed: {reason}")
        for line in console or []:
            self.say(f"    | {line}")

    # -- one kernel ---------------------------------------------------------------------------------------

    def image_of(self, index: int, kernel: str) -> images.KernelImage | None:
        """Step 1: the kernel's image (None: failed, said)."""
        self.say(f"[{index}/{len(self.st.kernels)}] {kernel}")
        try:
            spec = images.parse_spec(kernel)
            image = images.resolve(spec, say=lambda t: self.say(f"  {t}"))
        except OsmeterError as e:
            self.fail(kernel, e.message)
            return None
        o = self.st.outcomes.setdefault(kernel, group_state.KernelOutcome())
        o.release = image.release
        o.host = group_state.host_name(self.st, kernel, image.release)
        self.save()
        return image

    def run_kernel(self, index: int, kernel: str) -> None:
        """Steps 1 to 4 for `osmeter kernels run`: the group's plan in one boot, stored as one run."""
        image = self.image_of(index, kernel)
        if image is None:
            return
        with cleanup.work_dir("osmeter-kernel.") as tmp:
            booted = self.boot(kernel, image, self.st.commands, tmp)
            if booted is not None:
                self.store_run(kernel, image, [booted], {**self.st.probe_options, "repeat": len(self.st.commands)}, tmp)

    def boot(self, kernel: str, image: images.KernelImage, commands: list[list[str]],
             work: Path, what: str = "") -> "Booted | None":
        """Steps 2 and 3: `commands` in one boot of `image` (None: failed, said)."""
        started = time.monotonic()
        try:
            plan = initramfs.plan_text(commands)
            built = initramfs.build(work / "initramfs.cpio", self.probe, self.helper, plan, release=image.release,
                                    modules=image.spec.modules, added=image.spec.initrd)
        except OsmeterError as e:
            self.fail(kernel, e.message)
            return None
        build_s = time.monotonic() - started
        cmd = qemu.argv(self.machine, image.image, built.path, work)
        self.say(f"  {image.release} ({image.origin}): initramfs {built.size / 1e6:.1f} MB in {build_s:.2f} s; "
                 f"booting under {self.machine.accel.upper()}, {self.machine.cpus} vCPU(s), "
                 f"{self.machine.memory_mib} MiB, within {self.st.timeout:g} s{what}")
        outcome = qemu.boot(cmd, work, self.st.timeout, self.machine.pin, tick=Progress(self).tick)
        decoded = channel.decode(outcome.channel)
        reason = failure(outcome, decoded, len(commands), self.st.timeout)
        if reason:
            self.fail(kernel, reason, outcome.console_tail, work / "console.log")
            return None
        info = {"kernel": kernel, "release": image.release, "build": image.build, "origin": image.origin,
                "image": str(image.image), "image_sha256": image.sha256,
                "config": str(image.config) if image.config else None, "config_sha256": image.config_sha256,
                "accel": self.machine.accel, "emulated": self.machine.emulated, "cpus": self.machine.cpus,
                "memory_mib": self.machine.memory_mib, "cmdline": self.machine.cmdline(),
                "pinned": {str(k): v for k, v in outcome.pinned.items()}, "qemu_argv": cmd,
                "initramfs_bytes": built.size, "initramfs_build_s": round(build_s, 3),
                "wall_s": round(outcome.seconds, 3), "guest_probe": decoded.hello, "group": self.st.id,
                "host_machine": self.host_machine}
        outputs = [guest_lines(decoded.command(i).stdout, self.machine.emulated, image, self.machine.accel)
                   for i in range(1, len(commands) + 1)]
        return Booted(commands, outputs, info)

    def store_run(self, kernel: str, image: images.KernelImage, boots: list["Booted"], params: dict[str, Any],
                  work: Path) -> int | None:
        """Step 4: every probe command's output of `boots` as one run of the group (its parts or repetitions)."""
        files = []
        for b, booted in enumerate(boots):
            for i, lines in enumerate(booted.outputs, 1):
                path = work / f"boot{b + 1}-command{i}.jsonl"
                path.write_bytes(b"".join(line + b"\n" for line in lines))
                files.append(path)
        boot_info = boots[0].info if len(boots) == 1 else {**boots[0].info, "boots": [
            {"wall_s": x.info["wall_s"], "commands": len(x.commands)} for x in boots]}
        try:
            probe_files = [read_probe_file(p) for p in files]
            refuse_cut_short(probe_files, allow_incomplete=False)
            context = RunContext(label=self.st.label, argv=[PROBE_NAME, *boots[0].commands[0]],
                                 params={**params, "kernels": boot_info},
                                 source="import", host=self.st.outcomes[kernel].host or image.release,
                                 fleet=self.st.id)
            stored = store_files(self.store, context, probe_files)
        except OsmeterError as e:
            self.fail(kernel, f"the guest's output could not be stored: {e.message}")
            return None
        o = self.st.outcomes[kernel]
        o.status, o.reason, o.run_id = "stored", None, stored.recorder.run_id
        self.save()
        c = stored.counts
        wall = sum(x.info["wall_s"] for x in boots)
        self.say(f"  {image.release}: stored run {o.run_id} ({stored.status}: {c['ok']} ok, {c['skip']} skipped, "
                 f"{c['error']} failed) in {wall:.1f} s of wall time")
        return o.run_id


@dataclass(frozen=True)
class Booted:
    """What one boot gave: each command's records (as stored) and the boot's facts."""

    commands: list[list[str]]
    outputs: list[list[bytes]]
    info: dict[str, Any]


@dataclass
class Progress:
    """The guest's progress records, shown as they come (about once a second): only the
    channel's new bytes are read each time, and only progress frames are decoded."""

    group: Group
    shown: str = ""
    offset: int = 0
    partial: bytes = b""

    def tick(self, path: Path) -> None:
        try:
            with open(path, "rb") as f:
                f.seek(self.offset)
                data = f.read(16 << 20)
        except OSError:
            return
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()[-(1 << 20):]  # an unfinished line, kept bounded
        line = ""
        for raw in lines:
            if b'"type":"progress"' not in raw and b" H 0 " not in raw[:40]:
                continue
            got = channel.decode(raw + b"\n")
            for index, c in got.commands.items():
                for out in c.stdout:
                    try:
                        rec = json.loads(out)
                        line = f"{self.group.unit} {index}: [{rec['index'] + 1}/{rec['total']}] {rec['bench']}"
                    except (ValueError, KeyError, TypeError):
                        pass
            if got.hello and not line:
                line = "init running"
        if line and line != self.shown:
            self.shown = line
            self.group.say(f"    {textsafe.line(line)}")


def failure(outcome: qemu.BootOutcome, decoded: channel.Decoded, commands: int, timeout: float) -> str | None:
    """Why a boot gave no run to store, or None."""
    said = "; ".join(textsafe.line(m) for m in decoded.messages[-3:])
    init = f"; init said: {said}" if said else ""
    if outcome.panic:
        return (f"the kernel panicked: {outcome.panic}" + (" (before osmeter's init ran)" if decoded.hello is None
                                                            else f"; {decoded.finished()} of {commands} probe "
                                                            f"command(s) had ended{init}"))
    if outcome.status == "too-much":
        return (f"the guest wrote more than {qemu.MAX_CHANNEL_BYTES >> 20} MiB to the data channel and was "
                f"stopped{init}")
    if outcome.status == "no-start":
        return f"qemu did not start: {outcome.qemu_message or 'no message'}"
    if outcome.status == "timeout":
        return (f"the guest did not finish within {timeout:g} s (--timeout) and was stopped; "
                f"{decoded.finished()} of {commands} probe command(s) had ended{init}")
    if decoded.hello is None:
        return (f"the guest ended (qemu exit {outcome.returncode}) before osmeter's init wrote anything: "
                "the kernel did not reach /init (a panic, or a kernel that cannot boot here; its console is below)"
                + (f"; qemu: {outcome.qemu_message}" if outcome.qemu_message else ""))
    if decoded.problems:
        return f"the data channel was damaged: {'; '.join(decoded.problems[:3])}{init}"
    if not decoded.done or decoded.finished() < commands:  # D comes after a fatal error too
        return f"init ended after {decoded.finished()} of {commands} probe command(s){init}"
    for i in range(1, commands + 1):
        c = decoded.command(i)
        if not c.stdout:
            err = "; ".join(textsafe.line(e) for e in c.stderr[-3:]) or "no message"
            return f"probe command {i} in the guest wrote nothing ({c.ended}): {err}"
    return None


def record_of(raw: bytes) -> dict[str, Any] | None:
    """A probe line as a record (None: not a JSON object; ingest then refuses it, naming the line)."""
    try:
        rec = json.loads(raw)
    except ValueError:
        return None
    return rec if isinstance(rec, dict) else None


def guest_lines(lines: list[bytes], emulated: bool, image: images.KernelImage, accel: str) -> list[bytes]:
    """The guest probe's records as stored: results flagged `emulated` under TCG,
    the machine description given the VM's facts."""
    out = []
    for raw in lines:
        rec = record_of(raw)
        kind = rec.get("type") if rec is not None else None
        if rec is not None and kind == "meta" and isinstance(rec.get("machine"), dict):
            rec["machine"]["vm_accel"] = accel
            if image.config_sha256:
                rec["machine"]["kernel_config_sha256"] = image.config_sha256
            raw = json.dumps(rec, separators=(",", ":")).encode()
        elif rec is not None and kind == "result" and emulated:
            flags = rec.get("flags") if isinstance(rec.get("flags"), list) else []
            rec["flags"] = [*flags, EMULATED]
            raw = json.dumps(rec, separators=(",", ":")).encode()
        out.append(raw)
    return out


def guest_argv(opts: RunOptions) -> list[str]:
    """The probe's arguments for `opts` in the guest: without --die-with-parent (the
    parent is init itself, PID 1, which the probe would take for an orphan's)."""
    return [a for a in probe_argv(Path(PROBE_NAME), opts)[1:] if a != "--die-with-parent"] + ["--quiet"]


@dataclass(frozen=True)
class GuestProbe:
    """What every guest gets (the static x86-64 probe: installed, or cross-built) and the host's sysinfo."""

    probe: bytes
    helper: bytes | None
    host_machine: dict[str, Any]


def guest_probe() -> GuestProbe:
    """Found (and read) before anything boots: a missing or dynamic probe is refused at once."""
    guest = ProbeFinder({}, os.environ).probe_for(arch_named("x86-64"))
    host_doc = probe_sysinfo(locate_probe())[1]
    return GuestProbe(read_bounded(guest.probe, MAX_PROBE_BYTES, what="probe"),
                      read_bounded(guest.helper, MAX_PROBE_BYTES, what="probe") if guest.helper else None,
                      machine_of(host_doc))


def make_group(st: group_state.GroupState, store: Store, machine: qemu.Machine, guest: GuestProbe) -> Group:
    return Group(st, store, machine, guest.probe, guest.helper, guest.host_machine)


def machine_of(doc: dict[str, Any]) -> dict[str, Any]:
    """The host's `sysinfo --json` document as {key: value}."""
    return {f["key"]: f["value"] for f in doc.get("fields", []) if isinstance(f, dict) and "key" in f}



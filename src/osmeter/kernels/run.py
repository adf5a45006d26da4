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
   kernel's release as the run's host and the group id as its fleet. Under
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
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable

from .. import textsafe
from ..errors import OsmeterError
from ..ingest import read_probe_file, refuse_cut_short, store_files
from ..probe import PROBE_NAME
from ..records import EMULATED
from ..recorder import RunContext
from ..store.base import Store
from . import channel, images, initramfs, qemu
from . import state as group_state

RESULT_PREFIX = b'{"type":"result"'
META_PREFIX = b'{"type":"meta"'


@dataclass
class Group:
    """One attempt of a kernels group."""

    st: group_state.GroupState
    store: Store
    machine: qemu.Machine
    probe: bytes  # the static probe (the guest's /init)
    helper: bytes | None
    host_machine: dict[str, Any]  # the host's own sysinfo
    repetitions: int
    out: IO[str] = field(default_factory=lambda: sys.stderr)
    resolve: Callable[[images.KernelSpec], images.KernelImage] | None = None
    state_root: Path | None = None

    def save(self) -> None:
        group_state.save(self.st, self.state_root)

    def say(self, text: str) -> None:
        self.out.write(textsafe.terminal(text) + "\n")
        self.out.flush()

    def fail(self, kernel: str, reason: str, console: list[str] | None = None, log: Path | None = None) -> None:
        o = self.st.outcomes.setdefault(kernel, group_state.KernelOutcome())
        o.status, o.reason, o.run_id = "failed", reason, None
        if log is not None and log.is_file():
            n = self.st.kernels.index(kernel) + 1 if kernel in self.st.kernels else 0
            kept = self.st.directory(self.state_root) / f"{n}.console.log"
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(log, kept)
            o.console_log = str(kept)
        self.save()
        self.say(f"  {kernel}: failed: {reason}")
        for line in console or []:
            self.say(f"    | {line}")

    # -- one kernel ---------------------------------------------------------------------------------------

    def run_kernel(self, index: int, kernel: str) -> None:
        total = len(self.st.kernels)
        self.say(f"[{index}/{total}] {kernel}")
        try:
            spec = images.parse_spec(kernel)
            image = (self.resolve or (lambda s: images.resolve(s, say=lambda t: self.say(f"  {t}"))))(spec)
        except OsmeterError as e:
            self.fail(kernel, e.message)
            return
        o = self.st.outcomes.setdefault(kernel, group_state.KernelOutcome())
        o.release = image.release
        self.save()
        with tempfile.TemporaryDirectory(prefix="osmeter-kernel.") as tmp:
            self._boot(kernel, image, Path(tmp))

    def _boot(self, kernel: str, image: images.KernelImage, work: Path) -> None:
        started = time.monotonic()
        plan = initramfs.plan_text(self.st.commands)
        try:
            built = initramfs.build(work / "initramfs.cpio", self.probe, self.helper, plan, release=image.release,
                                    modules=image.spec.modules, added=image.spec.initrd)
        except OsmeterError as e:
            self.fail(kernel, e.message)
            return
        build_s = time.monotonic() - started
        cmd = qemu.argv(self.machine, image.image, built.path, work)
        self.say(f"  {image.release} ({image.origin}): initramfs {built.size / 1e6:.1f} MB in {build_s:.2f} s; "
                 f"booting under {self.machine.accel.upper()}, {self.machine.cpus} vCPU(s), "
                 f"{self.machine.memory_mib} MiB, within {self.st.timeout:g} s")
        shown = Progress(self)
        outcome = qemu.boot(cmd, work, self.st.timeout, self.machine.pin, tick=shown.tick)
        decoded = channel.decode(outcome.channel)
        reason = failure(outcome, decoded, len(self.st.commands), self.st.timeout)
        if reason:
            self.fail(kernel, reason, outcome.console_tail, work / "console.log")
            return
        boot = {"kernel": kernel, "release": image.release, "build": image.build, "origin": image.origin,
                "image": str(image.image), "image_sha256": image.sha256,
                "config": str(image.config) if image.config else None, "config_sha256": image.config_sha256,
                "accel": self.machine.accel, "emulated": self.machine.emulated, "cpus": self.machine.cpus,
                "memory_mib": self.machine.memory_mib, "cmdline": self.machine.cmdline(),
                "pinned": {str(k): v for k, v in outcome.pinned.items()}, "qemu_argv": cmd,
                "initramfs_bytes": built.size, "initramfs_build_s": round(build_s, 3),
                "wall_s": round(outcome.seconds, 3), "guest_probe": decoded.hello, "group": self.st.id,
                "host_machine": self.host_machine}
        self._store(kernel, image, decoded, boot, work)

    def _store(self, kernel: str, image: images.KernelImage, decoded: channel.Decoded, boot: dict[str, Any],
               work: Path) -> None:
        files = []
        for i in range(1, len(self.st.commands) + 1):
            path = work / f"repetition-{i}.jsonl"
            lines = guest_lines(decoded.command(i).stdout, self.machine.emulated, image, self.machine.accel)
            path.write_bytes(b"".join(line + b"\n" for line in lines))
            files.append(path)
        try:
            probe_files = [read_probe_file(p) for p in files]
            refuse_cut_short(probe_files, allow_incomplete=False)
            context = RunContext(label=self.st.label, argv=[PROBE_NAME, *self.st.commands[0]],
                                 params={**self.st.probe_options, "repeat": self.repetitions, "kernels": boot},
                                 source="import", host=image.release, fleet=self.st.id)
            stored = store_files(self.store, context, probe_files)
        except OsmeterError as e:
            self.fail(kernel, f"the guest's output could not be stored: {e.message}")
            return
        o = self.st.outcomes[kernel]
        o.status, o.reason, o.run_id = "stored", None, stored.recorder.run_id
        self.save()
        c = stored.counts
        self.say(f"  {image.release}: stored run {o.run_id} ({stored.status}: {c['ok']} ok, {c['skip']} skipped, "
                 f"{c['error']} failed) in {boot['wall_s']:.1f} s of wall time")


@dataclass
class Progress:
    """The guest's progress records, shown as they come (about once a second)."""

    group: Group
    shown: str = ""

    def tick(self, data: bytes) -> None:
        decoded = channel.decode(data)
        line = ""
        for index in sorted(decoded.commands):
            for raw in decoded.commands[index].stdout:
                if raw.startswith(b'{"type":"progress"'):
                    try:
                        rec = json.loads(raw)
                        line = f"repetition {index}: [{rec['index'] + 1}/{rec['total']}] {rec['bench']}"
                    except (ValueError, KeyError, TypeError):
                        pass
        if not line and decoded.hello:
            line = "init running"
        if line and line != self.shown:
            self.shown = line
            self.group.say(f"    {textsafe.line(line)}")


def failure(outcome: qemu.BootOutcome, decoded: channel.Decoded, commands: int, timeout: float) -> str | None:
    """Why a boot gave no run to store, or None."""
    said = "; ".join(textsafe.line(m) for m in decoded.messages[-3:])
    init = f"; init said: {said}" if said else ""
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
    if not decoded.done:
        return f"init stopped before its last command ended ({decoded.finished()} of {commands} ended){init}"
    for i in range(1, commands + 1):
        c = decoded.command(i)
        if not c.stdout:
            err = "; ".join(textsafe.line(e) for e in c.stderr[-3:]) or "no message"
            return f"probe command {i} in the guest wrote nothing ({c.ended}): {err}"
    return None


def guest_lines(lines: list[bytes], emulated: bool, image: images.KernelImage, accel: str) -> list[bytes]:
    """The guest probe's records as stored: results flagged `emulated` under TCG,
    the machine description given the VM's facts."""
    out = []
    for raw in lines:
        if raw.startswith(META_PREFIX):
            rec = json.loads(raw)
            machine = rec.get("machine")
            if isinstance(machine, dict):
                machine["vm_accel"] = accel
                if image.config_sha256:
                    machine["kernel_config_sha256"] = image.config_sha256
            raw = json.dumps(rec, separators=(",", ":")).encode()
        elif emulated and raw.startswith(RESULT_PREFIX):
            rec = json.loads(raw)
            flags = rec.get("flags") if isinstance(rec.get("flags"), list) else []
            rec["flags"] = [*flags, EMULATED]
            raw = json.dumps(rec, separators=(",", ":")).encode()
        out.append(raw)
    return out


def machine_of(doc: dict[str, Any]) -> dict[str, Any]:
    """The host's `sysinfo --json` document as {key: value}."""
    return {f["key"]: f["value"] for f in doc.get("fields", []) if isinstance(f, dict) and "key" in f}



"""Init mode (docs/probe-init.md): the probe as PID 1 runs a plan and sends
its commands' output in CRC-checked frames, then powers off.

Without a VM, init runs as PID 1 of a new PID and mount namespace
(`unshare --mount --pid --fork`, root only): its mounts stay in the
namespace, and reboot(RB_POWER_OFF) there ends the namespace's init with
SIGINT, which is how these tests see that init powered off. Every frame of
the channel is checked: its LEN and CRC-32 (zlib's), SEQ from 0 without a
gap, H first, D last.
"""
from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from cross_helpers import TARGET, cross_build

USAGE = 2
MESSAGE = ("init mode runs only as PID 1 (a VM's /init, or a new PID namespace: "
           "unshare --mount --pid --fork)")
FRAME = re.compile(rb"@osm1 (0|[1-9][0-9]*) ([HOoEeXLD]) (0|[1-9][0-9]*) (0|[1-9][0-9]*) ([0-9a-f]{8}) (.*)",
                   re.S)
PIECE = 65536


@dataclass(frozen=True)
class Frame:
    seq: int
    kind: str
    cmd: int
    payload: bytes

    @property
    def text(self) -> str:
        return self.payload.decode()


@dataclass
class InitRun:
    returncode: int
    frames: list[Frame]
    stderr: str
    seconds: float

    def of(self, kind: str, cmd: int | None = None) -> list[Frame]:
        return [f for f in self.frames if f.kind == kind and (cmd is None or f.cmd == cmd)]

    def lines(self, cmd: int, stream: str = "O") -> list[bytes]:
        """Command cmd's stdout (O) or stderr (E) lines, pieces joined."""
        out, part = [], b""
        for f in self.frames:
            if f.cmd == cmd and f.kind in (stream, stream.lower()):
                part += f.payload
                if f.kind == stream:
                    out.append(part)
                    part = b""
        assert part == b"", f"a {stream.lower()} piece of command {cmd} without its end"
        return out

    def log(self) -> str:
        return "\n".join(f.text for f in self.of("L"))


def decode(data: bytes) -> list[Frame]:
    """Every frame of the channel, checked: the format, LEN, CRC, SEQ, H first, D last."""
    assert data.endswith(b"\n"), data[-200:]
    frames = []
    for line in data[:-1].split(b"\n"):
        m = FRAME.fullmatch(line)
        assert m, line[:200]
        seq, kind, cmd, length, crc, payload = m.groups()
        assert int(length) == len(payload), line[:200]
        assert int(crc, 16) == zlib.crc32(payload), line[:200]
        frames.append(Frame(int(seq), kind.decode(), int(cmd), payload))
    assert [f.seq for f in frames] == list(range(len(frames)))
    assert frames[0].kind == "H" and frames[0].cmd == 0, frames[0]
    assert frames[-1].kind == "D" and frames[-1].cmd == 0, frames[-1]
    assert all(f.cmd == 0 for f in frames if f.kind in "HLD")
    assert all(f.cmd >= 1 for f in frames if f.kind in "OoEeX")
    assert all(len(f.payload) == PIECE for f in frames if f.kind in "oe")
    return frames


@functools.lru_cache(maxsize=1)
def _unshare_problem() -> str | None:
    if os.geteuid() != 0:
        return "init mode is tested as PID 1 of a new PID namespace (unshare): needs root"
    if not shutil.which("unshare"):
        return "unshare is missing (Debian: apt-get install util-linux)"
    p = subprocess.run(["unshare", "--mount", "--pid", "--fork", "--kill-child", "true"], capture_output=True,
                       text=True, timeout=30)
    if p.returncode != 0:
        return f"unshare --mount --pid --fork does not work here: {p.stderr.strip()}"
    return None


def need_unshare() -> None:
    problem = _unshare_problem()
    if problem:
        pytest.skip(problem)


def mountinfo() -> list[str]:
    # Mount ids and the order stay the same when nothing is mounted or unmounted.
    return Path("/proc/self/mountinfo").read_text().splitlines()


def processes_naming(marker: str) -> list[int]:
    """Processes whose command line holds marker (init's children run the
    same program image: they hold it too)."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and d.name != str(os.getpid()):
            try:
                if marker.encode() in (d / "cmdline").read_bytes():
                    found.append(int(d.name))
            except OSError:
                pass
    return found


def run_init(cmd: list[str], tmp: Path, plan: str | bytes | Path, *extra: str, timeout: float = 60,
             as_init: bool = False) -> InitRun:
    """`unshare --mount --pid --fork CMD init --plan P --channel C EXTRA`
    (as_init: CMD is the probe under the name init, no `init` argument),
    checked: init powered off (SIGINT), the host's mounts are as they were,
    no process is left."""
    need_unshare()
    if isinstance(plan, Path):
        plan_path = plan
    else:
        plan_path = tmp / "plan"
        plan_path.write_bytes(plan.encode() if isinstance(plan, str) else plan)
    channel = tmp / "channel"
    channel.write_bytes(b"stale contents, truncated by init\n")
    before = mountinfo()
    start = time.monotonic()
    p = subprocess.run(["unshare", "--mount", "--pid", "--fork", "--kill-child", *cmd,
                        *([] if as_init else ["init"]), "--plan", str(plan_path), "--channel", str(channel), *extra],
                       capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    seconds = time.monotonic() - start
    stderr = p.stderr.decode(errors="replace")
    assert p.returncode in (-2, 130), (p.returncode, stderr[-3000:])
    assert "osmeter-probe init: powering off" in stderr
    assert mountinfo() == before
    assert processes_naming(str(plan_path)) == []
    return InitRun(p.returncode, decode(channel.read_bytes()), stderr, seconds)


def test_init_refuses_unless_pid_1(probe: str, tmp_path: Path) -> None:
    before = mountinfo()
    runs = [
        subprocess.run([probe, "init"], capture_output=True, text=True, timeout=30),
        subprocess.run([probe, "init", "--plan", "/nonexistent", "--channel", str(tmp_path / "c")],
                       capture_output=True, text=True, timeout=30),
        # As the kernel runs it: /init, no argument.
        subprocess.run(["/init"], executable=probe, capture_output=True, text=True, timeout=30),
        subprocess.run(["init"], executable=probe, capture_output=True, text=True, timeout=30),
    ]
    for p in runs:
        assert p.returncode == USAGE, (p.args, p.stderr)
        assert p.stderr == f"osmeter-probe: error: {MESSAGE}\n", p.stderr
        assert p.stdout == ""
    assert mountinfo() == before
    assert not (tmp_path / "c").exists()


def test_init_runs_a_plan_and_powers_off(probe: str, tmp_path: Path) -> None:
    plan = ("# osmeter plan\n\n"
            "run\tsyscall.null\t--max-time\t0.05\t--min-time\t0\n"
            "sysinfo\t--json\n"
            "run\tno.such\n"
            "init\n")
    r = run_init([probe], tmp_path, plan)
    version = subprocess.run([probe, "version"], capture_output=True, text=True, check=True).stdout.split()
    assert r.frames[0].text == f"osmeter-probe {version[1]} {version[-1].rstrip(')')}"
    assert r.frames[-1].text == "4"
    assert [f.text for f in r.of("X")] == ["exit 0", "exit 0", f"exit {USAGE}", f"exit {USAGE}"]
    assert [f.cmd for f in r.of("X")] == [1, 2, 3, 4]
    # Each command's frames come before its X, and after the one before.
    order = [f.cmd for f in r.frames if f.cmd]
    assert order == sorted(order)
    for f in r.of("X"):
        assert all(g.seq < f.seq for g in r.frames if g.cmd == f.cmd and g is not f)

    recs = [json.loads(line) for line in r.lines(1)]
    assert recs[0]["type"] == "meta" and recs[-1]["type"] == "end" and recs[-1]["status"] == "complete"
    result = [x for x in recs if x["type"] == "result"]
    assert len(result) == 1 and result[0]["bench"] == "syscall.null" and result[0]["unit"] == "ns"
    assert result[0]["median"] > 0

    doc = json.loads(b"\n".join(r.lines(2)))
    assert doc["schema"] == 1 and doc["fields"]

    assert r.lines(3) == [] and r.lines(4) == []
    assert any(b"unknown benchmark 'no.such'" in line for line in r.lines(3, "E")), r.lines(3, "E")
    assert r.lines(4, "E") == [f"osmeter-probe: error: {MESSAGE}".encode()]
    assert "plan '" in r.log() and "4 commands" in r.log()
    for i, what in enumerate(["run syscall.null", "sysinfo --json", "run no.such", "init"], 1):
        assert f"osmeter-probe init: command {i}/4: {what}" in r.stderr
    assert "osmeter-probe init: command 3 exited 2" in r.stderr


def test_init_runs_as_slash_init(probe: str, tmp_path: Path) -> None:
    """Run under the name init (the kernel's /init), the options follow at
    once; a word that is no option (a boot parameter the kernel passed on)
    is noted and ignored."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "init").symlink_to(probe)
    r = run_init([str(tmp_path / "bin" / "init")], tmp_path, "version\n", "single", as_init=True)
    assert "ignored argument 'single'" in r.log()
    assert [f.text for f in r.of("X")] == ["exit 0"]
    assert r.lines(1)[0].startswith(b"osmeter-probe ")
    assert r.frames[-1].text == "1"


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "empty", "comments_only", "bad_tabs", "missing"])
def test_init_refuses_a_bad_plan_promptly(probe: str, tmp_path: Path, kind: str) -> None:
    if kind == "fifo":
        plan: str | Path = tmp_path / "fifo"
        os.mkfifo(plan)
    elif kind == "dev_zero":
        plan = Path("/dev/zero")
    elif kind == "missing":
        plan = tmp_path / "missing"
    else:
        plan = {"empty": "", "comments_only": "# nothing\n\n", "bad_tabs": "run\t\tsyscall.null\n"}[kind]
    r = run_init([probe], tmp_path, plan, timeout=20)
    assert r.seconds < 10
    why = {"fifo": "is not a regular file", "dev_zero": "is not a regular file", "empty": "has no command",
           "comments_only": "has no command", "bad_tabs": "argument 2 is empty",
           "missing": "No such file or directory"}[kind]
    errors = [f.text for f in r.of("L") if f.text.startswith("error: ")]
    assert len(errors) == 1 and why in errors[0], r.log()
    assert r.frames[-1].text == "0"
    assert not r.of("X") and not r.of("O")
    assert "command 1/" not in r.stderr


def test_init_sends_a_long_line_in_pieces(probe: str, tmp_path: Path) -> None:
    """A stdout line over 64 KiB: o pieces of exactly 64 KiB, then O, joined
    they are the line (`list --json --all` is one line of ~100 KiB)."""
    want = subprocess.run([probe, "list", "--json", "--all"], capture_output=True, check=True).stdout
    assert want.count(b"\n") == 1 and len(want) > PIECE
    r = run_init([probe], tmp_path, "list\t--json\t--all\nversion\n")
    pieces = [f for f in r.frames if f.cmd == 1 and f.kind in "oO"]
    assert [f.kind for f in pieces] == ["o"] * ((len(want) - 1) // PIECE) + ["O"]
    assert r.lines(1) == [want[:-1]]
    assert len(r.lines(2)) == 1 and r.lines(2)[0].startswith(b"osmeter-probe ")
    assert [f.text for f in r.of("X")] == ["exit 0", "exit 0"]


@pytest.mark.slow  # a sleep of 1 s
def test_init_sleeps_as_the_kernel_command_line_says(probe: str, tmp_path: Path) -> None:
    """osmeter.sleep (from --cmdline, standing for /proc/cmdline): logged,
    slept before the plan; --channel wins over osmeter.channel."""
    cmdline = tmp_path / "cmdline"
    cmdline.write_text("console=ttyS0 panic=-1 osmeter.sleep=1 osmeter.channel=/nonexistent osmeter.foo=2\n")
    r = run_init([probe], tmp_path, "version\n", "--cmdline", str(cmdline))
    assert r.seconds >= 1.0
    assert "sleeping 1 s (osmeter.sleep=1)" in r.log()
    assert "ignored unknown osmeter.foo" in r.log()
    assert [f.text for f in r.of("X")] == ["exit 0"]
    assert r.frames[-1].text == "1"


@pytest.mark.parametrize("line, why", [
    ("osmeter.sleep=x", "osmeter.sleep: 'x' is not an integer; allowed: 0..86400"),
    ("osmeter.sleep=86401", "allowed: 0..86400"),
    ("osmeter.sleep", "osmeter.sleep has no value"),
    ("osmeter.plan=relative", "must be an absolute path"),
])
def test_init_refuses_a_malformed_kernel_command_line(probe: str, tmp_path: Path, line: str, why: str) -> None:
    cmdline = tmp_path / "cmdline"
    cmdline.write_text(f"quiet {line}\n")
    r = run_init([probe], tmp_path, "version\n", "--cmdline", str(cmdline), timeout=20)
    errors = [f.text for f in r.of("L") if f.text.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith("error: kernel command line: osmeter."), r.log()
    assert why in errors[0], r.log()
    assert not r.of("X") and r.frames[-1].text == "0"
    assert r.seconds < 10


def test_init_reads_the_plan_the_kernel_command_line_names(probe: str, tmp_path: Path) -> None:
    """Without --plan, osmeter.plan names it (read after /tmp is mounted
    over, so a path outside the test's files: it is missing)."""
    cmdline = tmp_path / "cmdline"
    cmdline.write_text("osmeter.plan=/nonexistent-osmeter/plan\n")
    channel = tmp_path / "channel"
    channel.write_bytes(b"")
    need_unshare()
    p = subprocess.run(["unshare", "--mount", "--pid", "--fork", "--kill-child", probe, "init", "--cmdline",
                        str(cmdline), "--channel", str(channel)], capture_output=True, text=True, timeout=20)
    assert p.returncode in (-2, 130), p.stderr
    frames = decode(channel.read_bytes())
    errors = [f.text for f in frames if f.kind == "L" and f.text.startswith("error: ")]
    assert errors == ["error: plan: cannot open '/nonexistent-osmeter/plan': No such file or directory"]


@pytest.mark.cross
@pytest.mark.slow  # the aarch64 cross build (~15 s, shared with test_cross) and the run under qemu
def test_init_aarch64_under_qemu_user(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    need_unshare()
    build = cross_build(TARGET["aarch64"], tmp_path_factory)
    r = run_init(build.emulator() + [str(build.probe)], tmp_path,
                 "run\tsyscall.null\t--max-time\t0.05\t--min-time\t0\nrun\tno.such\n", timeout=300)
    print(f"aarch64 init under qemu-user: {r.seconds:.2f} s wall")
    assert r.frames[0].text.startswith("osmeter-probe ") and r.frames[0].text.endswith(" aarch64")
    assert [f.text for f in r.of("X")] == ["exit 0", f"exit {USAGE}"]
    recs = [json.loads(line) for line in r.lines(1)]
    assert recs[0]["build"]["arch"] == "aarch64"
    result = [x for x in recs if x["type"] == "result"]
    assert len(result) == 1 and result[0]["bench"] == "syscall.null" and result[0]["median"] > 0
    assert any(b"unknown benchmark 'no.such'" in line for line in r.lines(2, "E"))
    assert r.frames[-1].text == "2"

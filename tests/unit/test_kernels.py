"""osmeter kernels: the pieces that need no VM (the channel's frames, the
initramfs's cpio, the kernel specs and images, the KVM check, qemu's
command line, the failure reasons). Booting real kernels: tests/e2e/test_kernels_boot.py."""

from __future__ import annotations

import io
import json
import os
import stat
import sys
import time
import subprocess
import zlib
from pathlib import Path

import pytest

from osmeter.errors import UsageError
from osmeter.kernels import channel, images, initramfs, kvm, qemu
from osmeter.kernels import run as kr
from osmeter.records import EMULATED


def frame(seq: int, kind: str, cmd: int, payload: bytes) -> bytes:
    return b"@osm1 %d %s %d %d %08x " % (seq, kind.encode(), cmd, len(payload), zlib.crc32(payload)) + payload + b"\n"


def frames(*parts: tuple[str, int, bytes]) -> bytes:
    return b"".join(frame(i, k, c, p) for i, (k, c, p) in enumerate(parts))


# --- the channel ----------------------------------------------------------------------------------------


def test_channel_decodes_commands_pieces_and_ends() -> None:
    data = frames(("H", 0, b"osmeter-probe 0.9 x86_64"), ("O", 1, b'{"a":1}'), ("o", 1, b'{"b":'),
                  ("O", 1, b"2}"), ("e", 1, b"war"), ("E", 1, b"ning"), ("X", 1, b"exit 0"),
                  ("L", 0, b"mounted"), ("X", 2, b"signal 9"), ("D", 0, b"2"))
    d = channel.decode(data)
    assert d.hello == "osmeter-probe 0.9 x86_64" and d.done and not d.problems and d.frames == 10
    assert d.commands[1].stdout == [b'{"a":1}', b'{"b":2}'] and d.commands[1].stderr == ["warning"]
    assert d.commands[1].exit_code == 0 and d.commands[2].ended == "signal 9" and d.commands[2].exit_code is None
    assert d.messages == ["mounted"] and d.finished() == 2


def test_channel_payload_may_hold_spaces_and_be_empty() -> None:
    d = channel.decode(frames(("O", 1, b"a b  c"), ("O", 1, b"")))
    assert d.commands[1].stdout == [b"a b  c", b""] and not d.problems


@pytest.mark.parametrize("damage, expect", [
    (lambda b: b.replace(b'"a":1', b'"a":7'), "checksum"),
    (lambda b: b.replace(b" 7 ", b" 9 ", 1), "bytes, its header says"),
    (lambda b: b.replace(b"@osm1 1 O", b"@osm1 5 O"), "missing"),
    (lambda b: b"kernel noise\n" + b, "not frames"),
    (lambda b: b[:-3], "middle of a frame"),
    (lambda b: b.replace(b"@osm1 1 O 1 7 ", b"@osm1 1 Q 1 7 "), "malformed header"),
])
def test_channel_damage_is_found_never_read(damage, expect: str) -> None:
    good = frames(("H", 0, b"x"), ("O", 1, b'{"a":1}'), ("D", 0, b"1"))
    d = channel.decode(damage(good))
    assert any(expect in p for p in d.problems), d.problems
    assert b'{"a":7}' not in (d.commands.get(1) or channel.Command()).stdout


# --- the initramfs --------------------------------------------------------------------------------------


def read_cpio(data: bytes) -> dict[str, tuple[int, bytes, int, int]]:
    """name -> (mode, data, rdevmajor, rdevminor) of a newc archive (stops at the trailer)."""
    out, pos = {}, 0
    while True:
        assert data[pos:pos + 6] == b"070701", pos
        f = [int(data[pos + 6 + 8 * i: pos + 14 + 8 * i], 16) for i in range(13)]
        namesize, filesize = f[11], f[6]
        name = data[pos + 110: pos + 110 + namesize - 1].decode()
        pos = (pos + 110 + namesize + 3) & ~3
        body = data[pos: pos + filesize]
        pos = (pos + filesize + 3) & ~3
        if name == "TRAILER!!!":
            return out
        out[name] = (f[1], body, f[9], f[10])


def test_initramfs_holds_init_plan_console_and_is_reproducible(tmp_path: Path) -> None:
    plan = initramfs.plan_text([["run", "syscall.null", "--quiet"], ["sysinfo", "--json"]])
    assert plan == "run\tsyscall.null\t--quiet\nsysinfo\t--json\n"
    a = initramfs.build(tmp_path / "a", b"\x7fELFprobe", b"helper", plan, release="6.1.0-1-amd64")
    b = initramfs.build(tmp_path / "b", b"\x7fELFprobe", b"helper", plan, release="6.1.0-1-amd64")
    assert a.path.read_bytes() == b.path.read_bytes() and a.size == len(a.path.read_bytes()) and a.size % 4 == 0
    entries = read_cpio(a.path.read_bytes())
    mode, body, *_ = entries["init"]
    assert body == b"\x7fELFprobe" and stat.S_ISREG(mode) and mode & 0o111
    assert entries["osmeter/plan"][1] == plan.encode() and entries["osmeter-exec-helper"][1] == b"helper"
    mode, _, major, minor = entries["dev/console"]
    assert stat.S_ISCHR(mode) and (major, minor) == (5, 1)
    assert all(stat.S_ISDIR(entries[d][0]) for d in ("proc", "sys", "dev", "tmp"))


def test_initramfs_readable_by_cpio_tool(tmp_path: Path) -> None:
    """The archive is what GNU cpio reads as newc (when cpio is installed)."""
    import shutil
    if not shutil.which("cpio"):
        pytest.skip("cpio is not installed (Debian: apt-get install cpio); the in-test reader covers the format")
    built = initramfs.build(tmp_path / "i", b"probe", None, "run\tx\n", release="r")
    listing = subprocess.run(["cpio", "-t", "--quiet"], input=built.path.read_bytes(), capture_output=True,
                             check=True).stdout.decode().split()
    assert {"init", "osmeter/plan", "dev/console"} <= set(listing)


def test_initramfs_added_archive_goes_first_and_modules_go_in(tmp_path: Path) -> None:
    added = tmp_path / "user.cpio"
    added.write_bytes(b"USERARCHIVE")  # 11 bytes: padded to 12 before ours
    mods = tmp_path / "mods"
    (mods / "kernel").mkdir(parents=True)
    (mods / "kernel" / "x.ko").write_bytes(b"ko")
    (mods / "modules.dep").write_text("kernel/x.ko:\n")
    built = initramfs.build(tmp_path / "i", b"p", None, "run\tx\n", release="6.1.0", modules=mods, added=added)
    data = built.path.read_bytes()
    assert data.startswith(b"USERARCHIVE\0")
    entries = read_cpio(data[12:])
    assert entries["lib/modules/6.1.0/kernel/x.ko"][1] == b"ko" and "lib/modules/6.1.0/modules.dep" in entries


@pytest.mark.parametrize("commands, expect", [
    ([], "1 to 32"), ([["run", "a\tb"]], "no tab"), ([["run", ""]], "empty"), ([["x"]] * 33, "1 to 32"),
    ([["run", "x" * 70_000]], "more than 65536"),
])
def test_plan_refuses_what_init_could_not_read(commands, expect: str) -> None:
    with pytest.raises(UsageError, match=expect):
        initramfs.plan_text(commands)


# --- kernel specs and images -----------------------------------------------------------------------------


def bzimage(version: bytes, protocol: int = 0x20F) -> bytes:
    data = bytearray(0x4000)
    data[0x202:0x206] = b"HdrS"
    data[0x206:0x208] = protocol.to_bytes(2, "little")
    data[0x20E:0x210] = (0x1000).to_bytes(2, "little")  # the string at 0x1200
    data[0x1200:0x1200 + len(version) + 1] = version + b"\0"
    return bytes(data)


def test_bzimage_version_and_refusals(tmp_path: Path) -> None:
    v = images.bzimage_version(bzimage(b"6.1.0-27-rt-amd64 (x@y) #1 SMP PREEMPT_RT Debian"), "k")
    assert v.startswith("6.1.0-27-rt-amd64") and "PREEMPT_RT" in v
    with pytest.raises(UsageError, match="not an x86 kernel image"):
        images.bzimage_version(b"\0" * 4096, "k")
    arm = bytearray(4096)
    arm[0x38:0x3C] = b"ARM\x64"
    with pytest.raises(UsageError, match="arm64 Image"):
        images.bzimage_version(bytes(arm), "k")
    with pytest.raises(UsageError, match="names no kernel version"):
        images.bzimage_version(bzimage(b"x", protocol=0x100), "k")


def test_specs_parse_and_resolve(tmp_path: Path) -> None:
    boot = tmp_path / "boot"
    boot.mkdir()
    (boot / "vmlinuz-6.1.0-9-amd64").write_bytes(bzimage(b"6.1.0-9-amd64 (b) #1"))
    (boot / "config-6.1.0-9-amd64").write_text("CONFIG_X=y\n")
    spec = images.parse_spec("6.1.0-9-amd64")
    assert spec.kind == "release"
    img = images.resolve(spec, boot=boot)
    assert img.release == "6.1.0-9-amd64" and img.config_sha256 and img.name == "6.1.0-9-amd64"
    by_path = images.resolve(images.parse_spec(str(boot / "vmlinuz-6.1.0-9-amd64")))
    assert by_path.config == boot / "config-6.1.0-9-amd64" and by_path.sha256 == img.sha256
    assert images.parse_spec("deb:linux-image-rt-amd64").kind == "deb"
    with pytest.raises(UsageError, match="initrd=PATH"):
        images.parse_spec("/k,foo=bar")
    with pytest.raises(UsageError, match="not a Debian package"):
        images.parse_spec("deb:Bad Name")
    with pytest.raises(UsageError, match="no installed kernel"):
        images.resolve(images.parse_spec("9.9.9-none"), boot=boot)
    with pytest.raises(UsageError, match="not a file"):
        images.resolve(images.parse_spec(f"{boot / 'vmlinuz-6.1.0-9-amd64'},initrd={tmp_path / 'none'}"))


@pytest.mark.parametrize("path", ["/dev/zero", "fifo"])
def test_image_read_is_bounded(tmp_path: Path, path: str) -> None:
    if path == "fifo":
        path = str(tmp_path / "fifo")
        os.mkfifo(path)
    with pytest.raises(UsageError):
        images.resolve(images.parse_spec(path))


def test_deb_metapackage_followed_to_the_image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The metapackage is followed through apt's lists (apt-cache show: nothing downloaded), the
    image package downloaded and unpacked once; a second resolve downloads nothing (fakes: no network)."""
    calls = []
    image = bzimage(b"6.1.0-56-rt-amd64 (d) #1 SMP PREEMPT_RT")
    packages = {"linux-image-rt-amd64": "Depends: linux-image-6.1.0-56-rt-amd64 (= 1.0)",
                "linux-image-6.1.0-56-rt-amd64": "Depends: kmod, linux-base (>= 4.3~)"}

    def fake(argv, cwd=None, **kw):
        calls.append(argv)
        tool = Path(argv[0]).name
        if tool == "apt-cache":
            pkg = argv[-1]
            return subprocess.CompletedProcess(argv, 0, f"Package: {pkg}\nVersion: 1.0\n{packages[pkg]}\n\n"
                                               "Package: other\n", "")
        if tool == "apt-get":
            name = argv[-1].partition("=")[0]
            (Path(cwd) / f"{name}_1.0_amd64.deb").write_text(name)
            return subprocess.CompletedProcess(argv, 0, "", "")
        raise AssertionError(argv)

    def unpack(deb, target, run):
        (target / "boot").mkdir(parents=True)
        (target / "boot" / "vmlinuz-6.1.0-56-rt-amd64").write_bytes(image)
        return target / "boot" / "vmlinuz-6.1.0-56-rt-amd64", None

    monkeypatch.setattr(images, "_tool", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(images, "_unpack", unpack)
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    img = images.resolve(images.parse_spec("deb:linux-image-rt-amd64"), env=env, run=fake)
    assert img.release == "6.1.0-56-rt-amd64" and img.origin == "deb linux-image-6.1.0-56-rt-amd64 1.0"
    downloads = [c[-1] for c in calls if c[0].endswith("apt-get")]
    assert downloads == ["linux-image-6.1.0-56-rt-amd64=1.0"]
    assert (tmp_path / "osmeter" / "kernels" / "linux-image-6.1.0-56-rt-amd64_1.0" / "boot").is_dir()
    assert not list((tmp_path / "osmeter" / "kernels").glob("download.*"))  # its download directory is gone
    calls.clear()
    again = images.resolve(images.parse_spec("deb:linux-image-rt-amd64"), env=env, run=fake)
    assert again.sha256 == img.sha256 and not [c for c in calls if c[0].endswith("apt-get")]


def test_deb_failure_is_apts_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(images, "_tool", lambda name: f"/usr/bin/{name}")
    fail = lambda argv, **kw: subprocess.CompletedProcess(argv, 100, "", "E: Unable to locate package nope\n")  # noqa: E731
    with pytest.raises(UsageError, match="Unable to locate package nope"):
        images.resolve(images.parse_spec("deb:nope"), env={"XDG_CACHE_HOME": str(tmp_path)}, run=fail)


# --- KVM --------------------------------------------------------------------------------------------------


def test_kvm_check_names_the_step_that_failed(tmp_path: Path) -> None:
    missing = kvm.check(str(tmp_path / "kvm"))
    assert not missing.usable and "does not exist" in missing.reason
    not_kvm = kvm.check("/dev/null")
    assert not not_kvm.usable and "not a KVM device" in not_kvm.reason
    (tmp_path / "plain").write_text("")
    os.chmod(tmp_path / "plain", 0)
    if os.geteuid() != 0:
        assert "cannot open" in kvm.check(str(tmp_path / "plain")).reason


def test_kvm_kind_hardware_pvm_unknown(tmp_path: Path) -> None:
    (tmp_path / "kvm_pvm").mkdir()
    pvm = kvm.kind_of_kvm(tmp_path)
    assert not pvm.usable and "PVM" in pvm.reason
    (tmp_path / "kvm_amd").mkdir()
    assert kvm.kind_of_kvm(tmp_path).usable
    assert kvm.kind_of_kvm(tmp_path / "none").usable  # nothing to tell by: the VM ran code, trusted


def test_kvm_check_here_agrees_with_the_modules() -> None:
    """On this machine: usable exactly when a hardware KVM module is loaded and a VM runs code."""
    c = kvm.check()
    if not os.path.exists(kvm.DEVICE):
        assert not c.usable
    elif c.usable:
        assert "ran guest code" in c.reason
    else:
        assert c.reason  # the reason is shown by `kernels check` and the TCG warning


# --- qemu's command line, the outcome ------------------------------------------------------------------


def test_qemu_argv_has_two_serial_ports_qmp_and_paused_start(tmp_path: Path) -> None:
    m = qemu.Machine("tcg", 2, 512, ("mitigations=off",), (0, 1))
    argv = qemu.argv(m, Path("/k"), Path("/i"), tmp_path)
    text = " ".join(argv)
    assert argv[argv.index("-accel") + 1] == "tcg" and "-S" in argv and "-no-reboot" in argv
    assert text.count("-serial chardev:") == 2 and "-nodefaults" in argv
    append = argv[argv.index("-append") + 1]
    assert append.startswith("console=ttyS0 panic=-1 osmeter.channel=/dev/ttyS1") and append.endswith("mitigations=off")
    k = qemu.argv(qemu.Machine("kvm", 1, 256), Path("/k"), Path("/i"), tmp_path)
    assert k[k.index("-accel") + 1] == "kvm" and k[k.index("-cpu") + 1] == "host"


def test_append_is_split_and_bounded() -> None:
    assert qemu.check_append(["a=1 b", "c"]) == ("a=1", "b", "c")
    with pytest.raises(UsageError, match="control character"):
        qemu.check_append(["a\x1bb"])
    with pytest.raises(UsageError, match="exceed"):
        qemu.check_append(["x" * 3000])


def test_boot_of_a_missing_qemu_says_so(tmp_path: Path) -> None:
    out = qemu.boot([str(tmp_path / "no-qemu")], tmp_path, 5)
    assert out.status == "no-start" and "cannot start" in out.qemu_message


def _outcome(status="ended", data=b"", rc=0) -> qemu.BootOutcome:
    return qemu.BootOutcome(status, rc, 1.0, data, ["Kernel panic - not syncing: x"])


def test_failure_reasons() -> None:
    ok = frames(("H", 0, b"p"), ("O", 1, b"{}"), ("X", 1, b"exit 0"), ("D", 0, b"1"))
    assert kr.failure(_outcome(data=ok), channel.decode(ok), 1, 60) is None
    assert "before osmeter's init" in kr.failure(_outcome(), channel.decode(b""), 1, 60)
    assert "within 60 s" in kr.failure(_outcome("timeout"), channel.decode(frames(("H", 0, b"p"))), 1, 60)
    cut = frames(("H", 0, b"p"), ("L", 0, b"cannot read the plan"))
    assert "cannot read the plan" in kr.failure(_outcome(data=cut), channel.decode(cut), 1, 60)
    empty = frames(("H", 0, b"p"), ("E", 1, b"unknown benchmark"), ("X", 1, b"exit 2"), ("D", 0, b"1"))
    assert "unknown benchmark" in kr.failure(_outcome(data=empty), channel.decode(empty), 1, 60)


def test_guest_lines_flag_emulated_and_add_vm_facts() -> None:
    img = images.KernelImage(images.parse_spec("/k"), Path("/k"), "6.1", "6.1 x", "ab", None, "cf", "path")
    lines = [b'{"type":"meta","machine":{"kernel_release":"6.1"}}', b'{"type":"result","flags":["not-pinned"]}',
             b'{"type":"end"}']
    out = [json.loads(x) for x in kr.guest_lines(lines, True, img, "tcg")]
    assert out[0]["machine"] == {"kernel_release": "6.1", "vm_accel": "tcg", "kernel_config_sha256": "cf"}
    assert out[1]["flags"] == ["not-pinned", EMULATED] and out[2] == {"type": "end"}
    kvm_out = [json.loads(x) for x in kr.guest_lines(lines, False, img, "kvm")]
    assert kvm_out[1]["flags"] == ["not-pinned"]


def test_cpio_writer_refuses_a_name_twice() -> None:
    w = initramfs.CpioWriter(io.BytesIO())
    w.directory("a")
    with pytest.raises(ValueError):
        w.directory("a")


# --- the command's bad input: refused before anything boots ----------------------------------------------


@pytest.mark.parametrize("argv, expect", [
    (["kernels", "run", "syscall.null"], "needs --kernel"),
    (["kernels", "run", "--kernel", "/k,foo=bar"], "is not one of initrd=PATH"),
    (["kernels", "run", "--kernel", "deb:Bad Name"], "not a Debian package name"),
    (["kernels", "run", "--kernel", "/k", "--kernel", "/k"], "given twice"),
    (["kernels", "run", "--kernel", "/k", "--pin", "0,0"], "distinct"),
    (["kernels", "run", "--kernel", "/k", "--pin", "x"], "is not 'none'"),
    (["kernels", "run", "--kernel", "/k", "--accel", "xen"], "invalid choice"),
    (["kernels", "run", "--kernel", "/k", "--cpus", "0"], "at least 1"),
    (["kernels", "run", "--resume", "kernels-20260101T000000Z-abcd", "--kernel", "/k"], "leave out --kernel"),
    (["kernels", "run", "--resume", "kernels-20260101T000000Z-abcd", "--cpus", "4"], "leave out --cpus"),
    (["study", "rt", "--accel", "tcg"], "goes with --kernel"),
])
def test_bad_input_refused_before_booting(cli, argv: list[str], expect: str, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    out = cli(*argv, "--store", str(tmp_path / "s.db"))
    assert out.code == 2, out.err
    assert expect in out.err, out.err
    assert not (tmp_path / "state").exists() and not (tmp_path / "s.db").exists()


def test_resume_of_an_unknown_group(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    out = cli("kernels", "run", "--resume")
    assert out.code == 2 and "no kernels group to resume" in out.err


def test_check_command_says_accelerator(cli, tmp_path: Path) -> None:
    out = cli("kernels", "check", "--kvm-device", str(tmp_path / "kvm"))
    assert "kvm: not usable" in out.out and "does not exist" in out.out and "accelerator: tcg" in out.out
    assert out.code in (0, 9)  # 9: qemu or the guest's probe missing here, said as an error
    assert (out.code == 9) == ("error: kernels cannot boot here" in out.err)


def test_check_command_without_a_probe_is_an_error(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OSMETER_PROBE", "/nonexistent/osmeter-probe")
    out = cli("kernels", "check")
    assert out.code == 9 and "error: kernels cannot boot here" in out.err and "guest probe:" in out.out


def test_guest_lines_keep_what_is_not_a_record_for_ingest_to_refuse() -> None:
    img = images.KernelImage(images.parse_spec("/k"), Path("/k"), "6.1", "6.1 x", "ab", None, None, "path")
    lines = [b"garbage", b"[1,2]", b'{"type": "result", "flags": []}']
    out = kr.guest_lines(lines, True, img, "tcg")
    assert out[:2] == lines[:2] and json.loads(out[2])["flags"] == [EMULATED]  # spacing does not hide a result


@pytest.mark.slow  # one second: the bound is checked once a second
def test_a_guest_writing_without_end_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in for qemu that fills the channel: stopped once it passes the bound, not at the timeout."""
    monkeypatch.setattr(qemu, "MAX_CHANNEL_BYTES", 1 << 20)
    monkeypatch.setattr(qemu, "Qmp", lambda *a, **k: type("Q", (), {"execute": lambda self, c: [],
                                                                  "close": lambda self: None})())
    script = (f"import time\nf = open({str(tmp_path / 'channel')!r}, 'wb')\n"
              "while True:\n    f.write(b'x' * 65536); f.flush(); time.sleep(0.01)\n")
    started = time.monotonic()
    out = qemu.boot([sys.executable, "-c", script], tmp_path, 60)
    assert out.status == "too-much" and time.monotonic() - started < 30
    assert "more than 1 MiB" in kr.failure(out, channel.decode(b""), 1, 60)


def test_cleanup_is_not_cut_short_by_a_signal(tmp_path: Path) -> None:
    """A SIGTERM that comes while a work directory is removed is raised after it is gone."""
    import signal as sig

    from osmeter.kernels import cleanup

    class Stop(Exception):
        pass

    def stop(*_):
        raise Stop

    old = sig.signal(sig.SIGTERM, stop)
    try:
        with pytest.raises(Stop):
            with cleanup.work_dir("w.", tmp_path) as w:
                (w / "f").write_text("x")
                with cleanup.deferred():
                    os.kill(os.getpid(), sig.SIGTERM)  # held back: the block goes on
                    made = w / "g"
                    made.write_text("y")
                assert False, "the signal is raised when the deferred block ends"  # pragma: no cover
        assert not list(tmp_path.glob("w.*"))
    finally:
        sig.signal(sig.SIGTERM, old)

"""The static probe for each host's architecture.

A host's architecture comes from Ansible's facts (`ansible_architecture`,
which is `uname -m`) and is mapped to one of ARCHES. The probe of this
machine's own architecture is the installed one (osmeter.probe.locate_probe);
the others are cross-built on demand from osmeter's source tree with its
toolchain files (cmake/toolchains/<prefix>.cmake) into the cache,
$XDG_CACHE_HOME/osmeter/probes/<version>/<arch>/, next to a stamp of the
sources they were built from (a changed source tree builds them again).
`--probe ARCH=PATH` gives a probe of one's own instead.

Every probe sent to a host must be a static ELF executable of the host's
machine: the host's libc is unknown, so a dynamically linked probe is refused
(with the way to build a static one), and so is one of the wrong machine,
and anything that is not a regular file (a FIFO, a device).
osmeter-exec-helper (task.posix_spawn, task.exec) goes along when it is next
to the probe; without it those benchmarks skip on the host, saying why.

With a staging directory (the fleet run's private one) each probe is first
copied there within bounds (osmeter.inputs.read_bounded, MAX_PROBE_BYTES),
and the copy is checked and sent: Ansible reads nothing the user named, and
what was checked is what is sent.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import stat
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..errors import ProbeError, UsageError
from ..inputs import MIB, read_bounded
from ..probe import PROBE_NAME, locate_probe

HELPER_NAME = "osmeter-exec-helper"
MAX_PROBE_BYTES = 256 * MIB  # a static probe is a few MiB
ENV_SOURCE = "OSMETER_SOURCE"  # a checkout of osmeter to cross-build probes from
BUILD_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class Arch:
    name: str  # osmeter's name (--probe ARCH=PATH, the cache directory)
    unames: tuple[str, ...]  # `uname -m` / ansible_architecture values
    prefix: str  # GNU triplet: the compiler prefix and cmake/toolchains/<prefix>.cmake
    elf_machine: int  # e_machine
    elf_class: int  # 1: 32-bit, 2: 64-bit
    package: str  # the Debian package of the cross compiler


ARCHES = (
    Arch("x86-64", ("x86_64", "amd64"), "x86_64-linux-gnu", 62, 2, "gcc-x86-64-linux-gnu"),
    Arch("aarch64", ("aarch64", "arm64", "armv8"), "aarch64-linux-gnu", 183, 2, "gcc-aarch64-linux-gnu"),
    # armv8l: a 32-bit userland on a 64-bit Arm kernel, which runs armv7 code.
    Arch("armv7", ("armv7l", "armv7", "armv8l", "armhf"), "arm-linux-gnueabihf", 40, 1, "gcc-arm-linux-gnueabihf"),
    Arch("riscv64", ("riscv64",), "riscv64-linux-gnu", 243, 2, "gcc-riscv64-linux-gnu"),
)
ARCH_NAMES = tuple(a.name for a in ARCHES)


def arch_named(name: str) -> Arch:
    for a in ARCHES:
        if a.name == name:
            return a
    raise UsageError(f"unknown architecture {name!r}: one of {', '.join(ARCH_NAMES)}")


def arch_of(uname: str) -> Arch:
    """The Arch for a `uname -m` value; ProbeError naming the ones osmeter builds."""
    text = uname.strip().lower()
    for a in ARCHES:
        if text in a.unames or text == a.name:
            return a
    raise ProbeError(f"no osmeter probe for the architecture {uname.strip()!r} (uname -m); osmeter builds probes "
                     f"for {', '.join(ARCH_NAMES)}")


@dataclass(frozen=True)
class ProbeSet:
    """What is copied to a host: the probe and, if there is one, its exec helper."""

    arch: Arch
    probe: Path
    helper: Path | None
    origin: str  # "installed", "cache", "built", "--probe"


def elf_problem(path: Path, arch: Arch, shown: Path | None = None) -> str | None:
    """Why `path` cannot run on a host of `arch` (None: it is a static ELF
    executable of that machine); messages name `shown` (default: path).
    Reads the ELF and program headers: a static executable has no PT_INTERP
    (no dynamic loader). Never opens a FIFO or a device for reading."""
    name = shown or path
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as e:
        return f"cannot read {name}: {e.strerror}"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return f"{name} is not a regular file"
        os.set_blocking(fd, True)
    except OSError as e:
        os.close(fd)
        return f"cannot read {name}: {e.strerror}"
    return _elf_headers(fd, name, arch)


def _elf_headers(fd: int, path: Path, arch: Arch) -> str | None:
    """elf_problem's reading of the headers (closes fd)."""
    try:
        with os.fdopen(fd, "rb") as f:
            head = f.read(64)
            if len(head) < 52 or head[:4] != b"\x7fELF":
                return f"{path} is not an ELF executable"
            cls, data = head[4], head[5]
            order = "<" if data == 1 else ">"
            machine = struct.unpack_from(order + "H", head, 18)[0]
            if machine != arch.elf_machine or cls != arch.elf_class:
                return f"{path} is not an {arch.name} executable (ELF machine {machine}, class {cls})"
            if cls == 2:
                phoff, = struct.unpack_from(order + "Q", head, 32)
                phentsize, phnum = struct.unpack_from(order + "HH", head, 54)
            else:
                phoff, = struct.unpack_from(order + "I", head, 28)
                phentsize, phnum = struct.unpack_from(order + "HH", head, 42)
            for i in range(phnum):
                f.seek(phoff + i * phentsize)
                entry = f.read(4)
                if len(entry) < 4:
                    return f"{path} is cut short (its program headers are missing)"
                if struct.unpack(order + "I", entry)[0] == 3:  # PT_INTERP
                    return (f"{path} is dynamically linked: a host's libc may not run it. osmeter sends static "
                            "probes only; build with -DOSM_STATIC=ON and the C library's static files "
                            "(Debian: libc6-dev, or libc6-dev-<arch>-cross for a cross build)")
    except OSError as e:
        return f"cannot read {path}: {e.strerror}"
    return None


def native_arch() -> Arch | None:
    try:
        return arch_of(platform.machine())
    except ProbeError:
        return None


def source_tree(env: Mapping[str, str] = os.environ) -> Path | None:
    """osmeter's source tree: $OSMETER_SOURCE, else the checkout this package
    runs from, else the probe's sources installed with the package (probe-source)."""
    given = env.get(ENV_SOURCE)
    package = Path(__file__).resolve().parents[1]
    candidates = [Path(given).expanduser()] if given else [package.parents[1], package / "probe-source"]
    for root in candidates:
        if (root / "probe" / "CMakeLists.txt").is_file() and (root / "cmake" / "toolchains").is_dir():
            return root
    return None


def source_stamp(root: Path) -> str:
    """A digest of everything a probe build reads (probe/, cmake/, CMakeLists.txt)."""
    digest = hashlib.sha256()
    files = [root / "CMakeLists.txt"]
    for sub in ("probe", "cmake"):
        files += sorted(p for p in (root / sub).rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for path in files:
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def cache_root(env: Mapping[str, str] = os.environ) -> Path:
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(base) / "osmeter" / "probes"


def project_version(root: Path) -> str:
    for line in (root / "CMakeLists.txt").read_text().splitlines():
        if line.startswith("project(") and "VERSION" in line:
            return line.split("VERSION", 1)[1].split()[0]
    return "unknown"


def missing_compiler(arch: Arch) -> str | None:
    """The message for a cross compiler that is not installed, or None."""
    if shutil.which(f"{arch.prefix}-gcc"):
        return None
    return (f"cannot build the {arch.name} probe: the cross compiler {arch.prefix}-gcc is missing "
            f"(Debian: apt-get install {arch.package}); or give a static {arch.name} probe with "
            f"--probe {arch.name}=PATH")


def _helper_beside(probe: Path) -> Path | None:
    helper = probe.parent / HELPER_NAME
    return helper if helper.is_file() and os.access(helper, os.X_OK) else None


def _staged(src: Path, dest: Path, what: str) -> Path:
    """A copy of the regular file `src` at `dest`, read within MAX_PROBE_BYTES; ProbeError otherwise."""
    try:
        regular = stat.S_ISREG(os.stat(src).st_mode)
    except OSError as e:
        raise ProbeError(f"{what}: cannot read {src}: {e.strerror}") from None
    if not regular:
        raise ProbeError(f"{what}: {src} is not a regular file")
    data = read_bounded(src, MAX_PROBE_BYTES, what=what, error=ProbeError)
    dest.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o700)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return dest


def _checked(arch: Arch, probe: Path, origin: str, staging: Path | None = None) -> ProbeSet:
    """The probe set of `probe` for `arch`, checked (with staging: copied there
    first, and the copies checked and sent); ProbeError when it cannot run there."""
    probe = Path(os.path.abspath(probe))
    what = f"the {arch.name} probe ({origin})"
    sent = _staged(probe, staging / arch.name / PROBE_NAME, what) if staging else probe
    problem = elf_problem(sent, arch, shown=probe)
    if problem:
        raise ProbeError(f"{what}: {problem}")
    helper = _helper_beside(probe)
    if helper is not None and staging:
        try:
            helper = _staged(helper, staging / arch.name / HELPER_NAME, f"the {arch.name} {HELPER_NAME}")
        except ProbeError:
            helper = None
    if helper is not None and elf_problem(helper, arch):
        helper = None  # a helper that cannot run there is left behind: those benchmarks skip, saying why
    return ProbeSet(arch, sent, helper, origin)


class ProbeFinder:
    """Finds or builds each architecture's probe once per fleet run."""

    def __init__(self, given: Mapping[str, Path], env: Mapping[str, str] = os.environ,
                 staging: Path | None = None) -> None:
        self._given = {name: Path(os.path.abspath(path)) for name, path in given.items()}  # here, not Ansible's
        self._env = env
        self._staging = staging  # where each probe is copied before it is checked and sent
        self._found: dict[str, ProbeSet | ProbeError] = {}

    def probe_for(self, arch: Arch) -> ProbeSet:
        """The probe set for `arch`; ProbeError (with the fix) when there is none."""
        if arch.name not in self._found:
            try:
                self._found[arch.name] = self._find(arch)
            except ProbeError as e:
                self._found[arch.name] = e
        found = self._found[arch.name]
        if isinstance(found, ProbeError):
            raise found
        return found

    def _find(self, arch: Arch) -> ProbeSet:
        if arch.name in self._given:
            return _checked(arch, self._given[arch.name], f"--probe {arch.name}", self._staging)
        if native_arch() == arch:
            return _checked(arch, locate_probe(self._env), "installed", self._staging)
        root = source_tree(self._env)
        if root is None:
            raise ProbeError(f"cannot build the {arch.name} probe: osmeter's probe sources are not here (neither a "
                             f"checkout nor the package's probe-source); set {ENV_SOURCE} to a checkout of osmeter, "
                             f"or give a static {arch.name} probe with --probe {arch.name}=PATH")
        return self._cached_or_built(arch, root)

    def _cached_or_built(self, arch: Arch, root: Path) -> ProbeSet:
        toolchain = root / "cmake" / "toolchains" / f"{arch.prefix}.cmake"
        if not toolchain.is_file():
            raise ProbeError(f"cannot build the {arch.name} probe: osmeter has no toolchain file for it "
                             f"({toolchain}); give a static {arch.name} probe with --probe {arch.name}=PATH")
        stamp = source_stamp(root)
        target = cache_root(self._env) / project_version(root) / arch.name
        if (target / "source.sha256").is_file() and (target / "source.sha256").read_text().strip() == stamp \
                and (target / PROBE_NAME).is_file():
            return _checked(arch, target / PROBE_NAME, f"cache {target}", self._staging)
        why = missing_compiler(arch)
        if why:
            raise ProbeError(why)
        build_probe(root, toolchain, target, stamp)
        return _checked(arch, target / PROBE_NAME, f"built into {target}", self._staging)


def build_probe(root: Path, toolchain: Path, target: Path, stamp: str) -> None:
    """Cross-build the probe and its helper into `target` (replaced whole, the
    stamp written last); the build directory is removed on every path."""
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".build.", dir=target.parent))
    try:
        steps = (
            ["cmake", "-S", str(root), "-B", str(work / "b"), f"-DCMAKE_TOOLCHAIN_FILE={toolchain}",
             "-DOSM_TESTS=OFF", "-DOSM_STATIC=ON", "-DCMAKE_BUILD_TYPE=Release"],
            ["cmake", "--build", str(work / "b"), "-j2", "--target", PROBE_NAME, HELPER_NAME],
        )
        for argv in steps:
            try:
                p = subprocess.run(argv, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
            except FileNotFoundError:
                raise ProbeError("cannot build a probe: cmake is missing (Debian: apt-get install cmake)") from None
            except subprocess.TimeoutExpired:
                raise ProbeError(f"`{' '.join(argv)}` took more than {BUILD_TIMEOUT_S:.0f} s") from None
            if p.returncode != 0:
                tail = (p.stdout + p.stderr).strip()[-1500:]
                raise ProbeError(f"building the probe with {toolchain.name} failed: `{' '.join(argv)}`:\n{tail}")
        fresh = work / "out"
        fresh.mkdir()
        for name in (PROBE_NAME, HELPER_NAME):
            shutil.copy2(work / "b" / "probe" / name, fresh / name)
        (fresh / "source.sha256").write_text(stamp + "\n")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(fresh, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)

"""Cross builds of the probe (aarch64, armv7, riscv64) for qemu-user, shared
by test_cross.py and test_init.py: each target is built once per session,
whichever test asks first. A missing cross compiler or qemu skips with the
Debian package to install, or fails with OSMETER_REQUIRE_CROSS=1 /
OSMETER_REQUIRE_QEMU=1."""
from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from probe_helpers import REPO, optional_tool_missing


@dataclass(frozen=True)
class Target:
    name: str         # pytest id
    prefix: str       # GNU triplet: compiler prefix, sysroot /usr/<prefix>, toolchain file
    qemu: str         # qemu-user binary
    probe_arch: str   # meta.build.arch (OSM_ARCH_NAME in probe/src/arch/)


TARGETS = [
    Target("aarch64", "aarch64-linux-gnu", "qemu-aarch64-static", "aarch64"),
    Target("armv7", "arm-linux-gnueabihf", "qemu-arm-static", "arm"),
    Target("riscv64", "riscv64-linux-gnu", "qemu-riscv64-static", "riscv64"),
]
TARGET = {t.name: t for t in TARGETS}


@dataclass(frozen=True)
class CrossBuild:
    target: Target
    build_dir: Path
    probe: Path
    seconds: float  # configure + build

    def emulator(self) -> list[str]:
        # -L is only needed if the libc could not link statically (OSM_STATIC
        # falls back to dynamic quietly); it is harmless otherwise.
        return [shutil.which(self.target.qemu) or self.target.qemu, "-L", f"/usr/{self.target.prefix}"]

    def command(self, *args: str) -> list[str]:
        return [*self.emulator(), str(self.probe), *args]


def tools_or_skip(t: Target) -> None:
    if not shutil.which("cmake"):
        optional_tool_missing("cmake is missing (Debian: apt-get install cmake)", "cross")
    if not shutil.which(f"{t.prefix}-gcc"):
        optional_tool_missing(f"{t.prefix}-gcc is missing (Debian: apt-get install gcc-{t.prefix})", "cross")
    if not shutil.which(t.qemu):
        optional_tool_missing(f"{t.qemu} is missing (Debian: apt-get install qemu-user-static)", "qemu")


_built: dict[str, CrossBuild] = {}


def cross_build(t: Target, tmp_path_factory: pytest.TempPathFactory) -> CrossBuild:
    """The probe built for `t` with -Werror (once per session), or a skip."""
    tools_or_skip(t)
    if t.name in _built:
        return _built[t.name]
    b = tmp_path_factory.mktemp(f"cross-{t.name}")
    toolchain = REPO / "cmake" / "toolchains" / f"{t.prefix}.cmake"
    assert toolchain.exists(), toolchain
    start = time.monotonic()
    p = subprocess.run(
        ["cmake", "-S", str(REPO), "-B", str(b), f"-DCMAKE_TOOLCHAIN_FILE={toolchain}",
         "-DOSM_WERROR=ON"],
        capture_output=True, text=True,
    )
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    p = subprocess.run(["cmake", "--build", str(b), "-j2"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-6000:]
    probe = b / "probe" / "osmeter-probe"
    assert probe.exists()
    _built[t.name] = CrossBuild(t, b, probe, time.monotonic() - start)
    return _built[t.name]

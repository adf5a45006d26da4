"""The kernels `osmeter kernels run --kernel K` boots (docs/kernels.md, "Which kernels").

K is one of:

* a path to an x86 kernel image (bzImage, /boot/vmlinuz-*), with options
  after commas: `PATH,initrd=FILE` (an initramfs added under osmeter's:
  its modules, firmware), `PATH,modules=DIR` (a modules tree put in the
  initramfs at /lib/modules/RELEASE), `PATH,config=FILE` (the image's
  .config, hashed into the run);
* the release of an installed kernel (`6.1.0-27-amd64`: /boot/vmlinuz-RELEASE,
  its config /boot/config-RELEASE);
* `deb:PACKAGE` (`deb:linux-image-rt-amd64`, or `deb:PACKAGE=VERSION`): the
  Debian package downloaded with `apt-get download` and its /boot unpacked
  into the cache ($XDG_CACHE_HOME/osmeter/kernels/PACKAGE_VERSION/), never
  installed; a metapackage is followed to the linux-image package it
  depends on.

An image is read within bounds and must be an x86 bzImage (its boot
header's "HdrS"); its release and build string come from the header's
kernel_version field, so every kernel has a name even without a config.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from ..errors import UsageError
from ..inputs import MIB, read_bounded
from .cleanup import work_dir

MAX_IMAGE_BYTES = 256 * MIB
MAX_CONFIG_BYTES = 16 * MIB
BOOT = Path("/boot")
APT_TIMEOUT_S = 900.0
DEB_PREFIX = "deb:"
OPTIONS = ("initrd", "modules", "config")
_RELEASE = re.compile(r"[0-9][A-Za-z0-9._+~-]{0,127}")
_PACKAGE = re.compile(r"[a-z0-9][a-z0-9+.-]{1,127}(=[A-Za-z0-9.+~:-]{1,128})?")


@dataclass(frozen=True)
class KernelSpec:
    """A --kernel argument, parsed (nothing read yet)."""

    text: str  # as given
    kind: str  # path / release / deb
    value: str  # the path, release or package
    initrd: Path | None = None
    modules: Path | None = None
    config: Path | None = None


@dataclass(frozen=True)
class KernelImage:
    """A kernel ready to boot."""

    spec: KernelSpec
    image: Path
    release: str  # off the image's header
    build: str  # the header's whole kernel_version string (compiler, date, PREEMPT_RT ...)
    sha256: str
    config: Path | None
    config_sha256: str | None
    origin: str  # "path", "/boot", "deb PACKAGE VERSION"

    @property
    def name(self) -> str:
        """The run's host name in the group: the release."""
        return self.release


def parse_spec(text: str) -> KernelSpec:
    """argparse-free parsing of one --kernel value; UsageError on a malformed one."""
    if not text or len(text) > 4096 or "\n" in text:
        raise UsageError(f"--kernel {text[:80]!r}: expected a kernel image path, an installed release or deb:PACKAGE")
    if text.startswith(DEB_PREFIX):
        package = text[len(DEB_PREFIX):]
        if not _PACKAGE.fullmatch(package):
            raise UsageError(f"--kernel {text}: {package!r} is not a Debian package name (deb:PACKAGE or "
                             "deb:PACKAGE=VERSION, e.g. deb:linux-image-rt-amd64)")
        return KernelSpec(text, "deb", package)
    head, *opts = text.split(",")
    extra: dict[str, Path] = {}
    for opt in opts:
        key, sep, value = opt.partition("=")
        if not sep or key not in OPTIONS or not value:
            raise UsageError(f"--kernel {text}: {opt!r} is not one of {', '.join(k + '=PATH' for k in OPTIONS)}")
        if key in extra:
            raise UsageError(f"--kernel {text}: {key}= is given twice")
        extra[key] = Path(os.path.abspath(Path(value).expanduser()))
    if "/" not in head and _RELEASE.fullmatch(head) and not Path(head).exists():
        return KernelSpec(text, "release", head, **extra)
    return KernelSpec(text, "path", os.path.abspath(Path(head).expanduser()), **extra)


def bzimage_version(data: bytes, shown: str) -> str:
    """The kernel_version string of an x86 bzImage's boot header; UsageError for anything else."""
    if len(data) < 0x210 or data[0x202:0x206] != b"HdrS":
        hint = ""
        if len(data) > 0x40 and data[0x38:0x3C] == b"ARM\x64":
            hint = " (it is an arm64 Image: osmeter kernels boots x86-64 kernels; use fleet run on an ARM board)"
        raise UsageError(f"{shown} is not an x86 kernel image (no bzImage boot header){hint}")
    protocol = int.from_bytes(data[0x206:0x208], "little")
    pointer = int.from_bytes(data[0x20E:0x210], "little")
    if protocol < 0x200 or not pointer or pointer + 0x200 >= len(data):
        raise UsageError(f"{shown}: its boot header (protocol {protocol:#x}) names no kernel version")
    raw = data[pointer + 0x200: pointer + 0x200 + 512].split(b"\0", 1)[0]
    text = raw.decode("ascii", errors="replace").strip()
    if not text:
        raise UsageError(f"{shown}: its boot header's kernel version is empty")
    return text


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_image(spec: KernelSpec, image: Path, config: Path | None, origin: str) -> KernelImage:
    """Read and check `image` (and `config`) within bounds; a FIFO or a device is refused unread."""
    for what, path in (("kernel image", image), ("kernel config", config)):
        if path is not None and path.exists() and not path.is_file():
            raise UsageError(f"{path}: the {what} is not a regular file")
    data = read_bounded(image, MAX_IMAGE_BYTES, what="kernel image")
    build = bzimage_version(data, str(image))
    release = build.split()[0]
    if not _RELEASE.fullmatch(release):
        raise UsageError(f"{image}: its kernel version {release[:80]!r} is not a release name")
    config_sha = None
    if config is not None:
        config_sha = _sha256(read_bounded(config, MAX_CONFIG_BYTES, what="kernel config"))
    for what, path in (("initrd", spec.initrd), ("modules", spec.modules)):
        if path is not None and not (path.is_dir() if what == "modules" else path.is_file()):
            kind = "directory" if what == "modules" else "file"
            raise UsageError(f"--kernel {spec.text}: {what}={path} is not a {kind}")
    return KernelImage(spec, image, release, build, _sha256(data), config, config_sha, origin)


def cache_root(env: Mapping[str, str] = os.environ) -> Path:
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(base) / "osmeter" / "kernels"


Runner = Callable[..., subprocess.CompletedProcess]


def resolve(spec: KernelSpec, env: Mapping[str, str] = os.environ, run: Runner = subprocess.run,
            boot: Path = BOOT, say: Callable[[str], None] = lambda _: None) -> KernelImage:
    """The kernel image `spec` names, read and checked (deb: downloaded and unpacked first)."""
    if spec.kind == "release":
        image = boot / f"vmlinuz-{spec.value}"
        if not image.is_file():
            raise UsageError(f"--kernel {spec.text}: no file {image} (not a path, and no installed kernel of that "
                             "release); give the image's path, an installed release, or deb:PACKAGE")
        config = spec.config or (boot / f"config-{spec.value}")
        return load_image(spec, image, config if config.is_file() else None, str(boot))
    if spec.kind == "path":
        image = Path(spec.value)
        if not image.exists():
            raise UsageError(f"--kernel {spec.text}: no such file {image}")
        config = spec.config
        if config is None:  # /boot/vmlinuz-R beside /boot/config-R
            name = image.name
            guess = image.with_name("config-" + name[len("vmlinuz-"):]) if name.startswith("vmlinuz-") else None
            config = guess if guess is not None and guess.is_file() else None
        return load_image(spec, image, config, "path")
    return _from_deb(spec, cache_root(env), run, say)


# --- Debian packages ----------------------------------------------------------------------------------


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin:/usr/bin:/bin")
    if not found:
        raise UsageError(f"--kernel deb:...: needs {name} (a Debian or Ubuntu machine: apt and dpkg)")
    return found


def _checked_run(run: Runner, argv: list[str], what: str, cwd: Path | None = None) -> str:
    try:
        done = run(argv, cwd=cwd, capture_output=True, text=True, timeout=APT_TIMEOUT_S,
                   env={**os.environ, "LC_ALL": "C", "DEBIAN_FRONTEND": "noninteractive"})
    except subprocess.TimeoutExpired:
        raise UsageError(f"{what}: `{' '.join(argv)}` took more than {APT_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        lines = [ln for ln in (done.stderr or "").splitlines() if ln.startswith(("E:", "dpkg-deb"))] or \
            (done.stderr or done.stdout or "").strip().splitlines()[-3:]
        raise UsageError(f"{what}: `{' '.join(argv)}` failed (exit {done.returncode}): "
                         + (" / ".join(lines) or "no message"))
    return done.stdout


def _download(package: str, directory: Path, run: Runner) -> Path:
    """`apt-get download PACKAGE` into `directory`; the .deb it wrote."""
    _checked_run(run, [_tool("apt-get"), "download", "-q", package], f"--kernel deb:{package}", cwd=directory)
    name = package.partition("=")[0]
    debs = sorted(directory.glob(f"{name}_*.deb"))
    if not debs:
        raise UsageError(f"--kernel deb:{package}: apt-get download wrote no {name}_*.deb")
    return debs[-1]


def _fields(package: str, run: Runner) -> dict[str, str]:
    """The candidate's Package, Version and Depends, from apt's lists (`apt-cache show`: nothing downloaded)."""
    out = _checked_run(run, [_tool("apt-cache"), "show", "--no-all-versions", package], f"--kernel deb:{package}")
    fields: dict[str, str] = {}
    for line in out.splitlines():
        if not line.strip():
            break  # the first stanza
        key, sep, value = line.partition(":")
        if sep and not key.startswith(" "):
            fields.setdefault(key.strip(), value.strip())
    if "Package" not in fields or "Version" not in fields:
        raise UsageError(f"--kernel deb:{package}: apt-cache show gave no Package and Version")
    return fields


def _image_dependency(depends: str) -> str | None:
    """The linux-image package a metapackage depends on (`linux-image-6.1.0-27-rt-amd64 (= 6.1.115-1)`)."""
    for alternative in depends.split(","):
        name = alternative.split("|")[0].split("(")[0].strip()
        if name.startswith("linux-image-"):
            return name
    return None


def _from_deb(spec: KernelSpec, root: Path, run: Runner, say: Callable[[str], None]) -> KernelImage:
    """A metapackage is followed to the image package it depends on (apt's lists only); an image
    package already unpacked in the cache is used as it is; else it is downloaded and unpacked."""
    root.mkdir(parents=True, exist_ok=True)
    package = spec.value
    for _ in range(3):
        fields = _fields(package, run)
        name, version = fields["Package"], fields["Version"]
        target = root / f"{name}_{version}".replace("/", "_").replace(":", "%")
        found = _boot_files(target)
        if found is None:
            nxt = _image_dependency(fields.get("Depends", ""))
            if nxt is not None:  # a metapackage
                package = nxt
                continue
            found = _download_and_unpack(f"{name}={version}", target, root, run, say)
        image, config = found
        return load_image(spec, image, spec.config or config, f"deb {name} {version}")
    raise UsageError(f"--kernel {spec.text}: no kernel image after following three packages' dependencies")


def _download_and_unpack(package: str, target: Path, root: Path, run: Runner,
                         say: Callable[[str], None]) -> tuple[Path, Path | None]:
    with work_dir("download.", root) as tmp:
        os.chmod(tmp, 0o755)  # apt's _apt user writes the partial file
        say(f"downloading {package} (apt-get download)")
        deb = _download(package, tmp, run)
        found = _unpack(deb, target, run)
    if found is None:
        raise UsageError(f"--kernel deb:{package}: the package holds no /boot/vmlinuz-* and depends on no "
                         "linux-image-* package")
    return found


def _boot_files(target: Path) -> tuple[Path, Path | None] | None:
    images = sorted((target / "boot").glob("vmlinuz-*")) if target.is_dir() else []
    if not images:
        return None
    config = images[0].with_name("config-" + images[0].name[len("vmlinuz-"):])
    return images[0], config if config.is_file() else None


def _unpack(deb: Path, target: Path, run: Runner) -> tuple[Path, Path | None] | None:
    """The deb's ./boot unpacked into `target` (a fresh directory, renamed into
    place when complete); None when it has no kernel image (a metapackage)."""
    listing = _checked_run(run, [_tool("dpkg-deb"), "-c", str(deb)], f"listing {deb}")
    if not re.search(r"\./boot/vmlinuz-", listing):
        return None
    with work_dir(".unpack.", target.parent) as partial:
        fsys = subprocess.Popen([_tool("dpkg-deb"), "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
        try:
            _checked_run(lambda argv, **kw: subprocess.run(argv, stdin=fsys.stdout, **kw),
                         ["tar", "-x", "-C", str(partial), "./boot/"], f"unpacking {deb}")
        finally:
            assert fsys.stdout is not None
            fsys.stdout.close()
            fsys.wait(timeout=APT_TIMEOUT_S)
        if target.exists():
            shutil.rmtree(target)
        partial.rename(target)  # the work directory's removal then finds nothing
    return _boot_files(target)

"""Whether KVM works here for an x86 kernel: not whether /dev/kvm exists,
but whether a VM can be made and run guest code.

The check opens the device, asks its API version (KVM_GET_API_VERSION must
be 12, the stable API), creates a VM (KVM_CREATE_VM) with one page of
memory and one vCPU, runs a `hlt` in real mode there (KVM_RUN must exit
with KVM_EXIT_HLT), and reads which KVM the kernel has: hardware
virtualisation (the kvm_intel or kvm_amd module) boots any kernel; PVM
(kvm_pvm, a KVM on page tables, without VT-x/SVM) runs that `hlt` but boots
only kernels built as PVM guests, so a standard kernel hangs at its first
page table. A step that fails (no node, no access, nested virtualisation
off, PVM) is reported by name: osmeter then boots under TCG and says so.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path

DEVICE = "/dev/kvm"
KVM_GET_API_VERSION = 0xAE00  # _IO(KVMIO, 0x00)
KVM_CREATE_VM = 0xAE01  # _IO(KVMIO, 0x01)
KVM_API_VERSION = 12
KVM_GET_VCPU_MMAP_SIZE = 0xAE04
KVM_CREATE_VCPU = 0xAE41
KVM_SET_USER_MEMORY_REGION = 0x4020AE46  # _IOW(KVMIO, 0x46, struct kvm_userspace_memory_region): 32 bytes
KVM_GET_SREGS = 0x8138AE83  # struct kvm_sregs: 312 bytes
KVM_SET_SREGS = 0x4138AE84
KVM_SET_REGS = 0x4090AE82  # struct kvm_regs: 18 x u64
KVM_RUN = 0xAE80
KVM_EXIT_HLT = 5
SYS_MODULE = Path("/sys/module")
HARDWARE_MODULES = ("kvm_intel", "kvm_amd")


@dataclass(frozen=True)
class KvmCheck:
    usable: bool
    reason: str  # why not (or "a VM was created")


def check(device: str = DEVICE, sys_module: Path = SYS_MODULE) -> KvmCheck:
    """Can this process boot an x86 kernel under KVM through `device`?"""
    try:
        fd = os.open(device, os.O_RDWR | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        return KvmCheck(False, f"{device} does not exist (no KVM: a VM without nested virtualisation, or the "
                        "kvm module not loaded)")
    except OSError as e:
        return KvmCheck(False, f"cannot open {device}: {e.strerror} (add yourself to the kvm group, or run as root)")
    try:
        try:
            version = fcntl.ioctl(fd, KVM_GET_API_VERSION, 0)
        except OSError as e:
            return KvmCheck(False, f"{device} is not a KVM device (KVM_GET_API_VERSION: {e.strerror})")
        if version != KVM_API_VERSION:
            return KvmCheck(False, f"{device} speaks KVM API {version}, not {KVM_API_VERSION}")
        try:
            vm = fcntl.ioctl(fd, KVM_CREATE_VM, 0)
        except OSError as e:
            hint = " (no hardware virtualisation here: nested virtualisation is off)" \
                if e.errno in (errno.ENODEV, errno.EOPNOTSUPP, errno.ENXIO, errno.EIO) else ""
            return KvmCheck(False, f"{device} cannot create a virtual machine (KVM_CREATE_VM: {e.strerror}){hint}")
        try:
            problem = _run_hlt(fd, vm)
        finally:
            os.close(vm)
        if problem:
            return KvmCheck(False, f"{device} made a VM but it cannot run guest code: {problem}")
    finally:
        os.close(fd)
    return kind_of_kvm(sys_module)


def kind_of_kvm(sys_module: Path = SYS_MODULE) -> KvmCheck:
    """Hardware KVM (kvm_intel, kvm_amd), PVM (kvm_pvm: standard kernels do not boot), or unknown (trusted)."""
    for name in HARDWARE_MODULES:
        if (sys_module / name).exists():
            return KvmCheck(True, f"a VM ran guest code ({name}: hardware virtualisation)")
    if (sys_module / "kvm_pvm").exists():
        return KvmCheck(False, "KVM here is PVM (module kvm_pvm: no hardware virtualisation, a KVM on page tables) "
                        "and boots only kernels built as PVM guests; a standard kernel hangs at its first page table")
    return KvmCheck(True, "a VM ran guest code")


def _run_hlt(kvm: int, vm: int) -> str | None:
    """One page of guest memory holding `hlt`, one vCPU in real mode at 0:0, run once;
    None when it exits with KVM_EXIT_HLT, else what went wrong."""
    mem = mmap.mmap(-1, mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                    prot=mmap.PROT_READ | mmap.PROT_WRITE)
    holder = ctypes.c_char.from_buffer(mem)
    vcpu = -1
    try:
        mem.write(b"\xf4")  # hlt
        region = struct.pack("=IIQQQ", 0, 0, 0, mmap.PAGESIZE, ctypes.addressof(holder))
        fcntl.ioctl(vm, KVM_SET_USER_MEMORY_REGION, region)
        vcpu = fcntl.ioctl(vm, KVM_CREATE_VCPU, 0)
        size = fcntl.ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0)
        sregs = bytearray(fcntl.ioctl(vcpu, KVM_GET_SREGS, bytes(312)))
        sregs[0:8] = bytes(8)  # cs.base = 0
        sregs[12:14] = bytes(2)  # cs.selector = 0
        fcntl.ioctl(vcpu, KVM_SET_SREGS, bytes(sregs))
        regs = bytearray(144)
        struct.pack_into("=QQ", regs, 16 * 8, 0, 2)  # rip = 0, rflags = 2 (the reserved bit)
        fcntl.ioctl(vcpu, KVM_SET_REGS, bytes(regs))
        with mmap.mmap(vcpu, size, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE) as run:
            fcntl.ioctl(vcpu, KVM_RUN, 0)
            reason = struct.unpack_from("=I", run, 8)[0]
        return None if reason == KVM_EXIT_HLT else f"KVM_RUN exited with reason {reason}, not {KVM_EXIT_HLT} (hlt)"
    except OSError as e:
        return f"{e.strerror} (errno {e.errno})"
    finally:
        if vcpu >= 0:
            os.close(vcpu)
        del holder
        mem.close()

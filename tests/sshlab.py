"""N "remote machines" reached over SSH, for `osmeter fleet run`: netlab's
namespace labs (one namespace and veth pair each, `index` 0..N-1), each with
netlab's sshd in it (the lab's host key, root's authorized key made for the
lab alone, no PAM), and no sshfs mount.

    with ssh_hosts(3) as hosts:
        write_inventory(hosts, tmp_path / "inventory.ini")
        hosts[1].kill_sshd()       # the listener and every session: connections drop
        hosts[1].restart_sshd()

The namespaces share this machine's file systems, so a "host" runs this
machine's /usr/bin/python3 for Ansible's modules, and its /tmp is ours.
Ansible's remote temporary files go to a directory in the lab's own
directory (ansible_remote_tmp), so they go with the lab. Teardown is
netlab's: every process in the namespaces, the veth pairs, the namespaces,
the keys and directories; netlab.leftovers() checks that nothing is left.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import netlab

PYTHON = "/usr/bin/python3"  # what Ansible's modules run with on the "hosts"


def missing() -> str | None:
    """Why no SSH hosts can be built here (with the packages to install), or None."""
    if os.geteuid() != 0:
        return "the SSH hosts lab needs root (network namespaces, veth pairs)"
    absent = [n for n in netlab.SSH_TOOLS if netlab.tool(n) is None]
    if absent:
        packages = " ".join(sorted({netlab.SSH_TOOLS[n] for n in absent}))
        return f"{', '.join(absent)} missing (Debian: apt-get install {packages})"
    if not os.access(PYTHON, os.X_OK):
        return f"{PYTHON} is missing: Ansible runs its modules with it on the hosts (Debian: apt-get install python3)"
    return None


@dataclass
class SshHost:
    name: str  # its name in the inventory
    lab: netlab.Lab
    sshd: "subprocess.Popen[bytes]"

    @property
    def key(self) -> Path:
        return self.lab.root / "client_key"

    def sshd_pids(self) -> list[int]:
        """sshd processes in the namespace: the listener and one or two per session."""
        p = netlab.run(netlab.tool("ip") or "ip", "netns", "pids", self.lab.ns, check=False)
        pids = []
        for word in p.stdout.split():
            try:
                if Path(f"/proc/{word}/comm").read_text().strip() == "sshd":
                    pids.append(int(word))
            except OSError:
                continue
        return pids

    def kill_sshd(self) -> None:
        """SIGKILL to every sshd of the host: the listener and the sessions,
        so Ansible's connections to it drop and new ones are refused."""
        for pid in self.sshd_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.sshd.wait(timeout=10)

    def restart_sshd(self) -> None:
        self.sshd = netlab.run_sshd(self.lab)


@contextlib.contextmanager
def ssh_hosts(n: int, prefix: str = "host") -> Iterator[list[SshHost]]:
    """`n` namespace labs with sshd each, named PREFIX1..PREFIXn; all removed on exit."""
    why = missing()
    if why:
        raise RuntimeError(why)
    with contextlib.ExitStack() as stack:
        hosts = []
        for k in range(n):
            lab = stack.enter_context(netlab.namespace_lab(index=k))
            (lab.root / "ansible-tmp").mkdir()
            hosts.append(SshHost(f"{prefix}{k + 1}", lab, netlab._start_sshd(lab)))
        yield hosts


def write_inventory(hosts: Sequence[SshHost], path: Path, group: str = "lab") -> Path:
    """An INI inventory of the hosts: root over SSH with the lab's key, no
    host-key check or record, no ssh_config, Ansible's remote files in the lab."""
    ssh_args = "-F /dev/null -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o IdentitiesOnly=yes"
    lines = [f"[{group}]"]
    for h in hosts:
        lines.append(f"{h.name} ansible_host={h.lab.remote_ip} ansible_user=root "
                     f"ansible_ssh_private_key_file={h.key} ansible_python_interpreter={PYTHON} "
                     f"ansible_remote_tmp={h.lab.root / 'ansible-tmp'} ansible_ssh_common_args='{ssh_args}'")
    path.write_text("\n".join(lines) + "\n")
    return path

"""The two Ansible steps of a fleet run, and the shell script that runs the
probe on a host.

Step 1 (ad hoc): `setup` with the platform facts only, for each host's
`ansible_architecture`. Step 2 (a playbook, strategy `free`, so each host
goes at its own pace): note when the host started, remove what an earlier
attempt of this fleet run could not, make a temporary directory, copy the
probe (and its exec helper), run the script below, fetch its output
files, and remove the directory (in `always`, so also after a failure).

Each host has a deadline (`osmeter_deadline`, --host-timeout): every task
up to the fetch gets Ansible's `timeout` of what is left of it, so a host
that hangs (a frozen sshd, a host that stops answering) fails with a
timeout and the others go on; the removal after it gets CLEANUP_STEP_S.

The script runs the probe once per repetition, each writing its own file
(`rep-N.jsonl`), with stderr to a file; when the probe fails (exit status
above 1: 1 only says a benchmark reported an error) it prints a marker line
and the tail of that stderr, and exits 3. It is run by Ansible's `raw`
module, so the host needs no Python for it, and it must not outlive the
connection: a hang-up, SIGINT, SIGTERM or a write to a connection that is
gone (a dot every 2 s) stops the probe (SIGTERM; it cleans up after itself)
and removes the directory; the probe also gets --die-with-parent. The dot's
subshell ignores SIGPIPE, so its write fails and it signals the script: a
subshell's traps reset to the default, and SIGPIPE's default would end it
silently, leaving the probe to run its whole suite on a host whose
connection had dropped without a hang-up (an sshd that was killed). The
heartbeat also ends when the script is gone (`kill -0`): the script's
`kill` of it is lost when it comes before the subshell has reset the
script's TERM trap, and a script killed with SIGKILL sends none; an
orphaned heartbeat would hold the connection open until --host-timeout. The
probe's TMPDIR is a work directory of the script's own (`tmp` in the
remote directory), removed on every way out of the script: what a probe
killed with SIGKILL leaves there (its `osmeter-probe.*` directories) goes
with it.

Every string osmeter hands to the playbook is base64-encoded and decoded in
it (`b64decode`): Ansible templates variables again, and a `{{` in a
parameter or a path must stay text.
"""

from __future__ import annotations

import base64
import re
import shlex
from typing import Any, Sequence

T_ARCH = "osmeter: architecture"
T_START = "osmeter: start the host's clock"
T_OLD = "osmeter: remove what an earlier attempt left"
T_TMP = "osmeter: make a temporary directory"
T_COPY = "osmeter: copy the probe"
T_RUN = "osmeter: run the probe"
T_FETCH = "osmeter: fetch the output"
T_REMOVE = "osmeter: remove the temporary directory"
MARK = "osmeter-fleet:"
STDERR_TAIL = 2000
FACTS = "gather_subset=!all,!min,platform"
CLEANUP_STEP_S = 30  # removing the remote directory, after the rest (a timeout, a failure, the output fetched)
# What is left of the host's deadline, in whole seconds, at least 1 (Ansible's timeout 0 means none).
TIME_LEFT = ("{{ [1, (osmeter_deadline | float - (now().timestamp() - osmeter_start | float)) "
             "| round(0, 'ceil') | int] | max }}")

SCRIPT = r"""d=$1 n=$2; shift 2
p= hb= w="$d/tmp"
stop() {
  trap '' HUP INT TERM PIPE
  [ -n "$hb" ] && kill "$hb" 2>/dev/null
  [ -n "$p" ] && kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
  rm -rf "$d"
  exit "$1"
}
trap 'rm -rf "$w"' EXIT
trap 'stop 129' HUP; trap 'stop 130' INT; trap 'stop 143' TERM; trap 'stop 141' PIPE
mkdir -m 700 "$w" || exit 3
TMPDIR=$w; export TMPDIR
( trap '' PIPE; while sleep 2 && kill -0 $$ 2>/dev/null; do printf . 2>/dev/null || { kill -TERM $$ 2>/dev/null; exit 0; }; done ) & hb=$!
i=0
while [ "$i" -lt "$n" ]; do
  i=$((i + 1))
  "$d/osmeter-probe" "$@" -o "$d/rep-$i.jsonl" 2>"$d/stderr" & p=$!
  wait "$p"; rc=$?; p=
  if [ "$rc" -gt 1 ]; then
    kill "$hb" 2>/dev/null
    printf '\nMARK repetition %s of %s: exit status %s\n' "$i" "$n" "$rc"
    tail -c TAIL "$d/stderr"
    exit 3
  fi
done
kill "$hb" 2>/dev/null
printf '\nMARK done\n'
""".replace("MARK", MARK).replace("TAIL", str(STDERR_TAIL))

# Removes a remote directory ($1) so that nothing can write into it again:
# it is renamed first, then removed. A run script that starts late (its
# connection was being torn down when the clean-up came) finds no directory
# to make its work directory in, no probe and no place for its stderr, so it
# creates nothing where the directory was; a removal in place could lose
# that race and leave a directory behind.
REMOVE = r"""d=$1 g=$1.gone
rm -rf "$g" || exit 1
if mv "$d" "$g" 2>/dev/null; then rm -rf "$g" || exit 1; fi
[ ! -e "$d" ] && [ ! -L "$d" ]
"""


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def rep_files(repetitions: int) -> list[str]:
    return [f"rep-{i}.jsonl" for i in range(1, repetitions + 1)]


def run_command(probe_args: Sequence[str], repetitions: int) -> tuple[str, str]:
    """The shell command of the run task, in two parts the remote directory goes between."""
    head = f"sh -c {shlex.quote(SCRIPT)} osmeter-fleet"
    tail = " ".join(shlex.quote(a) for a in [str(repetitions), *probe_args])
    return head, tail


PLAN = "osmeter_plan[inventory_hostname]"


def remove_task(name: str, path: str, timeout: str | int) -> dict[str, Any]:
    """A task that removes the remote directory `path` (a template) by REMOVE."""
    return {"name": name, "ansible.builtin.raw": "sh -c %s osmeter-fleet {{ %s | quote }}" % (shlex.quote(REMOVE), path),
            "timeout": timeout}


def remove_old(timeout: str | int) -> dict[str, Any]:
    """The task that removes what an earlier attempt left on the host."""
    return {**remove_task(T_OLD, "item | b64decode", timeout), "loop": "{{ %s.leftovers }}" % PLAN}


def playbook() -> list[dict[str, Any]]:
    """Step 2. Per-host values come from osmeter_plan[inventory_hostname];
    osmeter_deadline is the seconds each host may take (--host-timeout)."""
    tmp = "osmeter_tmp.path"
    return [{
        "name": "osmeter fleet run",
        "hosts": "all",
        "gather_facts": False,
        "strategy": "free",
        "tasks": [
            {"name": T_START, "ansible.builtin.set_fact": {"osmeter_start": "{{ now().timestamp() }}"}},
            remove_old(TIME_LEFT),
            {"name": T_TMP, "ansible.builtin.tempfile": {"state": "directory",
                                                         "prefix": "{{ osmeter_prefix | b64decode }}"},
             "register": "osmeter_tmp", "timeout": TIME_LEFT},
            {"block": [
                {"name": T_COPY, "ansible.builtin.copy": {"src": "{{ item.src | b64decode }}",
                                                          "dest": "{{ %s }}/{{ item.name }}" % tmp, "mode": "0700"},
                 "loop": "{{ %s.files }}" % PLAN, "timeout": TIME_LEFT},
                {"name": T_RUN, "ansible.builtin.raw": "{{ osmeter_head | b64decode }} {{ %s | quote }} "
                                                       "{{ osmeter_tail | b64decode }}" % tmp,
                 "timeout": TIME_LEFT},
                {"name": T_FETCH, "ansible.builtin.fetch": {"src": "{{ %s }}/{{ item }}" % tmp,
                                                            "dest": "{{ %s.fetch_dir | b64decode }}/" % PLAN,
                                                            "flat": True},
                 "loop": "{{ osmeter_reps }}", "timeout": TIME_LEFT},
            ], "always": [remove_task(T_REMOVE, tmp, CLEANUP_STEP_S)]},
        ],
    }]


def cleanup_playbook() -> list[dict[str, Any]]:
    """After an interruption: only the removal of the hosts' leftovers (osmeter_plan)."""
    return [{"name": "osmeter fleet run: clean up", "hosts": "all", "gather_facts": False, "strategy": "free",
             "tasks": [remove_old(CLEANUP_STEP_S)]}]


def failure_text(res: dict[str, Any]) -> str:
    """Why the run task failed, from its output: the script's marker line and
    the probe's stderr tail, else Ansible's message."""
    text = (str(res.get("stdout") or "") + str(res.get("stderr") or "")).replace("\r", "")
    at = text.find(MARK)
    if at >= 0:
        said = text[at + len(MARK):].strip()
        first, _, rest = said.partition("\n")
        m = re.search(r"exit status (\d+)", first)
        if m and int(m.group(1)) > 128:
            first = first.replace(m.group(0), f"killed by signal {int(m.group(1)) - 128}")
        tail = rest.strip()
        return f"the probe failed in {first}" + (f"; its stderr ends: {tail}" if tail else "")
    msg = str(res.get("msg") or "").strip()
    rc = res.get("rc")
    return msg or (f"the run stopped (exit status {rc})" if rc is not None else "no message")

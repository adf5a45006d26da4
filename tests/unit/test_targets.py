"""The run summary says where file benchmarks measured (result.info)."""

from __future__ import annotations

from osmeter.model import BenchResult
from osmeter.report.targets import render_targets, targets_lines


def _res(seq: int, bench: str, info: object, status: str = "skip") -> BenchResult:
    record = {"type": status, "bench": bench, "params": {}}
    if info is not None:
        record["info"] = info
    return BenchResult(seq=seq, bench=bench, params={}, status=status, reason="r", record=record)


EXT4 = {"dir": "/var/tmp", "fs_type": "ext4", "device": "/dev/vda", "mount_options": "rw,relatime", "remote": "no"}
SSHFS = {"dir": "/mnt/r", "fs_type": "fuse.sshfs", "device": "root@10.0.0.2:/srv", "mount_options": "rw",
         "remote": "yes", "cache_bypass": "fadvise_dontneed"}


def test_one_line_per_place_with_its_benchmarks_and_bypass_methods() -> None:
    results = [
        _res(0, "file.read", EXT4),
        _res(1, "file.write", EXT4),
        _res(2, "file.seq_read_cold", {**EXT4, "cache_bypass": "o_direct"}),
        _res(3, "file.seq_read_cold", SSHFS, status="error"),
        _res(4, "syscall.null", None),
    ]
    text = render_targets(results)
    assert text is not None
    lines = text.splitlines()
    assert lines[0] == "files measured in:"
    assert lines[1] == "  /var/tmp: ext4 on /dev/vda, mounted rw,relatime"
    assert lines[2] == "    file.read, file.write, file.seq_read_cold; page cache bypassed by o_direct"
    assert lines[3] == "  /mnt/r: fuse.sshfs on root@10.0.0.2:/srv (remote), mounted rw"
    assert lines[4] == "    file.seq_read_cold; page cache bypassed by fadvise_dontneed"
    assert len(lines) == 5


def test_nothing_without_file_results_and_malformed_info_is_ignored() -> None:
    assert render_targets([_res(0, "syscall.null", None)]) is None
    assert targets_lines([_res(0, "file.read", "not a mapping"), _res(1, "file.read", {"dir": 7})]) == []

"""The studies: a study's matrix run as one stored run, with its tables and figures.

Each study module offers NAME, HELP (its line in `osmeter study --help`),
DESCRIPTION, add_arguments(parser) (its options; the `study` command adds
--store after them) and run(args) -> exit code: `fork` (fork cost against
parent memory), `files` (the page cache's size, cold reads, contention),
`net` (round trips, bandwidth, connect and close, loopback against remote)
and `rt` (workload kernels under memory stressors, wake-up latency,
deadline misses; its tables and findings in rt_analysis). What they share
(a study of several probe invocations as one run, its tables and figures
written) is common.py's. The `study` command (osmeter.commands.study)
only dispatches to them.
"""

from __future__ import annotations

from . import files, fork, net, rt

STUDIES = (fork, files, net, rt)  # in `osmeter study --help` order

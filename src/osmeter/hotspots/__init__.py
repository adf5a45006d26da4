"""Kernel and user hotspots of a benchmark's timed region (`osmeter hotspots`):
folded stacks (folded.py), flame graphs (flamegraph.py), where profiles come
from (sources.py). docs/methods/hotspots.md."""

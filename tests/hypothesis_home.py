"""Hypothesis keeps caches in ./.hypothesis; the fuzz tests point it at a
temporary directory, removed when the test process exits, so a test run
leaves nothing in the working tree. Import this before hypothesis."""

from __future__ import annotations

import atexit
import shutil
import tempfile

from hypothesis.configuration import set_hypothesis_home_dir

_home = tempfile.mkdtemp(prefix="osmeter-hypothesis.")
set_hypothesis_home_dir(_home)
atexit.register(shutil.rmtree, _home, True)

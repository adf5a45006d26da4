import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from probe_helpers import find_probe  # noqa: E402


@pytest.fixture(scope="session")
def probe() -> str:
    path = find_probe()
    if path is None:
        pytest.fail("osmeter-probe not found: pip install . (or set OSMETER_TEST_PROBE)")
    return path

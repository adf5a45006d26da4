"""docs/export.md lists exactly the export fields, in order."""

from __future__ import annotations

import re
from pathlib import Path

from osmeter.export.fields import FIELD_NAMES

DOC = Path(__file__).resolve().parents[2] / "docs" / "export.md"


def test_docs_list_every_export_field_in_order() -> None:
    documented = re.findall(r"^\| `([a-z_0-9]+)` \|", DOC.read_text(), re.M)
    assert tuple(documented) == FIELD_NAMES


def test_docs_name_the_counter_columns_as_the_code_does() -> None:
    from osmeter.counters import column_name

    text = DOC.read_text()
    for name, unit in (("task-clock", "ns"), ("page-faults", "count"), ("r01c2", "count")):
        assert f"`{column_name(name, unit)}`" in text
    assert "| ratio (ipc) | NAME | `ipc` |" in text and column_name("ipc", "ratio") == "ipc"

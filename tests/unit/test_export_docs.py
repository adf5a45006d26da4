"""docs/export.md lists exactly the export fields, in order."""

from __future__ import annotations

import re
from pathlib import Path

from osmeter.export.fields import FIELD_NAMES

DOC = Path(__file__).resolve().parents[2] / "docs" / "export.md"


def test_docs_list_every_export_field_in_order() -> None:
    documented = re.findall(r"^\| `([a-z_0-9]+)` \|", DOC.read_text(), re.M)
    assert tuple(documented) == FIELD_NAMES

"""osmeter: measure what an operating system and its hardware really cost.

Public API: __version__ and load(), which returns stored results as a
pandas DataFrame (pandas is imported only when load() is called).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .version import __version__

__all__ = ["__version__", "load"]

if TYPE_CHECKING:
    import pandas


def load(store: str | None = None, run: int | str | None = None) -> "pandas.DataFrame":
    """Stored results as a DataFrame: one row per benchmark instance.

    store: a store path (default: $OSMETER_STORE, else the user's data
    directory). run: a run id (an int or its digits), a label, 'latest' or
    'latest~N' (N runs before the newest; docs/store.md, "Naming a run"); None
    loads every run. Columns are the export fields (docs: `osmeter export`)
    plus `samples`, the raw samples as a numpy array (None for skipped and
    failed instances).
    """
    try:
        import pandas as pd
    except ImportError:
        from .errors import MissingDependencyError

        raise MissingDependencyError("osmeter.load() needs pandas: pip install 'osmeter[pandas]'") from None
    from .export.fields import FIELD_NAMES, result_row
    from .store import open_store, resolve_location

    db = open_store(resolve_location(store), create=False)
    try:
        runs = [db.run(str(run))] if run is not None else db.runs()
        rows: list[dict[str, Any]] = []
        for info in runs:
            for result in db.results(info.id):
                row = result_row(info, result)
                row["samples"] = db.samples(info.id, result.seq)
                rows.append(row)
    finally:
        db.close()
    return pd.DataFrame(rows, columns=[*FIELD_NAMES, "samples"])

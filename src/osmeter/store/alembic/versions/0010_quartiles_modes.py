"""0010 the quartiles and two modes of every result (issue 28, a spread people can trust).

The spread shown beside a median is the interquartile range relative to it
(stats.iqr_ratio), not the coefficient of variation, which a few
interrupted samples blow up to hundreds of per cent; and a result whose
samples have two modes (modes.two_modes) carries them and the flag
`bimodal`. Four columns: p25, p75, mode_low, mode_high (NULL: one mode).

Results stored before get them from their own samples, here, once: about
a millisecond per result (a store of 10 000 results, ten seconds). A result
whose samples cannot be read (damage) keeps NULL: its spread shows as
missing, as a statistic that cannot be computed does.

Revision ID: 0010
Revises: 0009
"""

import json
import math
import zlib

import numpy as np
import sqlalchemy as sa
from alembic import op

from osmeter.modes import two_modes
from osmeter.store.base import decode_samples
from osmeter.store.migrate import record

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

COLUMNS = ("p25", "p75", "mode_low", "mode_high")
BATCH = 500


def _parts(x: np.ndarray, repetitions: object) -> list[np.ndarray]:
    """The samples split into their repetitions' (pooled in order, ok ones only); whole when the
    stored repetitions do not add up to them."""
    try:
        reps = json.loads(repetitions) if isinstance(repetitions, str) else []
        counts = [int(r["n"]) for r in reps if isinstance(r, dict) and r.get("status") == "ok"]
    except (ValueError, TypeError, KeyError):
        counts = []
    if len(counts) < 2 or sum(counts) != x.size or min(counts) < 1:
        return [x]
    return list(np.split(x, np.cumsum(counts)[:-1]))


def _filled(samples: object, n: int, flags: str | None, repetitions: object) -> dict | None:
    """The new columns of one result (and its flags with `bimodal`), or None when its samples are unreadable."""
    try:
        x = decode_samples(bytes(samples), n)  # type: ignore[call-overload]
    except (ValueError, zlib.error, TypeError):
        return None
    if x.size == 0 or not np.all(np.isfinite(x)):
        return None
    p25, p75 = (float(v) for v in np.percentile(x, [25, 75]))
    modes = two_modes(x)
    row = {"p25": p25, "p75": p75, "mode_low": None, "mode_high": None, "flags": flags}
    if modes is not None:
        row.update(mode_low=modes.low, mode_high=modes.high)
        parts = _parts(x, repetitions)
        if len(parts) > 1 and all(two_modes(p) is None for p in parts):
            return row  # two levels of repetitions, each of one mode: `unstable`, not `bimodal` (within_bimodal)
        try:
            listed = json.loads(flags) if flags else []
        except ValueError:
            listed = None  # damaged flags stay as they are: the reader says so
        if isinstance(listed, list) and "bimodal" not in listed:
            row["flags"] = json.dumps(listed + ["bimodal"], separators=(",", ":"), ensure_ascii=False)
    return row if math.isfinite(p25) and math.isfinite(p75) else None


def upgrade() -> None:
    for c in COLUMNS:
        op.add_column("results", sa.Column(c, sa.Double))
    bind = op.get_bind()
    update = sa.text("UPDATE results SET p25 = :p25, p75 = :p75, mode_low = :mode_low, mode_high = :mode_high, "
                     "flags = :flags WHERE run_id = :run_id AND seq = :seq")
    after = (-1, -1)
    while True:
        rows = bind.execute(sa.text(
            "SELECT run_id, seq, samples, n, flags, repetitions FROM results WHERE status = 'ok' AND samples IS NOT NULL "
            "AND (run_id > :r OR (run_id = :r AND seq > :s)) ORDER BY run_id, seq LIMIT :k"),
            {"r": after[0], "s": after[1], "k": BATCH}).all()
        if not rows:
            break
        updates = []
        for run_id, seq, samples, n, flags, repetitions in rows:
            filled = _filled(samples, int(n or 0), flags, repetitions) if isinstance(n, int) and n > 0 else None
            if filled is not None:
                updates.append({**filled, "run_id": run_id, "seq": seq})
        if updates:
            bind.execute(update, updates)
        after = (rows[-1][0], rows[-1][1])
    record(bind, 10, "quartiles_modes")

"""Numbers people read (issue 28): scaled to their unit's step, 3-4 significant
digits, never in e-notation; the CI in its median's step; prose folded to a width."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from osmeter.fmt import MICRO, fmt_count, fmt_interval, fmt_num, fmt_quantity, fold, scale_of, unit_label
from osmeter.streams import Guarded

FACTORS = {"ns": 1, MICRO + "s": 1e3, "ms": 1e6, "s": 1e9, "B/s": 1, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9,
           "TB/s": 1e12, "bit/s": 1, "kbit/s": 1e3, "Mbit/s": 1e6, "Gbit/s": 1e9, "Tbit/s": 1e12}


@pytest.mark.parametrize("value,unit,shown", [
    (23.28, "ns", "23.28 ns"),
    (0.271, "ns", "0.2710 ns"),
    (853.8, "ns", "853.8 ns"),
    (999.97, "ns", f"1.000 {MICRO}s"),  # rounds up a step, not '1000 ns'
    (3927.4, "ns", f"3.927 {MICRO}s"),
    (2654000, "ns", "2.654 ms"),
    (13_940_000, "ns", "13.94 ms"),
    (5.2e9, "ns", "5.200 s"),
    (1.294e11, "bytes_per_s", "129.4 GB/s"),  # decimal, as fio and iperf3
    (12.5e6, "bytes_per_s", "12.50 MB/s"),
    (7.54e9, "bits_per_s", "7.540 Gbit/s"),
    (0, "ns", "0 ns"),
    (float("nan"), "ns", "-"),
    (None, "ns", "-"),
    (42.0, "widgets", "42.00 widgets"),  # a unit without steps: as it is
])
def test_quantities_are_scaled(value, unit, shown) -> None:
    assert fmt_quantity(value, unit) == shown


def test_numbers_never_use_an_exponent() -> None:
    assert fmt_num(7616533.2) == "7,617,000"
    assert fmt_num(7616533.2, grouped=False) == "7617000"
    assert fmt_num(0.000123) == "0.0001230"
    assert fmt_num(9999.7) == "10,000" and fmt_num(5000.0) == "5000"
    assert fmt_count(3704) == "3704" and fmt_count(12345) == "12,345"
    assert fmt_num(12345) == "12,345" and fmt_num(12345, grouped=False) == "12345"


@given(st.floats(min_value=1e-6, max_value=1e14, allow_nan=False), st.sampled_from(["ns", "bytes_per_s"]))
def test_a_scaled_value_reads_back_within_its_digits(value: float, unit: str) -> None:
    text = fmt_quantity(value, unit)
    assert "e" not in text.split()[0]
    number, suffix = text.rsplit(" ", 1)
    back = float(number.replace(",", "")) * FACTORS[suffix]
    assert back == pytest.approx(value, rel=5.001e-4, abs=1e-9)
    if value >= 1:  # 1 to 3 digits before the point, but at the largest step
        whole = number.split(".")[0].replace(",", "")
        assert len(whole) <= 3 or suffix in ("s", "TB/s")


def test_an_interval_is_in_its_medians_step() -> None:
    assert fmt_interval(2143000, 3064000, "ns", 2563000) == "2.143 .. 3.064 ms"
    assert fmt_interval(530.7, 1374, "ns", 853.8) == "530.7 .. 1374 ns"  # the median's ns, not the high end's us
    assert fmt_interval(0.99e9, 1.2e9, "bytes_per_s", 1.1e9, " – ") == "0.9900 – 1.200 GB/s"
    assert scale_of(2563000, "ns").suffix == "ms" and unit_label("bytes_per_s") == "B/s"


def test_fold_wraps_prose_at_the_width_with_a_hanging_indent() -> None:
    text = "warning [x]: " + " ".join(["word"] * 40) + "\n  short line"
    out = fold(text, 40).split("\n")
    assert all(len(line) <= 40 for line in out)
    assert out[1].startswith("  word") and out[-1] == "  short line"
    assert fold("a " + "x" * 60, 40).split("\n") == ["a", "  " + "x" * 60]  # a longer word stays whole
    assert fold(text, None) == text


def test_a_terminal_without_the_micro_sign_gets_u() -> None:
    for encoding, want in (("ascii", b"3.2 us\n"), ("latin-1", "3.2 \u00b5s\n".encode("latin-1")),
                           ("utf-8", "3.2 \u00b5s\n".encode())):
        raw = io.BytesIO()
        stream = io.TextIOWrapper(raw, encoding=encoding, errors="strict")
        Guarded("stdout", stream, True).write(f"3.2 {MICRO}s\n")
        stream.flush()
        assert raw.getvalue() == want, encoding
    assert re.fullmatch(r"\d\.\d{3} " + MICRO + "s", fmt_quantity(3200, "ns"))


def test_p_values_and_g_never_use_an_exponent() -> None:
    from osmeter.fmt import fmt_g, fmt_p

    assert [fmt_p(v) for v in (1e-12, 0.00099, 0.0123, 0.5, float("nan"))] == ["<0.001", "<0.001", "0.012", "0.5", "-"]
    assert [fmt_g(v) for v in (10.0, 1.5, 0.000123, 1234.5, 1.2e9)] == ["10", "1.5", "0.000123", "1,230", "1,200,000,000"]

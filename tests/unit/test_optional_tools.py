"""Tests that need an optional tool skip where it is missing, naming the
Debian package, unless its variable (or OSMETER_TEST_REQUIRE_OPTIONAL)
makes them fail, as CI does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from probe_helpers import REQUIRE, REQUIRE_OPTIONAL, optional_tool_missing

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_requirements(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*REQUIRE.values(), REQUIRE_OPTIONAL):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("kind", sorted(REQUIRE))
def test_missing_tool_skips_with_the_hint(kind: str) -> None:
    with pytest.raises(pytest.skip.Exception) as e:
        optional_tool_missing("thing is missing (Debian: apt-get install thing)", kind)
    assert "apt-get install thing" in str(e.value) and REQUIRE[kind] in str(e.value)


@pytest.mark.parametrize("kind", sorted(REQUIRE))
def test_its_variable_makes_it_a_failure(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE[kind], "1")
    with pytest.raises(pytest.fail.Exception) as e:
        optional_tool_missing("thing is missing", kind)
    assert REQUIRE[kind] in str(e.value)
    for other in set(REQUIRE) - {kind}:  # the other kinds still skip
        with pytest.raises(pytest.skip.Exception):
            optional_tool_missing("other is missing", other)


@pytest.mark.parametrize("kind", sorted(REQUIRE))
def test_require_optional_means_all(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE_OPTIONAL, "1")
    with pytest.raises(pytest.fail.Exception):
        optional_tool_missing("thing is missing", kind)


def test_ci_requires_every_tool_and_the_readme_names_them() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    for name in (*REQUIRE.values(), REQUIRE_OPTIONAL, "OSMETER_TEST_SLOW"):
        assert re.search(rf"^export {name}=1$", ci, re.M), name
        assert name in readme, name
    for package in ("chromium", "gcc-aarch64-linux-gnu", "gcc-arm-linux-gnueabihf", "gcc-riscv64-linux-gnu",
                    "qemu-user-static"):
        assert package in readme, package


def test_without_a_kind_only_require_optional_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE["browser"], "1")
    with pytest.raises(pytest.skip.Exception) as e:
        optional_tool_missing("thing is missing")
    assert REQUIRE_OPTIONAL in str(e.value)
    monkeypatch.setenv(REQUIRE_OPTIONAL, "1")
    with pytest.raises(pytest.fail.Exception):
        optional_tool_missing("thing is missing")

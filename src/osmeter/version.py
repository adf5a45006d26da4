"""osmeter's version: a module of its own, on the ground floor, so that what
records or shows it (the recorder, the HTML report, --version) needs nothing
above it. pyproject.toml carries the same number (tests/unit/test_layers_py.py)."""

__version__ = "0.2.0"

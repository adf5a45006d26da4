"""`python -m osmeter`."""

from .cli import entry

entry()

"""Store URLs without SQLAlchemy: which schemes are PostgreSQL's, and a URL
fit to show (osmeter.store imports this at start-up; the backends, and
SQLAlchemy with them, only when a store is opened)."""

from __future__ import annotations

SCHEMES = ("postgresql", "postgres")


def redact(url: str) -> str:
    """The URL without its password, fit for a message or a file: the user
    part is cut at its last `@` (a password may hold `/`, `?` or `@`) and a
    `password=` parameter is dropped."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    at = rest.rfind("@")
    if at >= 0:
        rest = rest[:at].split(":", 1)[0] + rest[at:]
    main, q, query = rest.partition("?")
    kept = [p for p in query.split("&") if p and p.split("=", 1)[0].lower() != "password"]
    return f"{scheme}://{main}" + ("?" + "&".join(kept) if kept else "")

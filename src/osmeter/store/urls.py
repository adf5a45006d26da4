"""Store URLs without SQLAlchemy: which schemes are PostgreSQL's, how a URL
splits (as SQLAlchemy's make_url splits it), and one redaction for every URL
shown anywhere (osmeter.store imports this at start-up; the backends, and
SQLAlchemy with them, only when a store is opened).

The redaction rule: nothing after `user:` is printed, and no value of a
query key the driver reads as a password (`password`, `sslpassword`, also
percent-encoded: `%70assword`). When the URL cannot be split, nothing after
the scheme's user is printed either.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

SCHEMES = ("postgresql", "postgres")
HIDDEN = "***"

# SQLAlchemy's make_url grammar, but for a user that holds no '@' (make_url
# lets the user run on to a later '@', so `u@h:1/db?application_name=a@b`
# became user `u@h`, password `1/db?application_name=a`, host `b`): the user
# has no ':', '/' or '@', the password no '@'; the host no '/', ':' or '?';
# the port runs to '/' or '?', the database to '?'. The PostgreSQL backend
# builds its URL from these parts, so what is shown is what is used.
_URL = re.compile(r"""
    (?P<scheme>[\w+.-]+)://
    (?:(?P<user>[^:/@]*)(?::(?P<password>[^@]*))?@)?
    (?P<host>\[[^/?]+\]|[^/:?]+)?
    (?::(?P<port>[^/?]*))?
    (?:/(?P<database>[^?]*))?
    (?:\?(?P<query>.*))?
    $""", re.X | re.S)

# A URL of a PostgreSQL scheme written without '//' (postgresql:u:pw@h/db):
# not an SQLite file name anyone means.
_NO_SLASHES = re.compile(r"(?P<scheme>[A-Za-z][\w+.-]*):(?!//)", re.S)


@dataclass(frozen=True)
class Parts:
    scheme: str
    user: str | None
    password: str | None
    host: str | None
    port: str | None
    database: str | None
    query: str | None


def split(url: str) -> Parts | None:
    """The URL's parts as the driver reads them; None when it has no `scheme://`."""
    m = _URL.match(url)
    return Parts(**m.groupdict()) if m else None


def scheme_without_slashes(location: str) -> str | None:
    """`postgresql` for `postgresql:u:pw@h/db` (a PostgreSQL scheme without '//'), else None."""
    m = _NO_SLASHES.match(location)
    if m is None:
        return None
    scheme = m.group("scheme")
    return scheme if scheme.lower().split("+", 1)[0] in SCHEMES else None  # postgresql+psycopg2: too


def secret_key(key: str) -> bool:
    """A query key whose value is a secret, as the driver decodes it."""
    return "password" in unquote(key).strip().lower()


def redact(url: str) -> str:
    """The URL without its password, fit for a message or a file."""
    bad_scheme = scheme_without_slashes(url)
    if bad_scheme is not None:
        return f"{bad_scheme}:{HIDDEN}"
    p = split(url)
    if p is None:
        scheme = url.partition("://")[0] if "://" in url else ""
        return f"{scheme}://{HIDDEN}" if scheme else HIDDEN
    text = f"{p.scheme}://"
    if p.user is not None:
        text += p.user + "@"  # the password, even empty, is left out
    text += (p.host or "").rpartition("@")[2]  # before an '@' in the "host" is part of a password
    if p.port is not None:  # a port that is not a number may be a password given without '@'
        text += ":" + (p.port if p.port.isdigit() else HIDDEN)
        if "@" in p.port:
            text += "@" + p.port.rpartition("@")[2]
    if p.database is not None:
        text += "/" + p.database
    if p.query is not None:
        kept = [part for part in p.query.split("&") if part and not secret_key(part.split("=", 1)[0])]
        if kept:
            text += "?" + "&".join(kept)
    return text


def host_holds_at(url: str) -> bool:
    """True when the driver would read part of a password or user as the host
    (an unencoded '@' in either: `u:p@w@host`)."""
    p = split(url)
    return p is not None and ("@" in (p.host or "") or "@" in (p.port or ""))

"""One redaction for every store URL shown (issue 27, defect 1): nothing
after `user:` and no value of a key the driver reads as a password, when
the URL parses and when it does not."""

from __future__ import annotations

import pytest

from osmeter import errors
from osmeter.errors import StoreError
from osmeter.store import describe, open_store
from osmeter.store.urls import redact, split

SECRET = "Xyzzy12345"


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://u:Xyzzy12345@h/db", "postgresql://u@h/db"),
    ("postgresql://u:Xyzzy12345@h:5433/db?sslmode=require", "postgresql://u@h:5433/db?sslmode=require"),
    ("postgresql://bench2:Xyzzy12345/bench2", "postgresql://bench2:***/bench2"),  # no host: the password is a "port"
    ("postgresql://u@h/db?password=Xyzzy12345&a=1", "postgresql://u@h/db?a=1"),
    ("postgresql://u@h/db?%70assword=Xyzzy12345", "postgresql://u@h/db"),
    ("postgresql://u@h/db?PassWord=Xyzzy12345", "postgresql://u@h/db"),
    ("postgresql://u@h/db?sslpassword=Xyzzy12345", "postgresql://u@h/db"),
    ("postgresql://u@h/db?application_name=a@b", "postgresql://u@h/db?application_name=a@b"),
    ("postgresql://u:p/x?y@h/db", "postgresql://u@h/db"),
    ("postgresql:u:Xyzzy12345@h/db", "postgresql:***"),
    ("postgres:Xyzzy12345", "postgres:***"),
    ("postgresql+psycopg2:u:Xyzzy12345@h/db", "postgresql+psycopg2:***"),
])
def test_redact(url: str, shown: str) -> None:
    assert redact(url) == shown
    assert SECRET not in describe(url)


def test_split_reads_the_user_part_as_the_driver_does() -> None:
    p = split("postgresql://bench2@localhost/db?application_name=a@b")
    assert (p.user, p.password, p.host, p.database, p.query) == ("bench2", None, "localhost", "db",
                                                                 "application_name=a@b")
    p = split("postgresql://u:p@w@host/db")
    assert (p.user, p.password, p.host) == ("u", "p", "w@host")


@pytest.mark.parametrize("url", ["postgresql://bench2:Xyzzy12345/bench2",
                                 "postgresql://u@127.0.0.1:1/osm?%70assword=Xyzzy12345",
                                 "postgresql://u@127.0.0.1:1/osm?sslpassword=Xyzzy12345",
                                 "postgresql:u:Xyzzy12345@127.0.0.1/osm",
                                 "postgresql://u:Xyz@zy12345@127.0.0.1/osm"])
def test_no_message_holds_the_password(url: str) -> None:
    with pytest.raises(StoreError) as e:
        open_store(url, create=True)
    assert "zy12345" not in e.value.message, e.value.message


def test_an_at_sign_in_a_query_value_is_not_taken_for_the_user_part() -> None:
    with pytest.raises(StoreError, match="no PostgreSQL server answers there") as e:
        open_store("postgresql://bench2@127.0.0.1:1/osm?application_name=a@b", create=True)
    assert "postgresql://bench2@127.0.0.1:1/osm?application_name=a@b" in e.value.message


def test_a_postgresql_url_without_slashes_is_not_an_sqlite_file(tmp_path, monkeypatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    with pytest.raises(StoreError, match="needs '//'") as e:
        open_store("postgresql:u:Xyzzy12345@h/db", create=True)
    assert SECRET not in e.value.message and list(work.iterdir()) == []


def test_cli_never_prints_the_password(cli) -> None:
    for url in ("postgresql://bench2:Xyzzy12345/bench2", "postgresql://u@127.0.0.1:1/osm?%70assword=Xyzzy12345",
                "postgresql:u:Xyzzy12345@h/db"):
        r = cli("runs", "--store", url)
        assert r.code == errors.EXIT_STORE and SECRET not in r.err + r.out, r.err


def test_fleet_keeps_a_bare_postgresql_location_without_its_password(cli, tmp_path) -> None:
    inventory = tmp_path / "inv"
    inventory.write_text("[all]\nlocalhost ansible_connection=local\n")
    r = cli("fleet", "run", str(inventory), "--suite", "quick", "--resume", "f-none",
            "--store", "postgresql+psycopg2:u:Xyzzy12345@h/db")
    assert SECRET not in r.out + r.err, r.err

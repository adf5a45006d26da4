"""`list --json` is valid and complete, and every listed benchmark is documented."""
import json
import re

from probe_helpers import REPO, run_probe


def test_list_json_describes_every_benchmark(probe):
    r = run_probe(probe, "list", "--json")
    assert r.rc == 0
    cat = json.loads(r.stdout)
    assert cat["schema"] == 1
    assert set(cat["suites"]) >= {"quick", "standard", "full", "lebench"}
    names = [b["name"] for b in cat["benchmarks"]]
    assert len(names) == len(set(names))
    for b in cat["benchmarks"]:
        assert re.fullmatch(r"[a-z]+\.[a-z0-9_]+", b["name"])
        assert b["family"] == b["name"].split(".")[0]
        assert b["unit"] in ("ns", "bytes_per_s", "count")
        assert b["description"] and not b["hidden"]
        for p in b["params"]:
            assert p["type"] in ("int", "size", "enum", "string") and p["help"]
            if p["type"] in ("int", "size"):
                assert p["min"] <= p["default"] <= p["max"]
            if p["type"] == "enum":
                assert p["default"] in p["choices"]


def test_hidden_benchmarks_only_with_all(probe):
    plain = json.loads(run_probe(probe, "list", "--json").stdout)
    full = json.loads(run_probe(probe, "list", "--json", "--all").stdout)
    hidden = {b["name"] for b in full["benchmarks"]} - {b["name"] for b in plain["benchmarks"]}
    assert "test.spin" in hidden


def test_every_benchmark_has_a_method_note(probe):
    cat = json.loads(run_probe(probe, "list", "--json").stdout)
    for b in cat["benchmarks"]:
        note = REPO / "docs" / "methods" / f"{b['family']}.md"
        assert note.exists(), note
        assert b["name"] in note.read_text(), f"{b['name']} missing from {note.name}"


def test_list_text_mentions_parameters(probe):
    r = run_probe(probe, "list")
    assert r.rc == 0 and "cpu.call" in r.stdout and "--param args=N (0..7" in r.stdout

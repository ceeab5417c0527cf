"""Fuzz the server-spec parsers: ketama / twemproxy / pymemcache server strings
(``"host:port:weight"``, ``"host:port:weight name"``, ``"[v6]:port"``, bare ``"v6:port"``),
migrate's node addresses (host:port, bracketed and bare IPv6, unix socket paths), the CLI
node lists (``"a:2,b"``, and migrate's ``"host:port:weight"`` lists) and the pymemcache
hashers as HashClient drives them.

Invariants on what is accepted: a server's normalised name parses again to the same server
(so the ring can be asked to remove the name it reports); an address formats back to a string
that parses to the same address; every node of a migrate layout is an address.

    python fuzz/fuzz_servers.py [-atheris_runs=N] fuzz/corpus/servers
"""

from __future__ import annotations

import argparse

import _harness  # noqa: I001

from consistent_hash import KetamaRing
from consistent_hash.cli import _common
from consistent_hash.cli import migrate as cli_migrate
from consistent_hash.compat import ketama
from consistent_hash.integrations.migrate import parse_address
from consistent_hash.integrations.pymemcache import KetamaHasher, RingHasher

MODES = ketama.KETAMA_MODES
ARGS = argparse.Namespace(vnodes=8, hash="xxh3", seed=0)
UserError = _common.UserError


def check_ketama(specs: list[str], mode: str) -> None:
    parsed = []
    for s in specs:
        try:
            p = ketama._parse_server(s)
        except _harness.EXPECTED:
            continue
        parsed.append(p)
        again = ketama._parse_server(p[0])
        assert again[:3] == p[:3], (s, p, again)
    try:
        ring = KetamaRing(specs, mode=mode)
    except (*_harness.EXPECTED, KeyError):
        return
    assert len(ring) == len(specs)
    for name in list(ring.nodes):
        assert name in ring
        ring.remove(name)  # the name the ring reports is one it takes back
    assert len(ring) == 0


def check_address(text: str) -> None:
    try:
        a = parse_address(text)
    except _harness.EXPECTED:
        return
    if isinstance(a, str):
        assert a and (text == a or text == "unix:" + a), (text, a)
        return
    host, port = a
    assert 0 < port < 65536
    forms = [f"[{host}]:{port}", f"{host}:{port}"] if ":" in host else [f"{host}:{port}"]
    for f in forms:
        assert parse_address(f) == a, (text, f, parse_address(f))


def _heavy(text: str) -> bool:
    """A weight large enough to build a ring of millions of vnodes (a user's choice, bounded
    by the ring's own limit, not a parser question): skipped to keep the fuzzer fast."""
    for part in text.split(","):
        try:
            if abs(float(part.rpartition(":")[2])) > 1000:
                return True
        except ValueError:
            pass
    return False


def check_node_list(text: str) -> None:
    if text.startswith("@") or _heavy(text):
        return  # "@file" reads a file (tested in tests/test_cli.py), not a parser input
    try:
        weights = _common.parse_nodes(text)
    except UserError:
        pass
    else:
        assert weights and all(isinstance(w, float) for w in weights.values())
    if "/" in text or text.endswith((".json", ".ring", ".txt", ".csv")):
        return  # a ring-file path
    try:
        ring = cli_migrate._layout(text, ARGS)
    except UserError:
        return
    for node in ring.nodes:
        parse_address(node)  # every node of a migrate layout is a server address


def check_hashers(hosts: list[tuple[str, int]]) -> None:
    """What HashClient does with its server list: names "host:port", add_node each."""
    names = list(dict.fromkeys(f"{h}:{p}" for h, p in hosts))
    for make in (RingHasher, lambda: KetamaHasher(mode="ketama")):
        try:
            hasher = make()
            for n in names:
                hasher.add_node(n)
        except _harness.EXPECTED:
            continue
        node = hasher.get_node("key")
        assert node in names
        hasher.remove_node(node)
        assert hasher.get_node("key") != node


def test_one(data: bytes) -> None:
    b = _harness.Bytes(data)
    which = b.int(0, 3)
    if which == 0:
        specs = [b.text(b.int(0, 40)) for _ in range(b.int(1, 4))]
        check_ketama(specs, b.pick(MODES))
    elif which == 1:
        check_address(b.text(b.remaining()))
    elif which == 2:
        check_node_list(b.text(b.remaining()))
    else:
        hosts = [(b.text(b.int(0, 30)), b.int(1, 65535)) for _ in range(b.int(1, 4))]
        check_hashers(hosts)


if __name__ == "__main__":
    _harness.main(test_one)

"""Conformance: nodes, len, in, iteration, repr, equality, copy, pickle, to_bytes / from_bytes
and fingerprint, for every router."""

from __future__ import annotations

import copy
import hashlib
import pickle
import random
import re
import struct
from typing import Any

import pytest
from conformance_cases import (
    MUTABLE,
    ROUTE_KEYS,
    ids,
    router,
    routes,
)
from routers import EXTRA_NODE, NODES, ROUTERS, RouterSpec

# --------------------------------------------------------------------------------------------
# nodes, len, in, iteration, repr
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_nodes_len_in_iter(spec: RouterSpec) -> None:
    r = router(spec)
    assert isinstance(r.nodes, tuple)
    assert sorted(r.nodes) == sorted(NODES)
    assert len(r) == len(NODES)
    for n in NODES:
        assert n in r
    assert EXTRA_NODE not in r
    assert "nope" not in r
    assert 5 not in r and None not in r
    assert list(r) == list(r.nodes)
    assert all(isinstance(n, str) for n in r)


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_repr_names_the_class(spec: RouterSpec) -> None:
    r = router(spec)
    assert repr(r).startswith(type(r).__name__ + "("), repr(r)
    if spec.empty_ok:
        assert repr(router(spec, [])).startswith(type(r).__name__ + "(")


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_get_takes_its_key_positionally(spec: RouterSpec) -> None:
    # get(key, /), as dict.get: one positional argument (METH_O, no argument parsing per
    # request); a keyword, no argument or two are a TypeError, and the router is unchanged
    r = router(spec)
    key = ROUTE_KEYS[0]
    want = r.get(key)
    for call in (lambda: r.get(key=key), lambda: r.get(), lambda: r.get(key, key)):
        with pytest.raises(TypeError):
            call()
    assert r.get(key) == want and sorted(r.nodes) == sorted(NODES)


# --------------------------------------------------------------------------------------------
# ==, copy, pickle, to_bytes / from_bytes, fingerprint
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_equality(spec: RouterSpec) -> None:
    a, b = router(spec), router(spec)
    assert a == b and not (a != b)
    assert a != router(spec, NODES[:-1])
    assert a != router(spec, NODES + [EXTRA_NODE])
    assert a != "not a router" and a != object()
    assert not (a == None)  # noqa: E711
    if spec.empty_ok:
        assert router(spec, []) == router(spec, [])
        assert router(spec, []) != a


@pytest.mark.parametrize("spec", MUTABLE, ids=ids(MUTABLE))
def test_equality_follows_mutations(spec: RouterSpec) -> None:
    a, b = router(spec), router(spec)
    spec.add(b, EXTRA_NODE)
    assert a != b
    assert b == router(spec, NODES + [EXTRA_NODE])
    assert routes(b) == routes(router(spec, NODES + [EXTRA_NODE]))
    spec.remove(b, EXTRA_NODE)
    assert a == b
    assert routes(a) == routes(b)


@pytest.mark.parametrize("spec", MUTABLE, ids=ids(MUTABLE))
def test_add_present_and_remove_absent_raise_and_change_nothing(spec: RouterSpec) -> None:
    r = router(spec)
    before = routes(r)
    with pytest.raises(ValueError):
        spec.add(r, NODES[0])
    with pytest.raises(KeyError):
        spec.remove(r, EXTRA_NODE)
    assert r.nodes == router(spec).nodes
    assert routes(r) == before


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_copy_is_equal_and_independent(spec: RouterSpec) -> None:
    r = router(spec)
    before = routes(r)
    c = r.copy()
    assert type(c) is type(r) and c is not r
    assert c == r
    assert routes(c) == before
    assert c.nodes == r.nodes
    if spec.mutable:
        spec.add(c, EXTRA_NODE)
        assert EXTRA_NODE in c and EXTRA_NODE not in r
        assert c != r
        assert r == router(spec)
        assert routes(r) == before
        assert routes(c) == routes(router(spec, NODES + [EXTRA_NODE]))
        spec.remove(r, NODES[-1])  # and the other way round
        assert NODES[-1] in c


def states(spec: RouterSpec) -> list[Any]:
    """The router as built, after an add (mutable routers) and with no nodes (where it may)."""
    out = [router(spec)]
    if spec.mutable:
        m = router(spec)
        spec.add(m, EXTRA_NODE)
        out.append(m)
    if spec.empty_ok:
        out.append(router(spec, []))
    return out


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("how", ["copy", "deepcopy"])
def test_copy_module(spec: RouterSpec, how: str) -> None:
    for r in states(spec):
        c = getattr(copy, how)(r)
        assert type(c) is type(r) and c is not r
        assert c == r and c.nodes == r.nodes and c.fingerprint() == r.fingerprint()
        if len(r):
            assert routes(c) == routes(r)
        if spec.mutable:
            spec.add(c, "copy-only:1")
            assert "copy-only:1" not in r


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_unhashable(spec: RouterSpec) -> None:
    """Routers compare by value and may change: not hashable."""
    with pytest.raises(TypeError):
        hash(router(spec))


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_pickle_round_trip(spec: RouterSpec, protocol: int) -> None:
    for r in states(spec):
        p = pickle.loads(pickle.dumps(r, protocol=protocol))
        assert type(p) is type(r)
        assert p == r
        assert p.nodes == r.nodes
        if len(r):
            assert routes(p) == routes(r)
            assert p.get_indices(ROUTE_KEYS).tolist() == r.get_indices(ROUTE_KEYS).tolist()


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_to_bytes_round_trip(spec: RouterSpec) -> None:
    for r in states(spec):
        b = r.to_bytes()
        assert isinstance(b, bytes)
        q = type(r).from_bytes(b)
        assert type(q) is type(r)
        assert q == r
        assert q.nodes == r.nodes
        assert q.to_bytes() == b
        if len(r):
            assert routes(q) == routes(r)
    assert router(spec).to_bytes() == router(spec).to_bytes()
    assert router(spec).to_bytes() != router(spec, NODES[:-1]).to_bytes()


def _cuts(n: int) -> list[int]:
    """Cut points for truncation: all of them for short data, else a spread."""
    if n <= 200:
        return list(range(n))
    return sorted(set(list(range(24)) + list(range(n - 24, n)) + list(range(0, n, n // 50))))


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_from_bytes_truncated(spec: RouterSpec) -> None:
    r = router(spec)
    data = r.to_bytes()
    for i in _cuts(len(data)):
        with pytest.raises(ValueError):
            type(r).from_bytes(data[:i])
    with pytest.raises(ValueError):
        type(r).from_bytes(data + b"\x00")


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_from_bytes_damaged(spec: RouterSpec) -> None:
    r = router(spec)
    data = r.to_bytes()
    for i in _cuts(len(data)):
        for mask in (0x01, 0x80, 0xFF):
            bad = data[:i] + bytes([data[i] ^ mask]) + data[i + 1:]
            with pytest.raises(ValueError):
                type(r).from_bytes(bad)


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_from_bytes_foreign(spec: RouterSpec) -> None:
    cls = spec.cls
    rng = random.Random(7)
    foreign: list[bytes] = [b"", b"\x00", b"\x00" * 64, b"\xff" * 64, b"not a router at all",
                            bytes(rng.randrange(256) for _ in range(300)),
                            pickle.dumps(NODES), b"\x89CHR", b"\x89CHR" + b"\x00" * 40]
    for other in ROUTERS:  # every other router's bytes (inputs only: skip the ones that fail)
        if other.cls is cls:
            continue
        try:
            foreign.append(other.make(list(NODES)).to_bytes())
        except Exception:  # noqa: BLE001 - that router's own tests report it
            pass
    for b in foreign:
        with pytest.raises(ValueError):
            cls.from_bytes(b)
        with pytest.raises(ValueError):
            cls.from_bytes(bytearray(b))


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_from_bytes_of_another_router_names_the_kind(spec: RouterSpec) -> None:
    other = next(o for o in ROUTERS if o.cls is not spec.cls)
    with pytest.raises(ValueError, match="kind"):
        spec.cls.from_bytes(other.make(list(NODES)).to_bytes())


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("data", ["text", 5, None, [1, 2]], ids=["str", "int", "None", "list"])
def test_from_bytes_wrong_type(spec: RouterSpec, data: Any) -> None:
    with pytest.raises(TypeError):
        spec.cls.from_bytes(data)
    with pytest.raises(TypeError):
        spec.cls.from_bytes(router(spec).to_bytes().hex())


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_from_bytes_accepts_bytes_like(spec: RouterSpec) -> None:
    r = router(spec)
    data = r.to_bytes()
    assert spec.cls.from_bytes(bytearray(data)) == r
    assert spec.cls.from_bytes(memoryview(data)) == r


def _reseal(data: bytes, payload: bytes) -> bytes:
    """The documented envelope (consistent_hash/_format.py) around another payload: magic,
    version, kind, u32 length, payload, then the first 8 bytes of sha256 of all that."""
    head = data[:8] + struct.pack("<I", len(payload)) + payload
    return head + hashlib.sha256(head).digest()[:8]


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_from_bytes_damaged_payload_with_a_valid_checksum(spec: RouterSpec) -> None:
    """Damage the checksum cannot catch (a re-sealed payload): a ValueError or a valid router of
    the same class, never another exception or a crash."""
    r = router(spec)
    data = r.to_bytes()
    assert data[:4] == b"\x89CHR" and len(data) >= 20, "to_bytes left the documented envelope"
    (length,) = struct.unpack_from("<I", data, 8)
    payload = data[12:12 + length]
    assert len(data) == 12 + length + 8
    assert _reseal(data, payload) == data
    cases = [payload[:i] for i in range(len(payload))] + [payload + b"\x00", payload + b"\xff"]
    for i in range(len(payload)):
        for v in (0x00, 0xFF, payload[i] ^ 0x80):
            cases.append(payload[:i] + bytes([v]) + payload[i + 1:])
    for p in cases:
        try:
            got = type(r).from_bytes(_reseal(data, p))
        except ValueError:
            continue
        assert type(got) is type(r)
        assert isinstance(len(got), int)


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_fingerprint(spec: RouterSpec) -> None:
    r = router(spec)
    f = r.fingerprint()
    assert isinstance(f, str) and re.fullmatch(r"[0-9a-f]{64}", f), f
    assert router(spec).fingerprint() == f
    assert r.copy().fingerprint() == f
    assert pickle.loads(pickle.dumps(r)).fingerprint() == f
    others = {router(spec, NODES[:-1]).fingerprint(),
              router(spec, NODES + [EXTRA_NODE]).fingerprint(),
              router(spec, NODES[1:]).fingerprint()}
    assert f not in others and len(others) == 3
    if spec.empty_ok:
        assert router(spec, []).fingerprint() not in others | {f}
    if spec.mutable:
        spec.add(r, EXTRA_NODE)
        assert r.fingerprint() != f
        assert r.fingerprint() == router(spec, NODES + [EXTRA_NODE]).fingerprint()
        spec.remove(r, EXTRA_NODE)
        assert r.fingerprint() == f

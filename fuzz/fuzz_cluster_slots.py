"""Fuzz ``SlotMap.from_cluster_slots`` over CLUSTER SLOTS replies decoded from the bytes.

The bytes decode to a reply: either redis-py's raw list ``[[first, last, [host, port, id],
replicas...], ...]`` or its ``cluster_slots()`` dict ``{(first, last): {"primary": (host,
port), ...}}``, with every field drawn from a small value grammar (ints near the slot and
port limits, bytes and str hosts, nested lists, None, floats, bools), so most inputs are
nearly-valid replies. An accepted reply must give the slot table a pure-Python reading of the
reply gives (every slot of every range owned by that range's "host:port", the rest
unassigned), and route keys the same way through ``get`` and ``get_many``.

    python fuzz/fuzz_cluster_slots.py [-atheris_runs=N] fuzz/corpus/cluster_slots
"""

from __future__ import annotations

from typing import Any

import _harness  # noqa: I001
import numpy as np

from consistent_hash import SlotMap

SLOTS = 16384
KEYS = ["", "a", "{user1000}.following", "foo{}{bar}", "ключ"]
INTS = [0, 1, 100, 5460, 5461, 10922, 16382, 16383, 16384, -1, 6379, 65535, 65536, 2**63,
        -2**63, 2**64]


def value(b: _harness.Bytes, depth: int = 0) -> Any:
    """Any value: what a mangled reply might hold."""
    t = b.int(0, 11)
    if t == 0:
        return b.pick(INTS)
    if t == 1:
        return b.int(-3, SLOTS + 3)
    if t == 2:
        return b.bytes(b.int(0, 12))
    if t == 3:
        return b.text(b.int(0, 12))
    if t == 4 and depth < 3:
        return [value(b, depth + 1) for _ in range(b.int(0, 4))]
    if t == 5 and depth < 3:
        return tuple(value(b, depth + 1) for _ in range(b.int(0, 4)))
    if t == 6:
        return None
    if t == 7:
        return b.pick([True, False, 1.0, 0.5, float("inf"), float("nan"), np.int64(7),
                       np.uint16(6379)])
    if t == 8 and depth < 3:
        return {value(b, 3): value(b, depth + 1) for _ in range(b.int(0, 2))}
    return b.int(0, 70000)


def slot(b: _harness.Bytes) -> Any:
    return b.int(0, SLOTS - 1) if b.int(0, 7) else value(b)


def node(b: _harness.Bytes) -> Any:
    if not b.int(0, 7):
        return value(b)
    host = b.pick([b"127.0.0.1", "10.0.0.1", b"", "::1", b"redis-a", "\xe9"]) if b.bool() \
        else (b.bytes(b.int(0, 8)) if b.bool() else b.text(b.int(0, 8)))
    port = b.int(0, 65535) if b.int(0, 3) else value(b)
    extra = [value(b) for _ in range(b.int(0, 2))]
    return [host, port, *extra]


def reply(b: _harness.Bytes) -> Any:
    n = b.int(0, 6)
    if b.int(0, 3) == 0:
        out: dict[Any, Any] = {}
        for _ in range(n):
            key = (slot(b), slot(b)) if b.int(0, 7) else value(b)
            try:
                hash(key)
            except TypeError:
                continue
            primary = node(b)
            out[key] = {"primary": tuple(primary) if isinstance(primary, list) else primary,
                        "replicas": []} if b.int(0, 5) else primary
        return out
    entries = []
    for _ in range(n):
        e = [slot(b), slot(b), node(b), *[node(b) for _ in range(b.int(0, 2))]]
        if not b.int(0, 7):
            e = e[: b.int(0, 4)]
        entries.append(e if b.int(0, 7) else value(b))
    return entries if b.int(0, 7) else tuple(entries)


def model(r: Any) -> np.ndarray:
    """The slot table a valid reply describes, read without the library: slot -> name."""
    table = np.full(SLOTS, None, dtype=object)
    items = ([(k[0], k[1], v["primary"] if isinstance(v, dict) else v) for k, v in r.items()]
             if isinstance(r, dict) else [(e[0], e[1], e[2]) for e in r])
    for first, last, (host, port, *_) in items:
        if isinstance(host, bytes):
            host = host.decode()
        assert not (table[first : last + 1] != None).any()  # noqa: E711
        table[first : last + 1] = f"{host}:{int(port)}"
    return table


def test_one(data: bytes) -> None:
    b = _harness.Bytes(data)
    r = reply(b)
    try:
        m = SlotMap.from_cluster_slots(r)
    except _harness.EXPECTED:
        return
    want = model(r)
    got = np.array([*m.nodes, None], dtype=object)[m.table]
    assert (got == want).all(), (r, m)
    names = list(m.get_many(KEYS, nulls="none")) if None in want else list(m.get_many(KEYS))
    for k, name in zip(KEYS, names, strict=True):
        try:
            assert m.get(k) == name
        except LookupError:
            assert name is None


if __name__ == "__main__":
    _harness.main(test_one)

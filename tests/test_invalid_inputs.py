"""HashRing's own errors (DESIGN.md, "Errors"): vnodes, weights, seeds, hashes, node names,
mutations, crafted from_bytes payloads, large batches: the exception type, a message that names
the argument / type / position, and a ring left exactly as it was.  The errors every router
shares (key types and positions, dtypes, shapes, non-containers, surrogates, lookup, out=, n,
empty routers, from_bytes of damaged / foreign / non-bytes data) are tests/test_conformance.py."""

from __future__ import annotations

import hashlib
import math
import struct

import pytest
from helpers import names_word
from hypothesis import given
from hypothesis import strategies as st

from consistent_hash import HashRing

# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def state(ring: HashRing):
    """Everything observable that defines a ring."""
    return (ring.nodes, ring.weights, len(ring), ring.positions.tobytes(),
            ring.owners.tobytes(), ring.fingerprint(), ring.to_bytes(),
            ring.get_many([f"k{i}" for i in range(200)]).tolist())


@pytest.fixture
def ring():
    return HashRing({"a": 1.0, "b": 2.0, "ü": 0.5}, vnodes=20)


# --------------------------------------------------------------------------------------------
# empty ring
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["constructed", "emptied"])
def test_empty_ring_has_no_positions(how):
    """(Lookups on an empty router: tests/test_conformance.py, test_empty_router_*.)"""
    r = HashRing() if how == "constructed" else HashRing(["x", "y"])
    if how == "emptied":
        r.remove("x")
        r.remove("y")
    assert len(r.positions) == 0 and len(r.owners) == 0 and r.weights == {}


# --------------------------------------------------------------------------------------------
# unsupported keys
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("hash_name", ["xxh3", "md5"])
def test_batch_bad_key_deep_in_a_large_batch(ring, hash_name):
    r = HashRing(ring.weights, vnodes=20, hash=hash_name)
    keys = [f"key{i}" for i in range(10_000)]
    keys[5000] = 2.5
    before = state(r)
    for fn in (r.get_many, r.get_indices, r.hash_many):
        with pytest.raises(TypeError) as ei:
            fn(keys)
        assert "float" in str(ei.value) and names_word(str(ei.value), "5000")
    assert state(r) == before


def test_batch_bad_key_with_callable_hash_names_position():
    r = HashRing(["a", "b"], hash=lambda b: int.from_bytes(hashlib.sha1(b).digest()[:8], "big"))
    keys = ["x"] * 3000
    keys[2500] = None
    with pytest.raises(TypeError) as ei:
        r.get_many(keys)
    assert "NoneType" in str(ei.value) and names_word(str(ei.value), "2500")


# --------------------------------------------------------------------------------------------
# constructor / mutation arguments
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("vnodes", [0, -1, 10**9, 2**64])
def test_bad_vnodes_value(vnodes):
    with pytest.raises(ValueError) as ei:
        HashRing(["a"], vnodes=vnodes)
    assert "vnodes" in str(ei.value)


@pytest.mark.parametrize("vnodes", [1.5, True, "3", None, 3.0])
def test_bad_vnodes_type(vnodes):
    with pytest.raises((TypeError, ValueError)) as ei:
        HashRing(["a"], vnodes=vnodes)
    assert "vnodes" in str(ei.value)


BAD_WEIGHT_VALUES = [0, 0.0, -1, -0.5, math.nan, math.inf, -math.inf]
BAD_WEIGHT_TYPES = ["1", None, True, [1], 1 + 0j]


def weight_refused(ring, w, exc, set_weight_words=("weight",), names_node=True):
    """add, set_weight and the constructor refuse weight ``w`` with ``exc``, naming the
    weight (and, if ``names_node``, the node in the constructor); the ring is left as it was."""
    before = state(ring)
    with pytest.raises(exc) as ei:
        ring.add("new", w)
    assert "weight" in str(ei.value)
    with pytest.raises(exc) as ei:
        ring.set_weight("a", w)
    assert any(word in str(ei.value) for word in set_weight_words), str(ei.value)
    assert state(ring) == before
    with pytest.raises(exc) as ei:
        HashRing({"a": 1.0, "q": w})
    assert "weight" in str(ei.value) and (not names_node or "q" in str(ei.value))


@pytest.mark.parametrize("w", BAD_WEIGHT_VALUES + BAD_WEIGHT_TYPES, ids=repr)
def test_bad_weight(ring, w):
    exc = ValueError if w in BAD_WEIGHT_VALUES or (isinstance(w, float) and w != w) else \
        (TypeError, ValueError)
    weight_refused(ring, w, exc)


@pytest.mark.parametrize("w", [1e308, 1.7976931348623157e308, 1e300, 1e12])
def test_absurd_finite_weight_is_value_error(ring, w):
    """A finite weight too large for the ring is a ValueError naming the weight, in every
    entry point, and leaves the ring unchanged (1e308 * vnodes overflows to inf: it must not
    escape as OverflowError)."""
    weight_refused(ring, w, ValueError, ("weight", "vnodes"), names_node=False)
    with pytest.raises(ValueError):
        HashRing({"a": w})


@pytest.mark.parametrize("weights", [{"a": 1e7}, {"a": 1.0, "b": 9e6}])
def test_a_ring_too_big_for_memory_is_refused_up_front(weights):
    """HashRing({"a": 1e7}) is 1.6e9 vnodes: under the 2**31 index limit, but its build needs
    ~64 GB.  It is refused before anything is allocated, with the figures (it used to run for
    a minute into a bare MemoryError); add() of such a node too, leaving the ring as it was."""
    from consistent_hash._validate import BUILD_BYTES_PER_VNODE, physical_memory

    total = sum(max(1, math.floor(160 * w + 0.5)) for w in weights.values())
    memory = physical_memory()
    assert memory is not None and total * BUILD_BYTES_PER_VNODE > memory  # this machine's
    with pytest.raises(ValueError) as ei:
        HashRing(weights)
    msg = str(ei.value)
    assert f"{total:,} vnodes" in msg and "GB of memory" in msg and "this machine's" in msg
    ring = HashRing({"x": 1.0, "y": 2.0})
    before = state(ring)
    with pytest.raises(ValueError, match="GB of memory"):
        ring.add("big", 1e7)
    with pytest.raises(ValueError, match="GB of memory"):
        ring.set_weight("x", 1e7)
    assert state(ring) == before


def test_ring_memory_check_figures():
    from consistent_hash._validate import check_ring_memory

    check_ring_memory(10**6, memory=10**9)  # 40 MB to build: fine on 1 GB
    with pytest.raises(ValueError, match=r"100,000,000 vnodes: about 4\.0 GB of memory to "
                                         r"build \(1\.2 GB to hold\), more than this "
                                         r"machine's 1\.0 GB"):
        check_ring_memory(10**8, memory=10**9)


SEED_CASES = [("xxh3", -1), ("xxh3", 2**64), ("xxh64", -1), ("xxh64", 2**64),
              ("murmur3", 2**32), ("murmur3", -1), ("md5", 1), ("md5", 2**63)]


@pytest.mark.parametrize("hash_name,seed", SEED_CASES)
def test_bad_seed_value(hash_name, seed):
    with pytest.raises(ValueError) as ei:
        HashRing(["a"], hash=hash_name, seed=seed)
    assert "seed" in str(ei.value)


@pytest.mark.parametrize("seed", [1.0, "1", None, True])
def test_bad_seed_type(seed):
    with pytest.raises((TypeError, ValueError)) as ei:
        HashRing(["a"], seed=seed)
    assert "seed" in str(ei.value)


def test_callable_hash_requires_seed_zero():
    with pytest.raises(ValueError) as ei:
        HashRing(["a"], hash=lambda b: 1, seed=1)
    assert "seed" in str(ei.value)


@pytest.mark.parametrize("hash_name", ["sha1", "", "XXH4", "md5 "])
def test_unknown_hash_name(hash_name):
    with pytest.raises(ValueError) as ei:
        HashRing(["a"], hash=hash_name)
    assert "hash" in str(ei.value) and repr(hash_name) in str(ei.value)


@pytest.mark.parametrize("hash_obj", [5, None, b"xxh3"])
def test_hash_of_wrong_type(hash_obj):
    with pytest.raises(TypeError) as ei:
        HashRing(["a"], hash=hash_obj)
    assert "hash" in str(ei.value)


def test_add_duplicate_is_value_error(ring):
    before = state(ring)
    for w in (1.0, 2.0, 7.0):  # same or different weight
        with pytest.raises(ValueError) as ei:
            ring.add("b", w)
        assert "'b'" in str(ei.value)
    assert state(ring) == before
    with pytest.raises(ValueError) as ei:
        HashRing(["a", "b", "a"])
    assert "'a'" in str(ei.value)


@pytest.mark.parametrize("name", ["zz", "A", "a ", ""])
def test_remove_or_set_weight_of_absent_node_is_key_error(ring, name):
    before = state(ring)
    with pytest.raises(KeyError) as ei:
        ring.remove(name)
    assert ei.value.args[0] == name
    with pytest.raises(KeyError) as ei:
        ring.set_weight(name, 2.0)
    assert ei.value.args[0] == name
    assert state(ring) == before


@pytest.mark.parametrize("node", [5, None, b"a", 1.0])
def test_node_of_wrong_type(ring, node):
    before = state(ring)
    with pytest.raises(TypeError) as ei:
        ring.add(node)
    assert type(node).__name__ in str(ei.value)
    assert state(ring) == before
    with pytest.raises(TypeError):
        HashRing([node])


def test_single_string_as_nodes_rejected():
    with pytest.raises(TypeError) as ei:
        HashRing("abc")
    assert "str" in str(ei.value)


# --------------------------------------------------------------------------------------------
# lone surrogates
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["\ud800", "node\udcff"])
def test_lone_surrogate_node_names(ring, name):
    before = state(ring)
    with pytest.raises(UnicodeEncodeError):
        ring.add(name)
    assert state(ring) == before
    with pytest.raises(UnicodeEncodeError):
        HashRing([name])
    with pytest.raises(UnicodeEncodeError):
        HashRing({"ok": 1.0, name: 2.0})



# --------------------------------------------------------------------------------------------
# from_bytes on foreign or damaged data
# --------------------------------------------------------------------------------------------

HEADER = struct.Struct("<4sHHI")


def envelope(payload: bytes, *, magic=b"\x89CHR", version=1, kind=1) -> bytes:
    """The to_bytes envelope: magic, version u16, kind u16, length u32, payload,
    first 8 bytes of sha256 of everything before."""
    head = HEADER.pack(magic, version, kind, len(payload)) + payload
    return head + hashlib.sha256(head).digest()[:8]


def payload(hash_name=b"xxh3", seed=0, vnodes=20, nodes=(("a", 1.0),), count=None) -> bytes:
    parts = [struct.pack("<B", len(hash_name)), hash_name,
             struct.pack("<QII", seed, vnodes, len(nodes) if count is None else count)]
    for name, w in nodes:
        b = name if isinstance(name, bytes) else name.encode()
        parts += [struct.pack("<I", len(b)), b, struct.pack("<d", w)]
    return b"".join(parts)


REAL = HashRing({"a": 1.0, "b": 2.5, "é": 0.5}, vnodes=20, hash="murmur3", seed=7)
REAL_BYTES = REAL.to_bytes()


def test_envelope_helper_matches_real_output():
    """Keeps the crafted-payload tests honest: the helper reproduces a real serialization."""
    assert envelope(payload(b"murmur3", 7, 20, (("a", 1.0), ("b", 2.5), ("é", 0.5))))\
        == REAL_BYTES
    assert HashRing.from_bytes(REAL_BYTES) == REAL


@given(st.binary(max_size=200))
def test_from_bytes_random_bytes(data):
    for d in (data, b"\x89CHR" + data, REAL_BYTES[:12] + data):
        try:
            r = HashRing.from_bytes(d)
        except ValueError:
            continue
        assert d == REAL_BYTES and r == REAL  # only a real payload may parse


CRAFTED = {
    "unknown_hash": payload(hash_name=b"sha1"),
    "callable_hash_name": payload(hash_name=b"callable"),
    "non_ascii_hash": payload(hash_name=b"\xff\xfe"),
    "md5_seed_1": payload(hash_name=b"md5", seed=1),
    "murmur_seed_2**32": payload(hash_name=b"murmur3", seed=2**32),
    "vnodes_0": payload(vnodes=0),
    "vnodes_absurd": payload(vnodes=2**32 - 1),
    "weight_nan": payload(nodes=(("a", math.nan),)),
    "weight_inf": payload(nodes=(("a", math.inf),)),
    "weight_0": payload(nodes=(("a", 0.0),)),
    "weight_negative": payload(nodes=(("a", -1.0),)),
    "weight_1e308": payload(nodes=(("a", 1e308),)),
    "weight_1e12": payload(nodes=(("a", 1e12),)),
    "duplicate_names": payload(nodes=(("a", 1.0), ("a", 2.0))),
    "bad_utf8_name": payload(nodes=((b"\xff", 1.0),)),
    "surrogate_name": payload(nodes=((b"\xed\xa0\x80", 1.0),)),
    "count_too_large": payload(count=2**32 - 1),
    "count_too_small": payload(nodes=(("a", 1.0), ("b", 1.0)), count=1),
    "name_length_past_end": payload()[:-13] + struct.pack("<I", 2**31) + b"a" + b"\0" * 8,
    "trailing_bytes": payload() + b"\x00",
    "empty_payload": b"",
}


@pytest.mark.parametrize("case", list(CRAFTED))
def test_from_bytes_foreign_payload_with_valid_envelope(case):
    with pytest.raises(ValueError):
        HashRing.from_bytes(envelope(CRAFTED[case]))


@pytest.mark.parametrize("kw", [{"magic": b"\x89CHS"}, {"version": 2}, {"version": 0},
                                {"kind": 2}, {"kind": 0}])
def test_from_bytes_foreign_envelope(kw):
    with pytest.raises(ValueError):
        HashRing.from_bytes(envelope(payload(), **kw))


# --------------------------------------------------------------------------------------------
# nothing is half-applied
# --------------------------------------------------------------------------------------------

FAILING_CALLS = {
    "add_bad_weight": (lambda r: r.add("new", -1.0), ValueError),
    "add_nan_weight": (lambda r: r.add("new", math.nan), ValueError),
    "add_duplicate": (lambda r: r.add("a", 3.0), ValueError),
    "add_surrogate": (lambda r: r.add("\udc80"), UnicodeEncodeError),
    "add_non_str": (lambda r: r.add(7), TypeError),
    "remove_unknown": (lambda r: r.remove("nope"), KeyError),
    "set_weight_unknown": (lambda r: r.set_weight("nope", 2.0), KeyError),
    "set_weight_zero": (lambda r: r.set_weight("a", 0), ValueError),
    "set_weight_inf": (lambda r: r.set_weight("b", math.inf), ValueError),
    "set_weight_str": (lambda r: r.set_weight("b", "2"), (TypeError, ValueError)),
    "get_many_bad_key_5000": (
        lambda r: r.get_many([f"k{i}" if i != 5000 else None for i in range(10_000)]),
        TypeError),
    "replicas_bad_n": (lambda r: r.replicas_many(["a"], 0), ValueError),
    "lookup_negative": (lambda r: r.lookup([-1]), ValueError),
    "get_float": (lambda r: r.get(1.5), TypeError),
}


@pytest.mark.parametrize("name", list(FAILING_CALLS))
def test_raising_call_leaves_ring_unchanged(name):
    call, exc = FAILING_CALLS[name]
    r = HashRing({"a": 1.0, "b": 2.0, "c": 0.75}, vnodes=30, hash="xxh64", seed=11)
    before = state(r)
    copy_before = r.copy()
    with pytest.raises(exc):
        call(r)
    assert state(r) == before
    assert r == copy_before
    # and it still mutates normally afterwards
    r.add("d")
    copy_before.add("d")
    assert state(r) == state(copy_before)

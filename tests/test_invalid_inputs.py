"""Every error of DESIGN.md's "Errors" section: the exception type, a message that names the
argument / type / dtype / position, and a ring left exactly as it was."""

from __future__ import annotations

import hashlib
import math
import re
import struct

import numpy as np
import pytest
from helpers import names_word
from hypothesis import given
from hypothesis import strategies as st

from consistent_hash import EmptyRingError, HashRing

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

EMPTY_CALLS = {
    "get": lambda r: r.get("k"),
    "get_many": lambda r: r.get_many(["k"]),
    "get_many_array": lambda r: r.get_many(np.array(["k"])),
    "get_indices": lambda r: r.get_indices(["k"]),
    "lookup": lambda r: r.lookup(np.array([1], dtype=np.uint64)),
    "replicas": lambda r: r.replicas("k", 2),
    "replicas_many": lambda r: r.replicas_many(["k"], 2),
    "replica_indices": lambda r: r.replica_indices(["k"], 2),
}


def test_empty_batch_on_empty_ring_is_empty():
    r = HashRing()
    assert r.get_many([]).shape == (0,) and r.get_indices([]).shape == (0,)
    assert r.lookup(np.empty(0, dtype=np.uint64)).shape == (0,)


def test_empty_ring_error_is_a_lookup_error():
    assert issubclass(EmptyRingError, LookupError)


@pytest.mark.parametrize("how", ["constructed", "emptied"])
@pytest.mark.parametrize("call", list(EMPTY_CALLS))
def test_empty_ring_raises(call, how):
    if how == "constructed":
        r = HashRing()
    else:
        r = HashRing(["x", "y"])
        r.remove("x")
        r.remove("y")
    with pytest.raises(EmptyRingError) as ei:
        EMPTY_CALLS[call](r)
    assert isinstance(ei.value, LookupError)
    assert re.search(r"empty|no nodes", str(ei.value))
    assert len(r) == 0 and r.nodes == () and len(r.positions) == 0


@pytest.mark.parametrize("how", ["constructed", "emptied"])
def test_empty_batch_on_an_empty_ring_is_an_empty_result(how):
    """Empty partitions and briefly empty pools are normal in batch jobs: no error."""
    r = HashRing() if how == "constructed" else HashRing(["x"])
    if how == "emptied":
        r.remove("x")
    assert r.get_many([]).dtype == object and r.get_many([]).shape == (0,)
    assert r.get_indices(np.array([], dtype="U1")).dtype == np.int32
    assert r.get_indices([]).shape == (0,)
    assert r.lookup(np.array([], dtype=np.uint64)).shape == (0,)
    assert r.hash_many([]).dtype == np.uint64
    assert r.replica_indices([], 2).shape == (0, 0)
    assert r.replicas_many([], 2).shape == (0, 0)


# --------------------------------------------------------------------------------------------
# unsupported keys
# --------------------------------------------------------------------------------------------

BAD_KEYS = [1.5, None, True, False, np.bool_(True), [1], {"a": 1}, object(), 1 + 2j, {1}]


@pytest.mark.parametrize("key", BAD_KEYS, ids=lambda k: type(k).__name__)
def test_get_rejects_unsupported_key_type(ring, key):
    for call in (ring.get, ring.hash, lambda k: ring.replicas(k, 2)):
        with pytest.raises(TypeError) as ei:
            call(key)
        assert repr(type(key).__name__) in str(ei.value) or \
            names_word(str(ei.value), type(key).__name__)


@pytest.mark.parametrize("key", BAD_KEYS, ids=lambda k: type(k).__name__)
@pytest.mark.parametrize("container", ["list", "tuple", "object_array"])
@pytest.mark.parametrize("call", ["get_many", "get_indices", "hash_many", "replicas_many",
                                  "replica_indices"])
def test_batch_rejects_unsupported_key_type_naming_position(ring, key, container, call):
    keys = ["a", b"b", 3, "d", "e", "f", "g"]
    keys.insert(5, key)
    if container == "tuple":
        keys = tuple(keys)
    elif container == "object_array":
        a = np.empty(len(keys), dtype=object)
        a[:] = keys
        keys = a
    fn = getattr(ring, call)
    before = state(ring)
    with pytest.raises(TypeError) as ei:
        fn(keys, 2) if call.startswith("replica") else fn(keys)
    msg = str(ei.value)
    assert type(key).__name__ in msg
    assert names_word(msg, "5"), msg
    assert state(ring) == before


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
# unsupported array dtypes / shapes
# --------------------------------------------------------------------------------------------

BAD_ARRAYS = {
    "float64": np.array([1.0, 2.0]),
    "float32": np.array([1.0], dtype=np.float32),
    "bool": np.array([True, False]),
    "complex128": np.array([1 + 1j]),
    "datetime64[D]": np.array(["2024-01-01"], dtype="datetime64[D]"),
    "timedelta64[s]": np.array([5], dtype="timedelta64[s]"),
    "void": np.zeros(2, dtype="V4"),
}


@pytest.mark.parametrize("name", list(BAD_ARRAYS))
@pytest.mark.parametrize("call", ["get_many", "get_indices", "hash_many", "replicas_many"])
def test_unsupported_dtype_names_the_dtype(ring, name, call):
    arr = BAD_ARRAYS[name]
    fn = getattr(ring, call)
    with pytest.raises(TypeError) as ei:
        fn(arr, 2) if call == "replicas_many" else fn(arr)
    assert str(arr.dtype) in str(ei.value)
    # also on an empty array of that dtype
    with pytest.raises(TypeError):
        fn(arr[:0], 2) if call == "replicas_many" else fn(arr[:0])


@pytest.mark.parametrize("arr", [np.array([["a", "b"], ["c", "d"]]), np.zeros((3, 2), np.int64),
                                 np.array([[b"x"]]), np.zeros((2, 2, 2), dtype=object)],
                         ids=["U2d", "i8_2d", "S2d", "O3d"])
@pytest.mark.parametrize("call", ["get_many", "get_indices", "hash_many", "replicas_many"])
def test_multidimensional_key_arrays_rejected(ring, arr, call):
    fn = getattr(ring, call)
    with pytest.raises((TypeError, ValueError)) as ei:
        fn(arr, 2) if call == "replicas_many" else fn(arr)
    assert str(arr.shape) in str(ei.value) or "dimension" in str(ei.value)


@pytest.mark.parametrize("keys", ["abc", b"abc", 5, None, (k for k in "ab")],
                         ids=["str", "bytes", "int", "None", "generator"])
def test_batch_calls_reject_non_containers(ring, keys):
    with pytest.raises(TypeError) as ei:
        ring.get_many(keys)
    assert type(keys).__name__ in str(ei.value)


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


@pytest.mark.parametrize("n", [0, -1, -(2**40)])
@pytest.mark.parametrize("call", ["replicas", "replicas_many", "replica_indices"])
def test_bad_n_value(ring, n, call):
    arg = "k" if call == "replicas" else ["k"]
    with pytest.raises(ValueError) as ei:
        getattr(ring, call)(arg, n)
    assert names_word(str(ei.value), "n")


@pytest.mark.parametrize("n", [1.5, "2", None, True])
@pytest.mark.parametrize("call", ["replicas", "replicas_many", "replica_indices"])
def test_bad_n_type(ring, n, call):
    arg = "k" if call == "replicas" else ["k"]
    with pytest.raises((TypeError, ValueError)) as ei:
        getattr(ring, call)(arg, n)
    assert names_word(str(ei.value), "n")


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

SURROGATE_KEYS = ["\ud800", "ab\udfff", "é\udc00x", "x" * 5000 + "\ud800"]


@pytest.mark.parametrize("key", SURROGATE_KEYS, ids=range(len(SURROGATE_KEYS)))
def test_lone_surrogate_keys(ring, key):
    with pytest.raises(UnicodeEncodeError):
        key.encode("utf-8")  # what str.encode does
    before = state(ring)
    with pytest.raises(UnicodeEncodeError):
        ring.get(key)
    with pytest.raises(UnicodeEncodeError):
        ring.hash(key)
    with pytest.raises(UnicodeEncodeError):
        ring.replicas(key, 2)
    batch = ["fine", "é"] * 2000 + [key] + ["tail"]
    for container in (batch, tuple(batch), np.array(batch), np.array(batch, dtype=object)):
        with pytest.raises(UnicodeEncodeError):
            ring.get_many(container)
        with pytest.raises(UnicodeEncodeError):
            ring.hash_many(container)
        with pytest.raises(UnicodeEncodeError):
            ring.replicas_many(container, 2)
    assert state(ring) == before


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
# lookup() of pre-hashed keys
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("hashes", [[-1], [5, -5], np.array([-3], dtype=np.int64),
                                    np.array([1, -1], dtype=np.int8), [2**64], [0, 2**64 + 1],
                                    np.zeros((2, 2), dtype=np.uint64)],
                         ids=["neg_list", "neg_list2", "neg_i64", "neg_i8", "2**64",
                              "too_big_list", "2d"])
def test_lookup_rejects_out_of_range_values(ring, hashes):
    with pytest.raises(ValueError):
        ring.lookup(hashes)


@pytest.mark.parametrize("hashes", [np.array([1.0]), [1.5], np.array([True]),
                                    np.array(["1"]), "123", [None]],
                         ids=["f64", "float_list", "bool", "U", "str", "None"])
def test_lookup_rejects_non_integer_input(ring, hashes):
    with pytest.raises(TypeError) as ei:
        ring.lookup(hashes)
    assert "hashes" in str(ei.value)


def test_get_indices_out_parameter_checked(ring):
    with pytest.raises(ValueError) as ei:
        ring.get_indices(["a"], out=np.empty(2, dtype=np.int32))
    assert "out" in str(ei.value)
    with pytest.raises((TypeError, ValueError)):
        ring.get_indices(["a"], out=np.empty(1, dtype=np.int64))


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


def test_from_bytes_every_truncation():
    for n in range(len(REAL_BYTES)):
        with pytest.raises(ValueError):
            HashRing.from_bytes(REAL_BYTES[:n])
    with pytest.raises(ValueError):
        HashRing.from_bytes(REAL_BYTES + b"\x00")


@pytest.mark.parametrize("mask", [0x01, 0x80, 0xFF])
def test_from_bytes_every_single_byte_flip(mask):
    for i in range(len(REAL_BYTES)):
        damaged = bytearray(REAL_BYTES)
        damaged[i] ^= mask
        with pytest.raises(ValueError):
            HashRing.from_bytes(bytes(damaged))


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


@pytest.mark.parametrize("data", ["text", 5, None, [1, 2], REAL_BYTES.hex()],
                         ids=["str", "int", "None", "list", "hexstr"])
def test_from_bytes_wrong_type(data):
    with pytest.raises(TypeError):
        HashRing.from_bytes(data)


def test_from_bytes_accepts_bytes_like():
    assert HashRing.from_bytes(bytearray(REAL_BYTES)) == REAL
    assert HashRing.from_bytes(memoryview(REAL_BYTES)) == REAL


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

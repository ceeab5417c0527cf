"""redis_slot(key, bucket) against redis-py 8.1's own ``key_slot`` and ``Encoder``, and the
expectations of redis-py's own tests, transcribed.

Transcribed from redis/redis-py at v8.1.0 (commit e013126df18e476fbb8b8215f040f39bd3242683):
``tests/test_crc.py`` (class TestKeySlot: the nine tests, one per function below, with the
check value 0x31C3 of CRC16/XMODEM) and ``tests/test_cluster.py::TestRedisClusterObj::
test_keyslot`` (``RedisCluster.keyslot`` = ``key_slot(Encoder.encode(key))``: 1337 -> 4314,
``1337.1234`` hashed as ``"1337.1234"``, ...).  There the calls are to redis-py's
``key_slot``; here they are to ours.
"""

from __future__ import annotations

import random
from binascii import crc_hqx

import numpy as np
import pytest

from consistent_hash import SlotMap, redis_slot, redis_slots
from consistent_hash.compat.redis import SLOTS

redis = pytest.importorskip("redis")
from redis._parsers.encoders import Encoder  # noqa: E402
from redis.crc import key_slot  # noqa: E402

ENCODER = Encoder(encoding="utf-8", encoding_errors="strict", decode_responses=False)


def keyslot(key: object, bucket: int = SLOTS) -> int:
    """redis-py's RedisCluster.keyslot, with key_slot's bucket."""
    return int(key_slot(ENCODER.encode(key), bucket))


# -- redis-py tests/test_crc.py (v8.1.0), TestKeySlot, transcribed ------------------------

def test_known_crc16_value() -> None:
    assert crc_hqx(b"123456789", 0) == 0x31C3
    assert redis_slot(b"123456789") == 0x31C3 % SLOTS


def test_plain_key_hashes_whole_key() -> None:
    assert redis_slot(b"foo") == crc_hqx(b"foo", 0) % SLOTS


def test_slot_within_range() -> None:
    for key in (b"", b"foo", b"123456789", b"{user1000}.following"):
        assert 0 <= redis_slot(key) < SLOTS


def test_hash_tag_maps_to_same_slot() -> None:
    base = redis_slot(b"{user1000}")
    assert redis_slot(b"{user1000}.following") == base
    assert redis_slot(b"{user1000}.followers") == base
    assert redis_slot(b"foo{user1000}bar") == base


def test_only_first_hash_tag_is_used() -> None:
    assert redis_slot(b"{a}{b}") == redis_slot(b"a")
    assert redis_slot(b"{a}{b}") != redis_slot(b"b")


def test_nested_opening_brace_is_part_of_tag() -> None:
    assert redis_slot(b"{{bar}}zap") == redis_slot(b"{bar")


def test_empty_hash_tag_falls_back_to_whole_key() -> None:
    for key in (b"{}foo", b"foo{}", b"foo{}{bar}"):
        assert redis_slot(key) == crc_hqx(key, 0) % SLOTS


def test_unclosed_brace_falls_back_to_whole_key() -> None:
    assert redis_slot(b"{foo") == crc_hqx(b"{foo", 0) % SLOTS


def test_custom_bucket_is_honored() -> None:
    assert redis_slot(b"foo", 100) == crc_hqx(b"foo", 0) % 100
    assert 0 <= redis_slot(b"123456789", 100) < 100


# -- redis-py tests/test_cluster.py::test_keyslot (v8.1.0), transcribed ---------------------

def test_cluster_keyslot_expectations() -> None:
    assert redis_slot("foo") == 12182
    assert redis_slot("{foo}bar") == 12182
    assert redis_slot("{foo}") == 12182
    assert redis_slot(1337) == 4314
    assert redis_slot(125) == redis_slot(b"125")
    assert redis_slot(125) == redis_slot("\x31\x32\x35")
    assert redis_slot("大奖") == redis_slot(b"\xe5\xa4\xa7\xe5\xa5\x96")
    assert redis_slot(1337.1234) == redis_slot("1337.1234")
    assert redis_slot(1337) == redis_slot("1337")
    assert redis_slot(b"abc") == redis_slot("abc")


# -- against redis-py itself, thousands of keys -------------------------------------------

def _keys(n: int = 6000, seed: int = 11) -> list[object]:
    rnd = random.Random(seed)
    keys: list[object] = []
    for i in range(n):
        r = i % 8
        if r == 0:
            keys.append(f"user:{rnd.getrandbits(32)}")
        elif r == 1:
            keys.append(f"{{tag{i % 97}}}.field{i}")         # hash tags
        elif r == 2:
            keys.append(f"a{{}}b{{c{i}}}" if i % 3 else f"{{{{x{i}}}}}y")  # empty / nested
        elif r == 3:
            keys.append(rnd.getrandbits(70) - (1 << 69))      # ints, negative and huge
        elif r == 4:
            keys.append(rnd.uniform(-1e6, 1e6) if i % 5 else rnd.choice(
                [1337.1234, 0.1, 1e16, 1e-7, -0.0, float("inf"), float("nan"), 2.5e-300]))
        elif r == 5:
            keys.append(bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(0, 30))))
        elif r == 6:
            keys.append(f"ключ-{chr(0x4E00 + rnd.randrange(9000))}-{{ü{i % 13}}}")
        else:
            keys.append(bytearray(f"ba{{{i % 7}}}{i}".encode()))
    return keys


KEYS = _keys()


@pytest.mark.parametrize("bucket", [SLOTS, 100, 1, 4096, 65536, 16383, 3])
def test_redis_slot_is_redis_py_keyslot(bucket: int) -> None:
    assert [redis_slot(k, bucket) for k in KEYS] == [keyslot(k, bucket) for k in KEYS]


def test_numpy_float_scalar_as_redis_py_encodes_it() -> None:
    """np.float64 is a float: redis-py hashes its repr (under numpy 2, "np.float64(1.5)")."""
    for v in (np.float64(1.5), np.float64(1337.1234)):
        assert redis_slot(v) == keyslot(v)
        assert redis_slot(v, 100) == keyslot(v, 100)


def test_batch_paths_agree_for_int_keys() -> None:
    ints = [k for k in KEYS if isinstance(k, int)] + [0, -1, 2**63 - 1, -(2**63), 2**64 + 5]
    want = [keyslot(k) for k in ints]
    assert [redis_slot(k) for k in ints] == want
    assert redis_slots(ints).tolist() == want
    small = [k for k in ints if -(2**63) <= k < 2**63]
    assert redis_slots(np.array(small, dtype=np.int64)).tolist() == [keyslot(k) for k in small]
    u = np.array([0, 7, 2**64 - 1, 2**63], dtype=np.uint64)
    assert redis_slots(u).tolist() == [keyslot(int(k)) for k in u]
    for dt in (np.int8, np.uint16, np.int32):
        arr = np.arange(-5, 120, dtype=np.int64).astype(dt)
        assert redis_slots(arr).tolist() == [keyslot(int(k)) for k in arr]
    m = SlotMap.even(["a:6379", "b:6379", "c:6379", "d:6379", "e:6379"])
    nodes = [m.get_slot(s) for s in want]
    assert [m.get(k) for k in ints] == nodes                      # scalar
    assert m.get_many(ints).tolist() == nodes                     # batch, objects
    assert m.get_many(np.array(small, dtype=np.int64)).tolist() == \
        [m.get_slot(keyslot(k)) for k in small]                   # batch, int64 buffer
    assert m.get(np.int64(1337)) == m.get_slot(4314)


def test_slotmap_and_redis_slots_refuse_floats_both_ways() -> None:
    m = SlotMap.even(["a", "b"])
    with pytest.raises(TypeError):
        m.get(1337.1234)
    with pytest.raises(TypeError):
        m.get_many([1337.1234])
    with pytest.raises(TypeError):
        redis_slots([1.5])
    assert m.get(repr(1337.1234)) == m.get_slot(keyslot(1337.1234))


@pytest.mark.parametrize("key,bucket,exc", [
    (True, SLOTS, TypeError), (False, 100, TypeError), (None, SLOTS, TypeError),
    (object(), 100, TypeError), ("k", 0, ValueError), ("k", -3, ValueError),
    ("k", 1.5, TypeError), ("k", True, TypeError), ("k", "16384", TypeError)])
def test_bad_arguments(key: object, bucket: object, exc: type[Exception]) -> None:
    with pytest.raises(exc):
        redis_slot(key, bucket)  # type: ignore[arg-type]

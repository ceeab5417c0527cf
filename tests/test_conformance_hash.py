"""Conformance: hash= and seed= (the public hashes, callables, the internal hashes refused)."""

from __future__ import annotations

import copy
import hashlib
import pickle
from typing import Any

import pytest
from conformance_cases import (
    TAKES_HASH,
    ids,
    keys_for,
    router,
    routes,
)
from routers import RouterSpec

# --------------------------------------------------------------------------------------------
# hash=
# --------------------------------------------------------------------------------------------

PUBLIC_HASHES = ["xxh3", "xxh64", "murmur3", "md5"]
INTERNAL_HASHES = ["redis_slot", "one_at_a_time", "cassandra", "cassandra_raw", "ketama_md5",
                   "ketama_md5_next", "md5_next", "crc16", "fnv1a_32"]


def _callable_hash(b: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(b, digest_size=8).digest(), "little")


@pytest.mark.parametrize("spec", TAKES_HASH, ids=ids(TAKES_HASH))
@pytest.mark.parametrize("name", PUBLIC_HASHES + ["callable"])
def test_public_hashes_accepted(spec: RouterSpec, name: str) -> None:
    h: Any = _callable_hash if name == "callable" else name
    r = router(spec, hash=h)
    keys = keys_for(spec)[::3]
    expected = [r.get(k) for k in keys]
    assert r.get_many(keys).tolist() == expected
    assert r.lookup(r.hash_many(keys)).tolist() == r.get_indices(keys).tolist()
    assert r.hash_many(keys).tolist() == [r.hash(k) for k in keys]
    if name != "xxh3":
        assert r != router(spec)
    assert r == router(spec, hash=h)


@pytest.mark.parametrize("spec", TAKES_HASH, ids=ids(TAKES_HASH))
def test_callable_hash_routes_like_the_named_one_and_is_not_serialized(spec: RouterSpec) -> None:
    import xxhash

    r = router(spec, hash=lambda b: xxhash.xxh3_64_intdigest(b))
    keys = keys_for(spec)[::3]
    assert r.get_many(keys).tolist() == router(spec).get_many(keys).tolist()
    with pytest.raises(ValueError, match="callable"):
        r.to_bytes()
    assert pickle.loads(pickle.dumps(router(spec, hash=_callable_hash))) == \
        router(spec, hash=_callable_hash)  # a module-level function pickles by name


@pytest.mark.parametrize("spec", TAKES_HASH, ids=ids(TAKES_HASH))
def test_seed(spec: RouterSpec) -> None:
    a = router(spec, hash="xxh64", seed=5)
    assert a == router(spec, hash="xxh64", seed=5)
    assert a != router(spec, hash="xxh64", seed=6)
    assert a.fingerprint() != router(spec, hash="xxh64", seed=6).fingerprint()
    for other in (a.copy(), copy.deepcopy(a), pickle.loads(pickle.dumps(a)),
                  spec.cls.from_bytes(a.to_bytes())):
        assert other == a and other.fingerprint() == a.fingerprint()
        assert routes(other) == routes(a)
    for kw, exc in (({"seed": -1}, ValueError), ({"hash": "md5", "seed": 1}, ValueError),
                    ({"seed": 2**64}, ValueError), ({"seed": 1.5}, TypeError),
                    ({"hash": _callable_hash, "seed": 1}, ValueError)):
        with pytest.raises(exc, match="seed"):
            router(spec, **kw)


@pytest.mark.parametrize("spec", TAKES_HASH, ids=ids(TAKES_HASH))
@pytest.mark.parametrize("name", INTERNAL_HASHES + ["sha1", "XXH3", ""])
def test_internal_hashes_refused(spec: RouterSpec, name: str) -> None:
    with pytest.raises(ValueError) as ei:
        router(spec, hash=name)
    msg = str(ei.value)
    assert "hash" in msg
    for public in PUBLIC_HASHES:
        assert public in msg, msg
    rest = msg.replace(name, "", 1) if name else msg  # the echoed bad value may appear once
    for internal in INTERNAL_HASHES:
        assert internal not in rest, msg

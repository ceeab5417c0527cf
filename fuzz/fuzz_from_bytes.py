"""Fuzz ``from_bytes`` of every router class in tests/routers.py.

Input: byte 0 picks the router class, byte 1 the mode. Mode "payload" wraps the rest in a
valid envelope (magic, version, kind, length and checksum), so the mutations reach the
router's own payload parser instead of stopping at the checksum; mode "raw" hands the rest
to ``from_bytes`` as it is (the envelope checks). An accepted router must re-serialize to a
router equal to it, with the same bytes and fingerprint, and route a few keys the same way
through ``get`` (the plain-Python path), ``get_many`` and ``get_indices``.

    python fuzz/fuzz_from_bytes.py [-atheris_runs=N] fuzz/corpus/from_bytes
"""

from __future__ import annotations

import _harness  # noqa: I001  (sets sys.path and instruments the package first)
from routers import ROUTERS

from consistent_hash import _format
from consistent_hash.algorithms import maglev  # noqa: E402

# Maglev accepts any prime table_size up to MAX_TABLE_SIZE (2**26) from a few bytes; a table
# that large takes seconds to build under ASan. As HashRing's max_vnodes below, a budget that
# keeps the fuzzer fast (a larger size is refused by the same check).
maglev.MAX_TABLE_SIZE = 1 << 20

CLASSES = list(dict.fromkeys(s.cls for s in ROUTERS))
KEYS = ["", "a", "user:42", "ключ", "x" * 70, "10.0.0.1:6379"]
MAX_VNODES = 1 << 16  # HashRing: a budget low enough to keep the fuzzer fast


def load(cls: type, data: bytes) -> object:
    if cls.__name__ == "HashRing":
        return cls.from_bytes(data, max_vnodes=MAX_VNODES)  # type: ignore[attr-defined]
    return cls.from_bytes(data)  # type: ignore[attr-defined]


def scalar(router: object, key: str) -> str | None:
    try:
        return router.get(key)  # type: ignore[attr-defined, no-any-return]
    except LookupError:  # an empty router, an unassigned slot
        return None


def check(cls: type, router: object) -> None:
    blob = router.to_bytes()  # type: ignore[attr-defined]
    again = load(cls, blob)
    assert again == router, (router, again)
    assert again.to_bytes() == blob  # type: ignore[attr-defined]
    assert again.fingerprint() == router.fingerprint()  # type: ignore[attr-defined]
    want = [scalar(router, k) for k in KEYS]
    try:
        names = list(router.get_many(KEYS))  # type: ignore[attr-defined]
        idx = router.get_indices(KEYS)  # type: ignore[attr-defined]
    except LookupError:
        assert all(w is None for w in want), want
        return
    nodes = list(router.nodes)  # type: ignore[attr-defined]
    assert names == want, (names, want)
    assert [nodes[i] if i >= 0 else None for i in idx] == want


def test_one(data: bytes) -> None:
    if len(data) < 2:
        return
    cls = CLASSES[data[0] % len(CLASSES)]
    body = data[2:]
    if data[1] & 1:
        body = _format.pack(cls._kind, body)  # type: ignore[attr-defined]
    try:
        router = load(cls, body)
    except _harness.EXPECTED:
        return
    check(cls, router)


if __name__ == "__main__":
    _harness.main(test_one)

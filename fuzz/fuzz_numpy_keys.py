"""Fuzz the keys pipeline over NumPy arrays made from the bytes: dtypes U (any code points,
including invalid ones and trailing NULs), S, object (str, bytes, int, None, float, bool,
NumPy scalars), signed and unsigned integers of every width, either byte order, unaligned
buffers, strided and reversed views.

Each batch call must agree with the plain-Python path, ``router.get`` on each item as Python
reads it (``arr.tolist()``): the same node for every key, or, when some item is refused, the
same kind of exception (TypeError / ValueError).

    python fuzz/fuzz_numpy_keys.py [-atheris_runs=N] fuzz/corpus/numpy_keys
"""

from __future__ import annotations

import _harness  # noqa: I001
import numpy as np
from routers import NODES, ROUTERS

ROUTER_LIST = [s.make(NODES) for s in ROUTERS]
KINDS = ["U1", "U2", "U3", "U5", "U8", "S1", "S2", "S4", "S9", "i1", "i2", "i4", "i8",
         "u1", "u2", "u4", "u8"]


def obj(b: _harness.Bytes) -> object:
    t = b.int(0, 9)
    if t == 0:
        return b.text(b.int(0, 10))
    if t == 1:
        return b.bytes(b.int(0, 10))
    if t == 2:
        return b.int(-2**64, 2**65)
    if t == 3:
        return b.int(-1000, 1000)
    if t == 4:
        return None
    if t == 5:
        return b.pick([1.5, float("nan"), True, False, 0.0])
    if t == 6:
        return b.pick([np.int64(-5), np.uint64(2**64 - 1), np.int8(3), np.str_("ab"),
                       np.bytes_(b"ab")])
    if t == 7:
        return bytearray(b.bytes(4))
    return "".join(chr(b.int(0, 0x10FFFF)) for _ in range(b.int(0, 4)))


def build(b: _harness.Bytes) -> np.ndarray:
    if b.int(0, 4) == 0:
        arr = np.empty(b.int(0, 12), dtype=object)
        for i in range(len(arr)):
            arr[i] = obj(b)
    else:
        kind = b.pick(KINDS)
        order = b.pick("<>=")
        dt = np.dtype(order + kind)
        n = b.int(0, 20)
        skew = b.int(0, 3)
        raw = b.bytes(n * dt.itemsize + skew).ljust(n * dt.itemsize + skew, b"\0")
        arr = np.frombuffer(raw, dtype=dt, count=n, offset=skew)
        if b.bool():
            arr = arr.copy()  # writable, aligned
    if len(arr) and b.int(0, 2) == 0:
        step = b.pick([2, 3, -1, -2])
        arr = arr[b.int(0, len(arr) - 1) :: step]
    return arr


def py_items(arr: np.ndarray) -> list[object] | None:
    try:
        return list(arr.tolist())
    except (ValueError, UnicodeDecodeError, SystemError):  # NumPy: SystemError
        return None  # a code point Python cannot hold: the batch must refuse it too


def test_one(data: bytes) -> None:
    b = _harness.Bytes(data)
    router = b.pick(ROUTER_LIST)
    arr = build(b)
    items = py_items(arr)
    nodes = list(router.nodes)
    want: list[object] = []
    errors: set[str] = set()
    if items is None:
        errors.add("ValueError")
    else:
        for k in items:
            try:
                want.append(router.get(k))
            except (TypeError, ValueError) as e:
                errors.add(type(e).__name__)
            except LookupError:
                want.append(None)  # an unassigned slot
    try:
        idx = router.get_indices(arr)
    except (TypeError, ValueError) as e:
        # Refused as the scalar path refuses an item, or by the array's dtype (TokenRing
        # refuses integer keys whatever they are).
        assert errors or (isinstance(e, TypeError) and arr.dtype.kind in "iu"), (arr, e)
        return
    assert not errors, (arr, errors, idx)
    assert [nodes[i] if i >= 0 else None for i in idx] == want, (arr, idx, want)
    assert list(router.get_many(arr)) == want


if __name__ == "__main__":
    _harness.main(test_one)

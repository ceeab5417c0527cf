"""Fuzz the keys pipeline over Arrow arrays built from the bytes with
``pyarrow.Array.from_buffers``: string / binary / large_* offsets (well-formed, or arbitrary:
out of order, past the data), string_view / binary_view views (inline and out-of-line, any
buffer index and offset), integer arrays, dictionary arrays (any indices), validity bitmaps,
array offsets, slices and chunked arrays.

pyarrow's own basic checks run in from_buffers; whatever passes them reaches the router.
An array that ``validate(full=True)`` accepts must route exactly as its ``to_pylist()``
does through ``router.get`` key by key (the plain-Python path; a missing key is -1 / None
with ``nulls="none"`` and a ValueError without). One that it rejects must raise TypeError or
ValueError, or route without reading outside its buffers (the sanitizer build checks).

    python fuzz/fuzz_arrow_keys.py [-atheris_runs=N] fuzz/corpus/arrow_keys
"""

from __future__ import annotations

import _harness  # noqa: I001
import numpy as np
import pyarrow as pa
from routers import NODES, ROUTERS

ROUTER_LIST = [(s, s.make(NODES)) for s in ROUTERS]
OFFSET_TYPES = [pa.string(), pa.binary(), pa.large_string(), pa.large_binary()]
VIEW_TYPES = [pa.string_view(), pa.binary_view()]
INT_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(),
             pa.uint32(), pa.uint64()]
INDEX_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint32()]


def bitmap(b: _harness.Bytes, bits: int) -> pa.Buffer | None:
    if b.int(0, 2):
        return None
    nbytes = (bits + 7) // 8
    raw = b.bytes(nbytes)
    return pa.py_buffer(raw.ljust(nbytes, b"\xff"))


def offsets_array(b: _harness.Bytes, t: pa.DataType, n: int, off: int) -> pa.Array:
    data = b.bytes(b.int(0, 64))
    count = n + off + 1
    if b.int(0, 3):  # well-formed: non-decreasing, inside the data
        cuts = sorted(b.int(0, len(data)) for _ in range(count))
    else:  # anything
        cuts = [b.int(-5, len(data) + 5) if b.int(0, 3) else b.pick([-2**31, 2**31 - 1, 0])
                for _ in range(count)]
    dt = np.int64 if t in (pa.large_string(), pa.large_binary()) else np.int32
    offs = pa.py_buffer(np.array(cuts, dtype=dt).tobytes())
    data_buf = pa.py_buffer(data) if data or b.bool() else None
    return pa.Array.from_buffers(t, n, [bitmap(b, n + off), offs, data_buf], offset=off)


def views_array(b: _harness.Bytes, t: pa.DataType, n: int, off: int) -> pa.Array:
    nbufs = b.int(0, 2)
    bufs = [b.bytes(b.int(0, 48)) for _ in range(nbufs)]
    views = bytearray()
    for _ in range(n + off):
        ln = b.int(0, 12) if b.int(0, 1) else b.int(-2, 50)
        if 0 <= ln <= 12:
            views += ln.to_bytes(4, "little", signed=True) + b.bytes(12).ljust(12, b"\0")
        else:
            bi = b.int(0, max(nbufs - 1, 0)) if b.int(0, 3) else b.int(-1, 3)
            size = len(bufs[bi]) if 0 <= bi < nbufs else 0
            o = b.int(0, max(size - max(ln, 0), 0)) if b.int(0, 3) else b.int(-3, 60)
            prefix = (bufs[bi][o : o + 4] if 0 <= bi < nbufs and o >= 0 else b"").ljust(4, b"\0")
            if not b.int(0, 7):
                prefix = b.bytes(4).ljust(4, b"\0")
            views += (ln.to_bytes(4, "little", signed=True) + prefix
                      + bi.to_bytes(4, "little", signed=True)
                      + o.to_bytes(4, "little", signed=True))
    return pa.Array.from_buffers(t, n, [bitmap(b, n + off), pa.py_buffer(bytes(views)),
                                        *(pa.py_buffer(x) for x in bufs)], offset=off)


def int_array(b: _harness.Bytes, t: pa.DataType, n: int, off: int) -> pa.Array:
    width = t.bit_width // 8
    raw = b.bytes(width * (n + off)).ljust(width * (n + off), b"\0")
    return pa.Array.from_buffers(t, n, [bitmap(b, n + off), pa.py_buffer(raw)], offset=off)


def dictionary_array(b: _harness.Bytes, n: int, off: int) -> pa.Array:
    dictionary = build(b, depth=1)
    it = b.pick(INDEX_TYPES)
    width = it.bit_width // 8
    dt = np.dtype(f"<{'i' if it in (pa.int8(), pa.int16(), pa.int32(), pa.int64()) else 'u'}"
                  f"{width}")
    hi = max(len(dictionary) - 1, 0)
    idx = [b.int(0, hi) if b.int(0, 7) else b.int(-2, hi + 3) for _ in range(n + off)]
    raw = np.array(idx).astype(dt).tobytes()
    t = pa.dictionary(it, dictionary.type)
    return pa.DictionaryArray.from_buffers(t, n, [bitmap(b, n + off), pa.py_buffer(raw)],
                                           dictionary, offset=off)


def build(b: _harness.Bytes, depth: int = 0) -> pa.Array:
    n = b.int(0, 24)
    off = b.int(0, 9)
    kind = b.int(0, 3 if depth == 0 else 2)
    if kind == 0:
        arr = offsets_array(b, b.pick(OFFSET_TYPES), n, off)
    elif kind == 1:
        arr = views_array(b, b.pick(VIEW_TYPES), n, off)
    elif kind == 2:
        arr = int_array(b, b.pick(INT_TYPES), n, off)
    else:
        arr = dictionary_array(b, n, off)
    if b.int(0, 3) == 0 and len(arr):
        lo = b.int(0, len(arr))
        arr = arr.slice(lo, b.int(0, len(arr) - lo))
    return arr


def scalar(router: object, key: object) -> tuple[str, object]:
    try:
        return "ok", router.get(key)  # type: ignore[attr-defined]
    except (TypeError, ValueError) as e:
        return type(e).__name__, None
    except LookupError:
        return "ok", None  # an unassigned slot


def int_typed(t: pa.DataType) -> bool:
    return bool(pa.types.is_integer(t) or (pa.types.is_dictionary(t)
                                           and pa.types.is_integer(t.value_type)))


def check_valid(spec: object, router: object, keys: object, items: list[object]) -> None:
    want = []
    errors = set()
    for k in items:
        if k is None:
            want.append(None)
            continue
        status, node = scalar(router, k)
        if status != "ok":
            errors.add(status)
        want.append(node)
    nodes = list(router.nodes)  # type: ignore[attr-defined]
    has_null = any(k is None for k in items)
    try:
        idx = router.get_indices(keys, nulls="none")  # type: ignore[attr-defined]
        names = list(router.get_many(keys, nulls="none"))  # type: ignore[attr-defined]
    except (TypeError, ValueError) as e:
        if isinstance(e, TypeError) and spec.int_keys == "refused" and int_typed(keys.type):
            return  # the router refuses integer keys by the array's type, even with none
        assert type(e).__name__ in errors or (errors and isinstance(e, ValueError)), (e, errors)
        return
    assert not errors, (errors, items)
    assert [nodes[i] if i >= 0 else None for i in idx] == want, (items, idx, want)
    assert names == want
    if has_null:
        try:
            router.get_indices(keys)  # type: ignore[attr-defined]
        except ValueError:
            pass
        else:
            raise AssertionError("missing keys without nulls='none' must raise ValueError")


def test_one(data: bytes) -> None:
    b = _harness.Bytes(data)
    spec, router = b.pick(ROUTER_LIST)
    try:
        arr = build(b)
        if b.int(0, 5) == 0 and len(arr) > 1:
            k = b.int(0, len(arr))
            arr = pa.chunked_array([arr.slice(0, k), arr.slice(k)], type=arr.type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, ValueError):
        return  # pyarrow's own basic checks refused the buffers
    try:
        arr.validate(full=True)
        valid = True
    except pa.ArrowException:  # ArrowInvalid, ArrowIndexError
        valid = False
    if valid:
        check_valid(spec, router, arr, arr.to_pylist())
        return
    try:
        router.get_indices(arr, nulls="none")  # type: ignore[attr-defined]
    except _harness.EXPECTED:
        pass


if __name__ == "__main__":
    _harness.main(test_one)

"""Key containers beyond lists and NumPy arrays: pyarrow, pandas, polars.

Nothing here imports pyarrow or pandas at module import; a container is recognised by its
type's module, and the library it comes from is imported only then.

The batch entry points (route, hash_many, route_replicas) split a container into the parts
the compiled keys stage reads directly:
- chunked containers (pyarrow ChunkedArray) go through chunk by chunk into one output;
- dictionary-encoded containers (pandas Categorical, Arrow dictionary) route their
  categories once and then take by code;
- everything else becomes a list, tuple, NumPy array or Arrow offsets + data buffers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash._ring import (
    _Hasher,
    _Ring,
    _Router,
    arrow_source,
    arrow_view_source,
    hash_keys,
    route_keys,
)

_ARROW_OFFSET_TYPES = {"string": False, "binary": False, "large_string": True,
                       "large_binary": True, "utf8": False, "large_utf8": True}


def _module(obj: Any) -> str:
    return type(obj).__module__.split(".")[0]


def _null_error(n_null: int, first: int) -> ValueError:
    return ValueError(f"keys contain {n_null} null value(s), the first at position {first}; "
                      "drop or fill them first (e.g. pyarrow.compute.fill_null)")


def _arrow_null_check(arr: Any) -> None:
    if arr.null_count:
        valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False))
        raise _null_error(int(arr.null_count), int(np.argmin(valid)))


def _split(keys: Any, nulls: bool = False) -> tuple[str, Any]:
    """Classify a container: ("chunks", parts) | ("codes", (categories, codes)) | ("plain", x).

    Missing values raise ValueError, unless nulls is true: then a list or object array keeps
    them (the keys stage marks them), an Arrow array has them filled and gets a
    ("masked", (array, mask)) wrapper, and a categorical keeps its -1 codes."""
    if isinstance(keys, (list, tuple, np.ndarray)):
        return "plain", keys
    mod = _module(keys)
    if mod == "pyarrow":
        # pyarrow and pandas are untyped: pyproject.toml's mypy settings ignore them; these
        # ignores are for mypy runs without that config (stubtest, an installed package).
        import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

        if isinstance(keys, (pa.Table, pa.RecordBatch)):
            return _split(_single_column(keys, keys.column_names, keys.column), nulls)
        if isinstance(keys, pa.ChunkedArray):
            return "chunks", list(keys.chunks)
        if isinstance(keys, pa.Array) and keys.null_count and not nulls:
            _arrow_null_check(keys)
        import pyarrow.compute as pc  # type: ignore[import-untyped, unused-ignore]

        if isinstance(keys, pa.Array) and pa.types.is_dictionary(keys.type):
            codes = pc.fill_null(keys.indices, -1).to_numpy(zero_copy_only=False)
            return "codes", (keys.dictionary, codes)
        if isinstance(keys, pa.Array) and keys.null_count:
            mask = np.asarray(keys.is_null().to_numpy(zero_copy_only=False))
            if pa.types.is_string_view(keys.type) or pa.types.is_binary_view(keys.type):
                keys = keys.cast(pa.large_binary())  # fill_null has no view kernel
            fill = pa.scalar(0 if pa.types.is_integer(keys.type) else b"", type=keys.type)
            return "masked", (pc.fill_null(keys, fill), mask)
        return "plain", keys
    if mod == "pandas":
        import pandas as pd  # type: ignore[import-untyped, unused-ignore]

        if isinstance(keys, pd.DataFrame):
            return _split(_single_column(keys, list(keys.columns), lambda i: keys.iloc[:, i]),
                          nulls)
        if isinstance(keys, (pd.Series, pd.Index)):
            if isinstance(keys.dtype, pd.CategoricalDtype):
                codes = np.asarray(keys.cat.codes if isinstance(keys, pd.Series) else keys.codes)
                if not nulls and codes.size and codes.min() < 0:
                    raise _null_error(int((codes < 0).sum()), int(np.argmin(codes)))
                cats = keys.cat.categories if isinstance(keys, pd.Series) else keys.categories
                return "codes", (cats.to_numpy(), codes)
            arrow = _pandas_arrow(keys)
            if arrow is not None:
                return _split(arrow, nulls)
            values = keys.to_numpy()
            if not nulls and values.dtype == object:
                na = keys.isna().to_numpy()
                if na.any():
                    raise _null_error(int(na.sum()), int(np.argmax(na)))
            return "plain", values
    if mod == "polars":
        if hasattr(keys, "columns") and hasattr(keys, "get_column"):  # a polars DataFrame
            keys = _single_column(keys, list(keys.columns), keys.to_series)
        return _split(keys.to_arrow(), nulls)  # zero-copy for strings and integers
    return "plain", keys


def _single_column(table: Any, names: list[Any], column: Any) -> Any:
    """The one column of a one-column table; a wider table is ambiguous."""
    if len(names) != 1:
        raise TypeError(f"keys is a table with {len(names)} columns {names[:5]}: pass the key "
                        "column itself, e.g. table['key']")
    return column(0)


def _pandas_arrow(series: Any) -> Any:
    """The Arrow data behind an Arrow-backed pandas Series, or None."""
    import pandas as pd

    dtype = series.dtype
    if isinstance(dtype, pd.ArrowDtype) or (isinstance(dtype, pd.StringDtype)
                                            and dtype.storage == "pyarrow"):
        import pyarrow as pa

        return pa.chunked_array(pa.array(series.array))
    return None


def convert_keys(keys: Any) -> Any:
    """Called by the keys stage for containers other than list / tuple / ndarray."""
    if _module(keys) == "pyarrow":
        return _arrow_plain(keys)
    kind, value = _split(keys)
    if kind != "plain":
        raise TypeError("internal error: chunked or dictionary keys reached the keys stage")
    return list(value) if value is keys else value


def _arrow_plain(arr: Any) -> Any:
    import pyarrow as pa

    if not isinstance(arr, pa.Array):
        raise TypeError(f"unsupported pyarrow container {type(arr).__name__!r}")
    t = arr.type
    _arrow_null_check(arr)
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        if len(arr) == 0:
            return np.empty(0, dtype=object)
        bufs = arr.buffers()
        start = 16 * arr.offset
        views = np.frombuffer(bufs[1], dtype=np.uint8)[start : start + 16 * len(arr)]
        data_bufs = [b for b in bufs[2:] if b is not None]
        addr = np.array([b.address for b in data_bufs] or [0], dtype=np.uint64)
        size = np.array([b.size for b in data_bufs] or [0], dtype=np.int64)
        return arrow_view_source(arr, views, addr[: len(data_bufs)], size[: len(data_bufs)])
    name = str(t)
    if name in _ARROW_OFFSET_TYPES:
        large = _ARROW_OFFSET_TYPES[name]
        bufs = arr.buffers()
        offsets: npt.NDArray[np.int32] | npt.NDArray[np.int64]
        if large:
            offsets = np.frombuffer(bufs[1], dtype=np.int64)
        else:
            offsets = np.frombuffer(bufs[1], dtype=np.int32)
        offsets = offsets[arr.offset : arr.offset + len(arr) + 1]
        if not offsets.flags.aligned:  # Arrow producers may hand out unaligned buffers
            offsets = offsets.copy()
        data = (np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None
                else np.empty(0, np.uint8))
        if len(arr) == 0:
            return np.empty(0, dtype=object)
        return arrow_source(offsets, data, len(arr), large)
    if pa.types.is_integer(t):
        return arr.to_numpy(zero_copy_only=False)
    raise TypeError(f"unsupported key array type {t}: use string, large_string, binary, "
                    "large_binary, string_view or integer arrays")


def route(router: _Router, hasher: _Hasher, keys: Any,
          out: npt.NDArray[np.int32] | None = None, nulls: bool = False,
          raw_ints: bool = False) -> npt.NDArray[np.int32]:
    """Node indices of keys in any supported container (-1 for a missing key with nulls);
    raw_ints routes integer keys as they are, unhashed (JumpHash, MementoHash)."""
    kind, value = _split(keys, nulls)
    if kind == "plain":
        result: npt.NDArray[np.int32] = route_keys(router, hasher, value, out, nulls, raw_ints)
        return result
    if kind == "masked":
        arr, mask = value
        result = route_keys(router, hasher, arr, out, False, raw_ints)
        result[mask] = -1
        return result
    if kind == "codes":
        cats, codes = value
        per_cat = np.append(route_keys(router, hasher, cats, None, False, raw_ints),
                            np.int32(-1))
        return _take(per_cat, codes, out)  # code -1 (missing) takes the appended -1
    parts = value
    n = sum(len(p) for p in parts)
    if out is None:
        out = np.empty(n, dtype=np.int32)
    elif out.shape != (n,):
        raise ValueError(f"out has length {len(out)}, expected {n}")
    s = 0
    for p in parts:
        route(router, hasher, p, out[s : s + len(p)], nulls, raw_ints)
        s += len(p)
    if n == 0:
        route_keys(router, hasher, [], out)  # still raises on an empty router
    return out


def _take(values: npt.NDArray[Any], codes: npt.NDArray[Any],
          out: npt.NDArray[Any] | None) -> npt.NDArray[Any]:
    if out is None:
        result: npt.NDArray[Any] = values[codes]
        return result
    if out.shape[0] != codes.shape[0]:
        raise ValueError(f"out has length {out.shape[0]}, expected {codes.shape[0]}")
    np.take(values, codes, out=out)
    return out


def hash_many(hasher: _Hasher, keys: Any) -> npt.NDArray[np.uint64]:
    """uint64 hash of every key."""
    kind, value = _split(keys)
    if kind == "plain":
        result: npt.NDArray[np.uint64] = hash_keys(hasher, value)
        return result
    if kind == "codes":
        cats, codes = value
        return hash_keys(hasher, cats)[codes]  # type: ignore[no-any-return]
    return np.concatenate([hash_many(hasher, p) for p in value] or [np.empty(0, np.uint64)])


def route_replicas(core: _Ring, keys: Any, r: int) -> npt.NDArray[np.int32]:
    """int32[len(keys), r] replica indices of keys in any container."""
    kind, value = _split(keys)
    if kind == "plain":
        result: npt.NDArray[np.int32] = core.replicas_of_keys(value, r)
        return result
    if kind == "codes":
        cats, codes = value
        return core.replicas_of_keys(cats, r)[codes]  # type: ignore[no-any-return]
    parts = [route_replicas(core, p, r) for p in value]
    return np.concatenate(parts) if parts else np.empty((0, r), dtype=np.int32)

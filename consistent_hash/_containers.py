"""Key containers -> what the compiled core reads: the only module that knows them.

The core (consistent_hash._ring) reads a list, a tuple, a 1-D NumPy array, or a key source
over Arrow buffers (arrow_source / arrow_view_source); everything else is turned into one of
those here, and split where the core cannot read it in one go:

- chunked containers (pyarrow ChunkedArray) go through chunk by chunk into one output;
- dictionary-encoded containers (pandas Categorical, Arrow dictionary, polars Categorical and
  Enum) route their categories once and then take by code;
- pandas nullable integers become their NumPy integers plus a mask of the missing values;
- everything else becomes a list, tuple, NumPy array or Arrow offsets + data buffers.

Nothing here imports pyarrow, pandas or polars at module import; a container is recognised by
its type's module, and the library it comes from is imported only then.

Batch entry points: route, replicas, hash_many (keys); as_hashes, route_hashes,
replicas_of_hashes (keys already hashed to uint64); check_out (an ``out=`` array).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _core

_ARROW_OFFSET_TYPES = {"string": False, "binary": False, "large_string": True,
                       "large_binary": True, "utf8": False, "large_utf8": True}
_MASK64 = (1 << 64) - 1


# What a batch call takes, for the messages of what it does not.
_TAKES = ("keys must be a list, tuple, 1-D NumPy array, pyarrow Array, ChunkedArray or "
          "one-column Table, pandas Series, Index or one-column DataFrame, or polars Series "
          "or one-column DataFrame")


def _module(obj: Any) -> str:
    return type(obj).__module__.split(".")[0]


def _null_error(n_null: int, first: int, hint: bool) -> ValueError:
    what = 'pass nulls="none" to map them to None / -1, or drop or fill them first' if hint \
        else "drop or fill them first"
    return ValueError(f"keys contain {n_null} missing value(s), the first at position {first}: "
                      f"{what} (e.g. pyarrow.compute.fill_null, pandas dropna)")


def _arrow_null_check(arr: Any, hint: bool) -> None:
    if arr.null_count:
        valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False))
        raise _null_error(int(arr.null_count), int(np.argmin(valid)), hint)


def _split(keys: Any, nulls: bool = False, hint: bool = False) -> tuple[str, Any]:
    """Classify a container:
    ("plain", x)                 x is what the core reads (list, tuple, ndarray, key source);
    ("masked", (x, mask))        x as plain, and a bool mask of missing keys (nulls only);
    ("codes", (categories, codes))  route the categories, then take by code (-1: missing);
    ("chunks", parts)            containers to go through one after the other.

    Missing values raise ValueError, unless nulls is true: then a list or object array keeps
    them (the keys stage marks them), an Arrow array or a pandas nullable integer is filled and
    masked, and a categorical keeps its -1 codes."""
    if isinstance(keys, (list, tuple, np.ndarray, _core._KeySource)):
        if type(keys) is np.ndarray and not keys.ndim:
            raise TypeError(f"{_TAKES}, got a 0-d NumPy array (one key: use get(keys.item()))")
        return "plain", keys
    mod = _module(keys)
    if mod == "pyarrow":
        return _split_arrow(keys, nulls, hint)
    if mod == "pandas":
        return _split_pandas(keys, nulls, hint)
    if mod == "polars":
        return _split_polars(keys, nulls, hint)
    return _split_other(keys)


def _split_other(keys: Any) -> tuple[str, Any]:
    """Any other sized iterable is read as the list of its items."""
    if isinstance(keys, (str, bytes, bytearray, memoryview)) or not hasattr(keys, "__len__"):
        raise TypeError(f"{_TAKES}, got {type(keys).__name__!r} (use get() for a single key)")
    return "plain", list(keys)


def _split_polars(keys: Any, nulls: bool, hint: bool) -> tuple[str, Any]:
    import polars as pl  # type: ignore[import-not-found, unused-ignore]

    if isinstance(keys, pl.DataFrame):
        keys = _single_column(keys, list(keys.columns), keys.to_series)
    if isinstance(keys, pl.LazyFrame):
        raise TypeError(f"{_TAKES}, got a polars LazyFrame (a query, not its rows): collect() "
                        "it first, then pass its key column")
    if not isinstance(keys, pl.Series):
        raise TypeError(f"{_TAKES}, got a polars {type(keys).__name__} (an expression or other "
                        "object, not data): evaluate it to a polars Series first")
    if keys.dtype == pl.Object:
        raise TypeError("unsupported key dtype Object: a polars Series of dtype Object holds "
                        "Python objects; keys are String, Binary or integer columns (cast it, "
                        "or pass keys.to_list())")
    return _split_arrow(keys.to_arrow(), nulls, hint)  # zero-copy for strings and integers


def _split_arrow(keys: Any, nulls: bool, hint: bool) -> tuple[str, Any]:
    # pyarrow and pandas are untyped: pyproject.toml's mypy settings ignore them; these
    # ignores are for mypy runs without that config (stubtest, an installed package).
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.compute as pc  # type: ignore[import-untyped, unused-ignore]

    if isinstance(keys, (pa.Table, pa.RecordBatch)):
        return _split_arrow(_single_column(keys, keys.column_names, keys.column), nulls,
                            hint)
    if isinstance(keys, pa.ChunkedArray):
        return "chunks", list(keys.chunks)
    if not isinstance(keys, pa.Array):
        raise TypeError(f"{_TAKES}, got a pyarrow {type(keys).__name__!r}")
    if keys.null_count and not nulls:
        _arrow_null_check(keys, hint)
    if pa.types.is_dictionary(keys.type):
        # Indices may be unsigned (polars Categorical / Enum: uint32): widen before -1 fills.
        indices = keys.indices.cast(pa.int64())
        if len(indices) > indices.null_count:
            # A damaged array's indices may point outside its dictionary (pyarrow checks this
            # only in validate(full=True)): refused here, before -1 marks the missing ones.
            lo, hi = pc.min_max(indices).values()
            if lo.as_py() < 0 or hi.as_py() >= len(keys.dictionary):
                bad = lo.as_py() if lo.as_py() < 0 else hi.as_py()
                raise ValueError(f"damaged Arrow dictionary array: index {bad} is outside its "
                                 f"dictionary of {len(keys.dictionary)} values")
        codes = pc.fill_null(indices, -1).to_numpy(zero_copy_only=False)
        dictionary = keys.dictionary
        if not dictionary.null_count:
            return "codes", (dictionary, codes)
        # A key whose dictionary value is null is missing too (to_pylist gives None).
        codes = np.array(codes, dtype=np.int64)
        dnull = np.asarray(dictionary.is_null().to_numpy(zero_copy_only=False))
        present = codes >= 0
        codes[present & dnull[np.where(present, codes, 0)]] = -1
        if not nulls and (codes < 0).any():
            raise _null_error(int((codes < 0).sum()), int(np.argmin(codes >= 0)), hint)
        return "codes", (_arrow_plain(dictionary, dnull), codes)
    if keys.null_count:
        mask = np.asarray(keys.is_null().to_numpy(zero_copy_only=False))
        return "masked", (_arrow_plain(keys, mask), mask)
    return "plain", _arrow_plain(keys)


def _split_pandas(keys: Any, nulls: bool, hint: bool) -> tuple[str, Any]:
    import pandas as pd  # type: ignore[import-untyped, unused-ignore]

    if isinstance(keys, pd.DataFrame):
        return _split(_single_column(keys, list(keys.columns), lambda i: keys.iloc[:, i]),
                      nulls, hint)
    if isinstance(keys, pd.api.extensions.ExtensionArray):  # pd.array(...), pd.Categorical
        return _split_pandas(pd.Series(keys, copy=False), nulls, hint)
    if not isinstance(keys, (pd.Series, pd.Index)):
        return _split_other(keys)
    if isinstance(keys, pd.MultiIndex):
        raise TypeError(f"{_TAKES}, got a pandas MultiIndex of {keys.nlevels} levels (tuples): "
                        "pass one level, e.g. index.get_level_values(0)")
    dtype = keys.dtype
    if isinstance(dtype, pd.SparseDtype):
        raise TypeError(f"unsupported key dtype {dtype}: pass the dense keys, "
                        "keys.sparse.to_dense()")
    if isinstance(dtype, pd.CategoricalDtype):
        codes = np.asarray(keys.cat.codes if isinstance(keys, pd.Series) else keys.codes)
        if not nulls and codes.size and codes.min() < 0:
            raise _null_error(int((codes < 0).sum()), int(np.argmin(codes)), hint)
        cats = keys.cat.categories if isinstance(keys, pd.Series) else keys.categories
        return "codes", (cats.to_numpy(), codes)
    arrow = _pandas_arrow(keys)
    if arrow is not None:
        return _split_arrow(arrow, nulls, hint)
    if pd.api.types.is_bool_dtype(dtype):
        raise TypeError(f"unsupported key dtype {dtype}: bool keys are refused; use str or "
                        "int keys")
    if pd.api.types.is_integer_dtype(dtype) and not isinstance(dtype, np.dtype):
        # A nullable integer (Int64, UInt64, ...): its integers, and a mask of the NA.
        na = np.asarray(keys.isna())
        values = keys.to_numpy(dtype=dtype.numpy_dtype, na_value=0)
        if na.any():
            if not nulls:
                raise _null_error(int(na.sum()), int(np.argmax(na)), hint)
            return "masked", (values, na)
        return "plain", values
    values = keys.to_numpy()
    if not nulls and values.dtype == object:
        na = np.asarray(keys.isna())  # an ndarray for an Index, a Series for a Series
        if na.any():
            raise _null_error(int(na.sum()), int(np.argmax(na)), hint)
    return "plain", values


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


def _arrow_plain(arr: Any, missing: npt.NDArray[np.bool_] | None = None) -> Any:
    """A pyarrow Array as what the core reads: a key source over its buffers, or a NumPy
    array of its integers. The buffers are read as they are, checked by the core, and never
    handed to a pyarrow kernel (one may crash on a damaged array). ``missing``: the missing
    slots, whose keys the caller masks; their views are blanked (a missing slot's view need
    not point anywhere), their offsets and integers are read as any others."""
    import pyarrow as pa

    t = arr.type
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        if len(arr) == 0:
            return np.empty(0, dtype=object)
        bufs = arr.buffers()
        start = 16 * arr.offset
        views = np.frombuffer(bufs[1], dtype=np.uint8)[start : start + 16 * len(arr)]
        if missing is not None and missing.any():
            views = views.reshape(-1, 16).copy()
            views[missing] = 0  # an empty inline view
            views = views.reshape(-1)
        data_bufs = [b for b in bufs[2:] if b is not None]
        addr = np.array([b.address for b in data_bufs] or [0], dtype=np.uint64)
        size = np.array([b.size for b in data_bufs] or [0], dtype=np.int64)
        return _core.arrow_view_source(arr, views, addr[: len(data_bufs)],
                                       size[: len(data_bufs)])
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
        return _core.arrow_source(offsets, data, len(arr), large)
    if pa.types.is_integer(t):
        if missing is None:
            return arr.to_numpy(zero_copy_only=False)
        values = arr.buffers()[1]
        dtype = np.dtype(t.to_pandas_dtype())
        if values is None or len(arr) == 0:
            return np.empty(0, dtype=dtype)
        return np.frombuffer(values, dtype=dtype)[arr.offset : arr.offset + len(arr)]
    raise TypeError(f"unsupported key array type {t}: use string, large_string, binary, "
                    "large_binary, string_view or integer arrays")


def check_out(out: Any, n: int) -> npt.NDArray[np.int32]:
    """out as a writable C-contiguous int32[n] (a new one when out is None)."""
    if out is None:
        return np.empty(n, dtype=np.int32)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a NumPy int32 array, got {type(out).__name__!r}")
    if out.dtype != np.int32:
        raise TypeError(f"out must be a NumPy int32 array, got an array of dtype {out.dtype}")
    if out.shape != (n,):
        what = f"length {len(out)}" if out.ndim == 1 else f"shape {out.shape}"
        raise ValueError(f"out has {what}, expected length {n} (one int32 per key)")
    if not out.flags.c_contiguous:
        raise ValueError("out must be C-contiguous (a strided view cannot be written in place)")
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    return out


def _length(kind: str, value: Any) -> int:
    if kind == "plain":
        return len(value) if not isinstance(value, _core._KeySource) else value.n
    if kind == "masked":
        return len(value[1])
    if kind == "codes":
        return len(value[1])
    return sum(len(p) for p in value)


def _run(keys: Any, out: Any, make_out: Any, run: Any, nulls: bool, hint: bool,
         check: Any = None) -> Any:
    """One batch through the core, for any container: ``run(plain, out, nulls)`` fills ``out``
    (made by ``make_out(n)`` when it is None) from keys the core reads; the other kinds are
    resolved here, once for every batch call: masked (missing keys become -1 rows),
    dictionary-coded (the categories go through once, then are taken by code) and chunked
    (each part into its slice of ``out``)."""
    kind, value = _split(keys, nulls, hint)
    if out is None:
        out = make_out(_length(kind, value))
    if kind == "plain":
        run(value, out, nulls)
    elif kind == "masked":
        arr, mask = value
        run(arr, out, False)
        out[mask] = -1
    elif kind == "codes":
        cats, codes = value
        if len(codes):
            if check is not None:
                check()
            per_cat = _run(cats, None, make_out, run, False, hint)
            # code -1 (a missing key, only with nulls: indices, never hashes) takes this row
            missing = np.full((1, *per_cat.shape[1:]), -1 if nulls else 0, per_cat.dtype)
            np.take(np.concatenate([per_cat, missing]), codes, axis=0, out=out)
    else:
        s = 0
        for p in value:
            n = len(p)
            _run(p, out[s : s + n], make_out, run, nulls, hint, check)
            s += n
    return out


def route(core: _core._Router, keys: Any, out: npt.NDArray[np.int32] | None = None, *,
          nulls: bool = False, hint: bool = True, threads: int = 1) -> npt.NDArray[np.int32]:
    """int32 node index of each key in any supported container; with nulls a missing key gets
    -1 (without, an error, which suggests nulls="none" only when hint is true).  threads: as
    resolved by consistent_hash._threads (large batches are split over that many threads)."""
    given = [out]

    def make(n: int) -> npt.NDArray[np.int32]:
        # The caller's out is the whole result (asked for first); the categories of a
        # dictionary-coded container get an array of their own.
        dest, given[0] = given[0], None
        return check_out(dest, n)

    def run(plain: Any, dest: Any, nul: bool) -> None:
        _core.route_keys(core, plain, dest, nul, hint, threads)

    result: npt.NDArray[np.int32] = _run(keys, None, make, run, nulls, hint, core.check_nonempty)
    return result


def replicas(core: _core._Router, keys: Any, r: int, *, nulls: bool = False, threads: int = 1
             ) -> npt.NDArray[np.int32]:
    """int32[n, r]: the first r distinct node indices of each key in the router's order (a row
    of -1 for a missing key with nulls)."""
    def make(n: int) -> npt.NDArray[np.int32]:
        return np.empty((n, r), dtype=np.int32)

    def run(plain: Any, dest: Any, nul: bool) -> None:
        _core.route_replicas_keys(core, plain, r, dest, nul, threads)

    result: npt.NDArray[np.int32] = _run(keys, None, make, run, nulls, True, core.check_nonempty)
    return result


def hash_many(hasher: _core._Hasher, keys: Any, *, threads: int = 1) -> npt.NDArray[np.uint64]:
    """uint64 of every key (its hasher's hash; an integer's own value with raw_ints)."""
    def make(n: int) -> npt.NDArray[np.uint64]:
        return np.empty(n, dtype=np.uint64)

    def run(plain: Any, dest: Any, nul: bool) -> None:
        _core.hash_keys(hasher, plain, dest, threads)

    result: npt.NDArray[np.uint64] = _run(keys, None, make, run, False, False)
    return result


def as_hashes(hashes: Any) -> npt.NDArray[np.uint64]:
    """Validate pre-hashed keys: an integer array (or sequence) of values in [0, 2**64)."""
    if isinstance(hashes, (list, tuple)):
        for i, x in enumerate(hashes):
            if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
                raise TypeError(f"hashes must be integers, got {type(x).__name__!r} at "
                                f"position {i}")
            if not 0 <= x <= _MASK64:
                raise ValueError(f"hashes must be in [0, 2**64), got {x} at position {i}")
        return np.array([int(x) for x in hashes], dtype=np.uint64)
    if not isinstance(hashes, np.ndarray):
        if isinstance(hashes, (str, bytes)) or not hasattr(hashes, "__len__"):
            raise TypeError("hashes must be an integer array or a sequence of ints, got "
                            f"{type(hashes).__name__!r}")
        hashes = np.asarray(hashes)
    arr = hashes
    if arr.ndim != 1:
        raise ValueError(f"hashes must be one-dimensional, got shape {arr.shape}")
    if arr.dtype.kind not in "ui":
        if arr.dtype == object:
            return as_hashes(arr.tolist())
        raise TypeError(f"hashes must be an integer array, got dtype {arr.dtype}")
    if arr.dtype.kind == "i" and arr.size and arr.min() < 0:
        raise ValueError("hashes must be non-negative")
    return np.ascontiguousarray(arr, dtype=np.uint64)


def route_hashes(core: _core._Router, hashes: Any, out: npt.NDArray[np.int32] | None = None,
                 *, threads: int = 1) -> npt.NDArray[np.int32]:
    """int32 node index of each uint64 hash (validated by as_hashes)."""
    h = as_hashes(hashes)
    result = check_out(out, len(h))
    _core.route_hashes(core, h, result, threads)
    return result


def replicas_of_hashes(core: _core._Router, hashes: Any, r: int, *, threads: int = 1
                       ) -> npt.NDArray[np.int32]:
    """int32[n, r]: the first r distinct node indices of each uint64 hash."""
    h = as_hashes(hashes)
    out = np.empty((len(h), r), dtype=np.int32)
    _core.replicas_of_hashes(core, h, r, out, threads)
    return out

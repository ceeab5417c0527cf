"""Key normalisation for the pure-Python rings we replace.

uhashring hashes every key as ``str(key)`` encoded to UTF-8.  For str and int keys that is
exactly what the compiled keys stage hashes (UTF-8, ASCII decimal), so those go through
untouched at C speed; anything else (bytes, floats, None, tuples, ...) is turned into its
``str()`` first, which is what keeps every key on the node it had.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from consistent_hash._core import first_foreign


def _str_all(seq: Any, start: int) -> list[Any]:
    out = list(seq)
    for i in range(start, len(out)):
        k = out[i]
        t = type(k)
        if t is not str and t is not int:
            out[i] = str(k)
    return out


def text_keys(keys: Any) -> Any:
    """A batch of keys as uhashring would hash them: ``str(key)`` unless str or int."""
    if isinstance(keys, (list, tuple)):
        i = first_foreign(keys)
        return keys if i < 0 else _str_all(keys, i)
    if isinstance(keys, np.ndarray):
        if keys.ndim != 1:
            raise ValueError(f"keys must be one-dimensional, got an array of shape {keys.shape}")
        kind = keys.dtype.kind
        if kind in "Uiu":
            return keys
        if kind == "O":
            return text_keys(keys.tolist())
        # bytes (S), floats, bools, datetimes...: element by element, as str(element)
        return [str(x) for x in keys]
    mod = type(keys).__module__.split(".")[0]
    if mod == "pandas":
        return text_keys(keys.to_numpy())
    if mod == "polars":
        return text_keys(keys.to_arrow())
    if mod == "pyarrow":
        import pyarrow as pa

        t = keys.type
        plain = (pa.types.is_string(t) or pa.types.is_large_string(t)
                 or pa.types.is_string_view(t) or pa.types.is_integer(t))
        if plain and keys.null_count == 0:
            return keys
        return text_keys(keys.to_pylist())
    if isinstance(keys, (str, bytes, bytearray, memoryview)) or not hasattr(keys, "__len__"):
        raise TypeError(
            f"keys must be a list, tuple, NumPy array, pyarrow array or pandas Series, "
            f"got {type(keys).__name__!r} (use get_node() for a single key)")
    return text_keys(list(keys))


def text_key(key: Any) -> Any:
    """One key as uhashring hashes it."""
    t = type(key)
    return key if t is str or t is int else str(key)

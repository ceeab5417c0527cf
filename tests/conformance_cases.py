"""The conformance suite's shared cases: the keys, the routers of the registry by property,
the key containers and the helpers every test_conformance*.py file uses."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import obj_array
from optional_libs import optional
from routers import NODES, ROUTERS, RouterSpec

# where no wheel exists (s390x), a container kind of these skips, naming the library
pd = optional("pandas")
pl = optional("polars")
pa = optional("pyarrow")

# --------------------------------------------------------------------------------------------
# keys
# --------------------------------------------------------------------------------------------

STR_KEYS: list[str] = (
    ["", "a", "A", " ", "é", "ü", "日本語のキー", "🙂", "emoji 🙂 mixed ü", "a\x00b", "tab\tkey",
     "x" * 300, "key with spaces", "ключ", "مفتاح", "\u00ff", "\U0010fffd", "{tag}.rest"]
    + [f"user:{i}" for i in range(250)]
    + [str(i) for i in range(30)]
)
# S arrays drop trailing NUL bytes, so no key here ends in b"\x00"
BYTES_KEYS: list[bytes] = [k.encode("utf-8") for k in STR_KEYS] + [
    b"\xff", b"\x80\x81\xfe", bytes(range(1, 256)), b"\x00\x01", b"\xc3\x28"]
# repeated keys, for dictionary-encoded containers
REPEATED: list[str] = STR_KEYS + STR_KEYS[::3] + STR_KEYS[:20]


def int_values(dtype: Any) -> list[int]:
    """A few hundred ints that fit ``dtype``: small ones, the extremes, random ones."""
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    vals = list(range(max(lo, -100), min(hi, 200) + 1))
    vals += [lo, hi, lo + 1, hi - 1]
    rng = random.Random(str(np.dtype(dtype)))
    vals += [rng.randint(lo, hi) for _ in range(100)]
    return vals


INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
INT_KEYS: list[int] = int_values(np.int64) + [2**63, 2**64 - 1, 2**63 + 12345]


def keys_for(spec: RouterSpec) -> list[Any]:
    """Keys of every kind the router accepts: str (incl. non-ASCII and empty), bytes-likes, and
    ints unless it refuses them."""
    keys: list[Any] = STR_KEYS + BYTES_KEYS + [bytearray(b"ba"), memoryview(b"mv")]
    if spec.int_keys != "refused":
        keys += INT_KEYS
    return keys


def router(spec: RouterSpec, nodes: list[str] | None = None, **kw: Any) -> Any:
    return spec.make(list(NODES if nodes is None else nodes), **kw)


def ids(specs: list[RouterSpec]) -> list[str]:
    return [s.name for s in specs]


def names_of(r: Any, indices: Any) -> list[str | None]:
    nodes = r.nodes
    return [None if i < 0 else nodes[i] for i in np.asarray(indices).tolist()]


REPLICA_ROUTER_NAMES = [s.name for s in ROUTERS if s.replicas]
MUTABLE = [s for s in ROUTERS if s.mutable]
EMPTY_OK = [s for s in ROUTERS if s.empty_ok]
REPLICAS = [s for s in ROUTERS if s.replicas]
NO_REPLICAS = [s for s in ROUTERS if not s.replicas]
TAKES_HASH = [s for s in ROUTERS if s.takes_hash]
INT_OK = [s for s in ROUTERS if s.int_keys != "refused"]
INT_REFUSED = [s for s in ROUTERS if s.int_keys == "refused"]

# --------------------------------------------------------------------------------------------
# containers: name -> (key kind, build() -> (container, the same keys as a plain list))
# --------------------------------------------------------------------------------------------


def _strided(arr: np.ndarray) -> np.ndarray:
    big = np.empty(2 * len(arr), dtype=arr.dtype)
    big[::2] = arr
    big[1::2] = arr[::-1]
    view = big[::2]
    assert not view.flags.c_contiguous or len(arr) < 2
    return view


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr = arr.copy()
    arr.flags.writeable = False
    return arr


def _sliced(values: list[Any], typ: Any, pad: Any) -> Any:
    arr = pa.array([pad] * 3 + values + [pad] * 5, type=typ)
    return arr.slice(3, len(values))


def _chunked(values: list[Any], typ: Any) -> Any:
    cuts = [values[:7], [], values[7:100], values[100:]]
    return pa.chunked_array([pa.array(c, type=typ) for c in cuts], type=typ)


Build = Callable[[], tuple[Any, list[Any]]]
CONTAINERS: dict[str, tuple[str, Build]] = {
    # str keys
    "tuple_str": ("str", lambda: (tuple(STR_KEYS), STR_KEYS)),
    "np_U": ("str", lambda: (np.array(STR_KEYS, dtype="U"), STR_KEYS)),
    "np_O_str": ("str", lambda: (obj_array(STR_KEYS), STR_KEYS)),
    "np_U_strided": ("str", lambda: (_strided(np.array(STR_KEYS, dtype="U")), STR_KEYS)),
    "np_U_readonly": ("str", lambda: (_readonly(np.array(STR_KEYS, dtype="U")), STR_KEYS)),
    "np_O_strided": ("str", lambda: (_strided(obj_array(STR_KEYS)), STR_KEYS)),
    "np_O_readonly": ("str", lambda: (_readonly(obj_array(STR_KEYS)), STR_KEYS)),
    "pa_string": ("str", lambda: (pa.array(STR_KEYS, pa.string()), STR_KEYS)),
    "pa_large_string": ("str", lambda: (pa.array(STR_KEYS, pa.large_string()), STR_KEYS)),
    "pa_string_view": ("str", lambda: (pa.array(STR_KEYS, pa.string_view()), STR_KEYS)),
    "pa_dictionary": ("str", lambda: (pa.array(REPEATED, pa.string()).dictionary_encode(),
                                      REPEATED)),
    "pa_chunked": ("str", lambda: (_chunked(STR_KEYS, pa.string()), STR_KEYS)),
    "pa_chunked_large": ("str", lambda: (_chunked(STR_KEYS, pa.large_string()), STR_KEYS)),
    "pa_sliced": ("str", lambda: (_sliced(STR_KEYS, pa.string(), "pad"), STR_KEYS)),
    "pa_sliced_large": ("str", lambda: (_sliced(STR_KEYS, pa.large_string(), "pad"),
                                        STR_KEYS)),
    "pa_sliced_view": ("str", lambda: (_sliced(STR_KEYS, pa.string_view(), "pad" * 9),
                                       STR_KEYS)),
    "pa_sliced_small": ("str", lambda: (pa.array(STR_KEYS).slice(3, 50), STR_KEYS[3:53])),
    "pd_object": ("str", lambda: (pd.Series(STR_KEYS, dtype=object), STR_KEYS)),
    "pd_string_python": ("str", lambda: (pd.Series(STR_KEYS, dtype="string[python]"),
                                         STR_KEYS)),
    "pd_string_pyarrow": ("str", lambda: (pd.Series(STR_KEYS, dtype="string[pyarrow]"),
                                          STR_KEYS)),
    "pd_categorical": ("str", lambda: (pd.Series(REPEATED, dtype="category"), REPEATED)),
    "pd_index": ("str", lambda: (pd.Index(STR_KEYS, dtype=object), STR_KEYS)),
    "pd_sliced": ("str", lambda: (pd.Series(["pad"] + STR_KEYS)[1:], STR_KEYS)),
    "pl_string": ("str", lambda: (pl.Series("k", STR_KEYS, dtype=pl.String), STR_KEYS)),
    "pl_categorical": ("str", lambda: (pl.Series("k", REPEATED, dtype=pl.Categorical),
                                       REPEATED)),
    "pl_enum": ("str", lambda: (pl.Series("k", REPEATED,
                                          dtype=pl.Enum(list(dict.fromkeys(REPEATED)))),
                                REPEATED)),
    # bytes keys
    "tuple_bytes": ("bytes", lambda: (tuple(BYTES_KEYS), BYTES_KEYS)),
    "np_S": ("bytes", lambda: (np.array(BYTES_KEYS, dtype="S"), BYTES_KEYS)),
    "np_S_strided": ("bytes", lambda: (_strided(np.array(BYTES_KEYS, dtype="S")), BYTES_KEYS)),
    "np_S_readonly": ("bytes", lambda: (_readonly(np.array(BYTES_KEYS, dtype="S")),
                                        BYTES_KEYS)),
    "np_O_bytes": ("bytes", lambda: (obj_array(BYTES_KEYS), BYTES_KEYS)),
    "pa_binary": ("bytes", lambda: (pa.array(BYTES_KEYS, pa.binary()), BYTES_KEYS)),
    "pa_large_binary": ("bytes", lambda: (pa.array(BYTES_KEYS, pa.large_binary()),
                                          BYTES_KEYS)),
    "pa_binary_view": ("bytes", lambda: (pa.array(BYTES_KEYS, pa.binary_view()), BYTES_KEYS)),
    "pa_binary_sliced": ("bytes", lambda: (_sliced(BYTES_KEYS, pa.binary(), b"pad"),
                                           BYTES_KEYS)),
    "pa_binary_chunked": ("bytes", lambda: (_chunked(BYTES_KEYS, pa.large_binary()),
                                            BYTES_KEYS)),
    "pl_binary": ("bytes", lambda: (pl.Series("k", BYTES_KEYS, dtype=pl.Binary), BYTES_KEYS)),
    # int keys
    "tuple_int": ("int", lambda: (tuple(INT_KEYS), INT_KEYS)),
    "np_O_int": ("int", lambda: (obj_array(INT_KEYS), INT_KEYS)),
    **{f"np_{dt}": ("int", (lambda dt=dt: (np.array(int_values(dt), dtype=dt),
                                           int_values(dt))))
       for dt in INT_DTYPES},
    **{f"np_{dt}_strided": ("int", (lambda dt=dt: (_strided(np.array(int_values(dt), dt)),
                                                   int_values(dt))))
       for dt in INT_DTYPES},
    **{f"np_{dt}_readonly": ("int", (lambda dt=dt: (_readonly(np.array(int_values(dt), dt)),
                                                    int_values(dt))))
       for dt in INT_DTYPES},
    "pa_int64": ("int", lambda: (pa.array(int_values("int64"), pa.int64()),
                                 int_values("int64"))),
    "pa_uint64": ("int", lambda: (pa.array(int_values("uint64"), pa.uint64()),
                                  int_values("uint64"))),
    "pa_int8": ("int", lambda: (pa.array(int_values("int8"), pa.int8()), int_values("int8"))),
    "pa_uint16": ("int", lambda: (pa.array(int_values("uint16"), pa.uint16()),
                                  int_values("uint16"))),
    "pa_int32_sliced": ("int", lambda: (_sliced(int_values("int32"), pa.int32(), 7),
                                        int_values("int32"))),
    "pa_int64_chunked": ("int", lambda: (_chunked(int_values("int64"), pa.int64()),
                                         int_values("int64"))),
    "pd_int64": ("int", lambda: (pd.Series(np.array(int_values("int64"))),
                                 int_values("int64"))),
    "pd_Int64": ("int", lambda: (pd.Series(int_values("int64"), dtype="Int64"),
                                 int_values("int64"))),
    "pd_UInt64": ("int", lambda: (pd.Series(int_values("uint64"), dtype="UInt64"),
                                  int_values("uint64"))),
    "pd_index_int": ("int", lambda: (pd.Index(np.array(int_values("int64"))),
                                     int_values("int64"))),
    "pl_int64": ("int", lambda: (pl.Series("k", int_values("int64"), dtype=pl.Int64),
                                 int_values("int64"))),
    "pl_uint32": ("int", lambda: (pl.Series("k", int_values("uint32"), dtype=pl.UInt32),
                                  int_values("uint32"))),
    "pd_Int32": ("int", lambda: (pd.Series(int_values("int32"), dtype="Int32"),
                                 int_values("int32"))),
    "pd_UInt8": ("int", lambda: (pd.Series(int_values("uint8"), dtype="UInt8"),
                                 int_values("uint8"))),
    # one-column tables and frames, and pandas arrays
    "pa_table": ("str", lambda: (pa.table({"k": pa.array(STR_KEYS)}), STR_KEYS)),
    "pa_record_batch": ("str", lambda: (pa.record_batch([pa.array(STR_KEYS)], names=["k"]),
                                        STR_KEYS)),
    "pa_table_binary": ("bytes", lambda: (pa.table({"k": pa.array(BYTES_KEYS, pa.binary())}),
                                          BYTES_KEYS)),
    "pd_dataframe": ("str", lambda: (pd.DataFrame({"k": STR_KEYS}), STR_KEYS)),
    "pl_dataframe": ("str", lambda: (pl.DataFrame({"k": STR_KEYS}), STR_KEYS)),
    "pd_array_string": ("str", lambda: (pd.array(STR_KEYS, dtype="string"), STR_KEYS)),
    "pd_Categorical": ("str", lambda: (pd.Categorical(REPEATED), REPEATED)),
    "pd_array_Int64": ("int", lambda: (pd.array(int_values("int64"), dtype="Int64"),
                                       int_values("int64"))),
}
if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
    CONTAINERS["np_T"] = ("str", lambda: (np.array(STR_KEYS, dtype=np.dtypes.StringDType()),
                                          STR_KEYS))
    CONTAINERS["np_T_strided"] = ("str", lambda: (
        _strided(np.array(STR_KEYS, dtype=np.dtypes.StringDType())), STR_KEYS))


def container_params(specs: list[RouterSpec]) -> list[Any]:
    out = []
    for s in specs:
        for name, (kind, _) in CONTAINERS.items():
            if kind == "int" and s.int_keys == "refused":
                continue  # a router that refuses int keys: see test_int_keys_refused
            out.append(pytest.param(s, name, id=f"{s.name}-{name}"))
    return out


# shared by several files: keys with nulls, bad keys, the routes a layout gives

NULL_AT = (1, 5, 6, 40)


def _with_nulls(values: list[Any], fill: Any = None) -> list[Any]:
    out = list(values[:60])
    for i in NULL_AT:
        out[i] = fill
    return out


STR_N = _with_nulls(STR_KEYS)
BYTES_N = _with_nulls(BYTES_KEYS)
INT_N = _with_nulls(INT_KEYS)


BAD_KEYS: dict[str, Any] = {"object": object(), "float": 1.5, "bool": True, "False": False,
                           "np_bool": np.bool_(True), "None": None, "list": [1], "dict": {"a": 1},
                           "complex": 1 + 2j, "set": {1}}

ROUTE_KEYS = STR_KEYS[:120] + BYTES_KEYS[-5:]


def routes(r: Any) -> list[str]:
    return r.get_many(ROUTE_KEYS).tolist()

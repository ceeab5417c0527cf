"""Type stub for the compiled core, consistent_hash._ring (src/_ring.pyx).

Private API: consistent_hash/_containers.py (every batch), the router modules and _validate.py
are its users. Array arguments are typed memoryviews in the .pyx, so they must be C-contiguous
and of exactly the dtype named here (int32 outputs must also be writable); the core raises on
anything else. Batch functions read only a list, a tuple, a 1-D ndarray or a _KeySource.

Checked with ``python -m mypy.stubtest consistent_hash._ring --allowlist
tests/stubtest-allowlist.txt`` (the allowlist holds Cython's generated pickling helpers).
Constructors are ``__new__``: the cdef classes take their arguments in ``__cinit__``.
The sections follow src/_ring.pyx's includes: _keys.pxi, _router.pxi, _pipeline.pxi,
_hashring.pxi, _health.pxi, one per algorithm, _bounded.pxi, _compat.pxi.
"""

from collections.abc import Callable, Iterable
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer, Self, disjoint_base

# --- src/_keys.pxi: keys -> uint64 ---

# Name of a built-in hash -> its C id (CH_XXH3, CH_XXH64, CH_MURMUR3, CH_MD5, compat ids).
HASH_IDS: Final[dict[str, int]]
# Name of a built-in hash -> exclusive upper bound of its seed (1 << 64, 1 << 32 or 1).

def hash_bytes(name: str, data: Buffer, seed: int = 0) -> int:
    """One built-in hash ("xxh3", "xxh64", "murmur3", "md5") of a C-contiguous byte buffer."""

def key_bytes(key: object, pos: int = -1, hint: bool = False) -> bytes:
    """The bytes a key is hashed as; TypeError (naming ``pos`` if >= 0, suggesting
    nulls="none" for a missing key only with ``hint``) for other types."""

def is_null(key: object) -> bool:
    """A missing value: None, a float NaN, pandas.NA or NaT."""

@disjoint_base
class _Hasher:
    """A built-in hash (``hid`` >= 0 and ``seed``) or, when ``func`` is set, a callable; with
    ``raw_ints`` an integer key is its own 64-bit two's-complement value."""

    def __new__(
        cls,
        hid: int,
        seed: int,
        func: Callable[[bytes], int] | None = None,
        raw_ints: bool = False,
    ) -> Self: ...
    @property
    def hid(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def func(self) -> Callable[[bytes], int] | None: ...
    @property
    def raw_ints(self) -> bool: ...
    def hash(self, key: object) -> int:
        """uint64 of one key (str, bytes-like or int; TypeError otherwise)."""
    def __reduce__(
        self,
    ) -> tuple[type[_Hasher], tuple[int, int, Callable[[bytes], int] | None, bool]]: ...

@disjoint_base
class _KeySource:
    """A batch of keys in a layout the keys stage reads without Python objects."""

    @property
    def n(self) -> int: ...

def keys_source(keys: list[Any] | tuple[Any, ...] | npt.NDArray[Any] | _KeySource) -> _KeySource:
    """A list, tuple, 1-D ndarray (or a _KeySource, as is) as a _KeySource; TypeError else."""

def arrow_source(
    offsets: npt.NDArray[np.int32] | npt.NDArray[np.int64],
    data: npt.NDArray[np.uint8],
    n: int,
    large: bool,
) -> _KeySource:
    """A _KeySource over Arrow offsets (int32, or int64 when ``large``) and data bytes."""

def arrow_view_source(
    array: object,
    views: npt.NDArray[np.uint8],
    buf_addr: npt.NDArray[np.uint64],
    buf_size: npt.NDArray[np.int64],
) -> _KeySource:
    """A _KeySource over an Arrow string_view / binary_view array: its 16-byte views and the
    addresses and sizes of its data buffers."""

def node_hashes(hasher: _Hasher, nodes: tuple[str, ...]) -> npt.NDArray[np.uint64]:
    """uint64 H(utf8(name), seed) of each node name."""

# --- src/_router.pxi: the base of every algorithm ---

class EmptyRingError(LookupError):
    """A lookup was made on a router with no nodes."""

@disjoint_base
class _Router:
    """Base of every algorithm's snapshot: nodes, hasher, kernels uint64 -> int32."""

    @property
    def nodes(self) -> tuple[str, ...]: ...
    @property
    def hasher(self) -> _Hasher: ...
    @property
    def live(self) -> int:
        """Nodes a lookup can reach; 0 makes every lookup raise EmptyRingError."""
    @property
    def has_replicas(self) -> bool:
        """The router has a best-first node order per key (replica_row, replicas batches)."""
    @property
    def down(self) -> frozenset[str]:
        """Nodes a lookup skips (marked down): never reached."""
    def check_nonempty(self) -> None: ...
    def hash(self, key: object) -> int:
        """The uint64 a key is routed by."""
    def index(self, key: object) -> int: ...
    def get(self, key: object) -> str: ...
    def index_of_hash(self, h: int) -> int: ...
    def replica_row(self, key: object, r: int) -> list[int]:
        """The first r distinct node indices of one key in the router's order."""
    def nodes_array(self) -> npt.NDArray[np.object_]:
        """Node names as an object ndarray, plus a trailing None for index -1."""
    def __len__(self) -> int: ...

# --- src/_pipeline.pxi: the batch entry points (one chunk driver) ---

def _set_parallel_min(n: int) -> int:
    """Batches of at least n keys (2n already hashed) may be split over threads; returns
    the old value."""
def _get_parallel_min() -> int:
    """The smallest batch that may be split over threads."""

def _set_placement(on: bool) -> bool:
    """Whether the pool keeps woken workers off the calling thread's CPU; the old setting."""
def _parallel_runs() -> int:
    """How many batches have been split over threads in this process (a test hook)."""

_Keys = list[Any] | tuple[Any, ...] | npt.NDArray[Any] | _KeySource

def route_keys(
    core: _Router,
    keys: _Keys,
    out: npt.NDArray[np.int32],
    nulls: bool = False,
    hint: bool = True,
    threads: int = 1,
) -> None:
    """out[i] = node index of keys[i]; with ``nulls`` a missing key gets -1, without it a
    TypeError that suggests nulls="none" only with ``hint``."""

def route_replicas_keys(
    core: _Router,
    keys: _Keys,
    r: int,
    out: npt.NDArray[np.int32],
    nulls: bool = False,
    threads: int = 1,
) -> None:
    """out[i] (int32[n, r]) = the first r distinct node indices of keys[i]."""

def hash_keys(
    hasher: _Hasher, keys: _Keys, out: npt.NDArray[np.uint64], threads: int = 1
) -> None:
    """out[i] = uint64 hash of keys[i]."""

def route_hashes(
    core: _Router, hashes: npt.NDArray[np.uint64], out: npt.NDArray[np.int32],
    threads: int = 1,
) -> None:
    """out[i] = node index of the uint64 hash hashes[i]."""

def replicas_of_hashes(
    core: _Router, hashes: npt.NDArray[np.uint64], r: int, out: npt.NDArray[np.int32],
    threads: int = 1,
) -> None:
    """out[i] (int32[m, r]) = the first r distinct node indices of hashes[i]."""

def take_names(nodes: tuple[object, ...], idx: npt.NDArray[np.int32]) -> npt.NDArray[np.object_]:
    """Object array of nodes[idx[i]] (None for -1); IndexError for other indices out of range."""

# --- src/_hashring.pxi ---

@disjoint_base
class _Ring(_Router):
    """An immutable ring snapshot: sorted positions, owners, prefix index, node labels."""

    def __new__(
        cls,
        positions: npt.ArrayLike,
        owners: npt.ArrayLike,
        nodes: tuple[str, ...],
        hasher: _Hasher,
        *,
        fresh: bool = False,
        prefix: npt.NDArray[np.uint32] | None = None,
        route: npt.NDArray[np.uint64] | None = None,
    ) -> Self: ...
    @property
    def prefix_index(self) -> npt.NDArray[np.uint32]: ...
    @property
    def direct_table(self) -> npt.NDArray[np.uint64] | None:
        """A small ring's direct table (uint64[2**tk]; built here if not yet), None past
        32,768 positions."""
    @property
    def direct_table_built(self) -> bool: ...
    @property
    def routing_owners(self) -> npt.NDArray[np.int32]:
        """int32[V]: the node each position routes to (owners, unless nodes are down)."""
    @property
    def positions(self) -> npt.NDArray[np.uint64]:
        """Read-only uint64 array of vnode positions, ascending."""
    @property
    def owners(self) -> npt.NDArray[np.int32]:
        """Read-only int32 array: the index into ``nodes`` owning each position."""
    def __len__(self) -> int:
        """The number of positions."""
    def position_index(self, h: int) -> int: ...
    def replica_table(self, r: int) -> npt.NDArray[np.int32]: ...

def label_positions(
    hasher: _Hasher,
    names: list[bytes] | list[str],
    counts: npt.NDArray[np.uint32],
    first_owner: int = 0,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int32]]:
    """Vnode positions of every label utf8(name) + b"#" + decimal j, sorted; and owners."""

def label_ring(hasher: _Hasher, nodes: tuple[str, ...], counts: npt.NDArray[np.uint32]) -> _Ring:
    """The ring snapshot of nodes (sorted) with counts[i] vnode labels for node i."""

def sort_pairs(keys: npt.NDArray[np.uint64], vals: npt.NDArray[np.int32]) -> None:
    """Stable in-place sort of (keys, vals) by keys."""

def ring_with(core: _Ring, name: str, r: int, pb: npt.NDArray[np.uint64]) -> _Ring:
    """core with node name inserted at index r, its positions pb ascending: one pass."""

def ring_merge(core: _Ring, nodes: tuple[str, ...], remap: npt.NDArray[np.int32],
               pb: npt.NDArray[np.uint64], ob: npt.NDArray[np.int32]) -> _Ring:
    """core with the points (pb, ob) of several new nodes merged in (sorted in place): one
    pass; remap[i] is the new index of core's node i."""

def label_pairs(hasher: _Hasher, names: list[bytes] | list[str], counts: npt.NDArray[np.uint32],
                owners: npt.NDArray[np.int32]
                ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int32]]:
    """Vnode positions of every label utf8(name) + b"#" + decimal j, in generation order,
    owned by owners[i]."""

def ring_add(core: _Ring, name: str, count: int) -> tuple[_Ring, int]:
    """(core with node name added with count vnode labels, its index): one pass."""

def ring_drop(core: _Ring, r: int) -> _Ring:
    """core without node index r: one pass."""

# --- src/_health.pxi ---

@disjoint_base
class _HealthRing(_Ring):
    """A ring snapshot whose lookups skip down nodes (positions and owners unchanged); live
    is the number of nodes that are up."""

def health_ring(core: _Ring, down: Iterable[str]) -> _HealthRing:
    """A snapshot of core's layout with the named nodes down (names not in core ignored)."""

def remapped_ring(inner: _Ring, nodes: tuple[str, ...], down: Iterable[str]) -> _HealthRing:
    """A ring built without the down nodes as a snapshot over the full node list."""

class _Remap(_Router):
    """Any router's core built without the down nodes, answering indices into nodes."""

    def __new__(cls, inner: _Router, nodes: tuple[str, ...], down: Iterable[str], *,
                dead: bool = False) -> Self: ...
    @property
    def inner(self) -> _Router: ...
    @property
    def table(self) -> npt.NDArray[np.int32]:
        """The inner router's lookup table (Maglev), as indices into nodes."""

# --- src/_fastcalls.pxi ---

class _RouterBase:
    """The base of every router (consistent_hash._router.Router): its snapshot, and get /
    replicas / get_many / get_indices / lookup in C for the common case (typed on Router)."""

    _core: Any  # a _Router; typed Any, as each router reads its own core's attributes
    _snap: Any  # the snapshot itself (None while a RingRouter holds deferred add() calls)
    _deferred: Any  # those deferred edits, or None
    def get(self, key: str | bytes | bytearray | memoryview | int, /) -> str: ...
    def replicas(self, key: str | bytes | bytearray | memoryview | int, n: int) -> list[str]: ...
    # get_many too: typed on Router alone, whose overloads (categorical) say what it returns
    def get_indices(self, keys: Any, out: npt.NDArray[np.int32] | None = None, *,
                    nulls: str = "raise", threads: int | None = None
                    ) -> npt.NDArray[np.int32]: ...
    def lookup(self, hashes: Any, out: npt.NDArray[np.int32] | None = None, *,
               threads: int | None = None) -> npt.NDArray[np.int32]: ...

# --- src/_jump.pxi ---

@disjoint_base
class _Jump(_Router):
    """n buckets, named; bucket i is nodes[i] (at most 2**31 - 1); the hasher is raw_ints."""

    def __new__(cls, nodes: tuple[str, ...], hasher: _Hasher) -> Self: ...

def jump_hash(key: int, buckets: int) -> int:
    """Guava's Hashing.consistentHash(key, buckets) for a key in [0, 2**64); buckets >= 1."""

def _jump_ref_batch(keys: npt.NDArray[np.uint64], buckets: int) -> npt.NDArray[np.int32]:
    """Guava's formulation, one division a step (a test reference)."""

def _jump_batch(keys: npt.NDArray[np.uint64], buckets: int) -> npt.NDArray[np.int32]:
    """The batch kernel over any bucket count >= 1 (a test hook)."""

def _jump_paper_batch(keys: npt.NDArray[np.uint64], buckets: int) -> npt.NDArray[np.int32]:
    """The paper's plain C loop (a benchmark baseline; not Guava-exact)."""

# --- src/_rendezvous.pxi ---

@disjoint_base
class _Rendezvous(_Router):
    def __new__(
        cls,
        nodes: tuple[str, ...],
        hasher: _Hasher,
        inv_weights: npt.ArrayLike | None = None,
    ) -> Self: ...
    @property
    def node_hash(self) -> npt.NDArray[np.uint64]:
        """Read-only uint64[n]: H(utf8(name), seed)."""
    @property
    def inv_weights(self) -> npt.NDArray[np.float64] | None:
        """Read-only float64[n] of 1.0 / w, or None when all weights are equal."""

def _neglog2(v: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
    """-log2(v / 2**64) in Q8.56 of each value (a test hook)."""

def _neglog2_tables() -> tuple[list[int], list[int], list[int]]:
    """The constant tables (C, T, P) of the -log2 kernel (a test hook)."""

# --- src/_maglev.pxi ---

@disjoint_base
class _MaglevTable(_Router):
    """A Maglev lookup table over nodes; modulo: Envoy's entry h mod M, else floor(h M / 2**64)."""

    def __new__(cls, nodes: tuple[str, ...], hasher: _Hasher, table: npt.ArrayLike, *,
                modulo: bool = False, what: str = "Maglev") -> Self: ...
    @property
    def table(self) -> npt.NDArray[np.int32]:
        """Read-only int32[M]: the node index of each table entry."""
    @property
    def modulo(self) -> bool: ...

def maglev_table(hasher: _Hasher, nodes: tuple[str, ...], M: int, ratios: npt.ArrayLike
                 ) -> npt.NDArray[np.int32]:
    """Our Maglev table of M entries for nodes with weight ratios w / max(w)."""

def envoy_maglev_table(M: int, offsets: npt.ArrayLike, skips: npt.ArrayLike,
                       weights: npt.ArrayLike, entry_nodes: npt.ArrayLike
                       ) -> npt.NDArray[np.int32]:
    """Envoy's Maglev table (node indices), empty when no entry has a weight."""

# --- src/_multiprobe.pxi ---

@disjoint_base
class _MultiProbe(_Router):
    def __new__(cls, nodes: tuple[str, ...], hasher: _Hasher, probes: int) -> Self: ...
    @property
    def positions(self) -> npt.NDArray[np.uint64]:
        """Read-only uint64[n]: one point per node, ascending."""
    @property
    def owners(self) -> npt.NDArray[np.int32]:
        """Read-only int32[n]: the node index of each point."""
    @property
    def probes(self) -> int: ...

# --- src/_memento.pxi ---

@disjoint_base
class _Memento(_Router):
    """n slots; replacers[b] the replacer of a removed slot (-1 if working); slot_node[b]
    the index in nodes of a working slot's name; the hasher is raw_ints."""

    def __new__(
        cls,
        nodes: tuple[str, ...],
        hasher: _Hasher,
        n: int,
        replacers: npt.ArrayLike,
        slot_node: npt.ArrayLike,
    ) -> Self: ...
    @property
    def replacers(self) -> npt.NDArray[np.int32]: ...
    @property
    def slot_node(self) -> npt.NDArray[np.int32]: ...

# --- src/_bounded.pxi ---

def bounded_assign(
    core: _Router,
    hashes: npt.NDArray[np.uint64],
    caps: npt.NDArray[np.int64],
    loads: npt.NDArray[np.int64],
    spread: int,
    out: npt.NDArray[np.int32],
) -> npt.NDArray[np.int32]:
    """Assign each hash in turn to a node below capacity; ``loads`` is updated in place."""

@disjoint_base
class _LiveLoad:
    """BoundedLoad's live load over one router snapshot (loads by node index, capacity rule)."""

    def __new__(
        cls,
        core: _Router,
        state: object,
        loads: npt.ArrayLike,
        held: int,
        py_hash: bool,
        caps: npt.ArrayLike | None = None,
        ratios: list[tuple[int, int]] | None = None,
    ) -> Self: ...
    @property
    def core(self) -> _Router: ...
    @property
    def state(self) -> object: ...
    @property
    def loads(self) -> npt.NDArray[np.int64]: ...
    held: int
    def acquire(self, router: object, key: object, spread: int) -> str | bool | None:
        """The node of one key (counted); None: the router has another snapshot; False:
        every node is at its fixed capacity."""
    def release(self, node: object) -> bool:
        """Give back one unit of a node of this snapshot (False: not one of its nodes)."""
    def items(self) -> dict[str, int]:
        """{name: load} of the nodes holding load."""

@disjoint_base
class _CLock:
    """A non-reentrant lock used as a context manager."""

    def __enter__(self) -> Self: ...
    def __exit__(self, *exc: object) -> Literal[False]: ...

@disjoint_base
class _BoundedBase:
    """BoundedLoad's acquire and release, in C."""

    _router: Any
    _live: _LiveLoad | None
    @property
    def _lock(self) -> _CLock: ...
    def acquire(self, key: str | bytes | bytearray | memoryview | int, *, spread: int = 1
                ) -> str:
        """Place one key given the load held now, count it, and return its node."""
    def release(self, node: str) -> None:
        """Give back one unit of load held by ``node``."""

# --- src/_compat.pxi: compatibility rings (ketama, uhashring, hashring, Redis, Cassandra) ---

# compat_points modes.
POINTS_MD5_BE64: Final = 0  # one point per label: MD5 bytes 0..7 big-endian (uhashring)
POINTS_DIGEST: Final = 1  # per_digest points per label from the MD5 words (ketama), value << 32
POINTS_HASH: Final = 2  # one point per label: the hash with id ``hid``, value << 32 if 32-bit

def compat_points(
    prefixes: list[bytes],
    labels: npt.NDArray[np.uint32],
    mode: int,
    per_digest: int = 4,
    hid: int = 0,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int32]]:
    """Points of labels prefixes[i] + ascii(decimal j), j < labels[i], in generation order:
    (positions uint64, owners int32), unsorted."""

TIES_KEEP: int
TIES_FIRST: int
TIES_LAST: int

def ring_points(positions: npt.ArrayLike, owners: npt.ArrayLike, ties: int = ...
                ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int32]]:
    """The one ring builder: points in generation order sorted by (position, generation),
    the tie rule applied to equal positions."""

def last_writer(pos: npt.NDArray[np.uint64], own: npt.NDArray[np.int32]) -> int:
    """Give each run of equal positions the owner of its last entry, in place; returns the
    number of runs longer than one."""

def walk_distinct(core: _Router, start: int, limit: int) -> list[int]:
    """Distinct owner indices met clockwise from position index ``start``, at most ``limit``."""

@disjoint_base
class _SlotTable(_Router):
    """A Redis Cluster slot map: hash = slot (0..16383), table[slot] = node index (-1 for an
    unassigned slot; live is 16384, so it never raises EmptyRingError)."""

    def __new__(cls, table: npt.ArrayLike, nodes: tuple[str, ...], hasher: _Hasher) -> Self: ...
    @property
    def table(self) -> npt.NDArray[np.int32]:
        """Read-only int32[16384]: node index per slot, -1 where unassigned."""

def first_foreign(seq: list[Any] | tuple[object, ...], ints: bool = True) -> int:
    """Index of the first item whose type is not exactly str (or int, with ``ints``), or -1.
    ``seq`` must be a list or tuple (it is read without a type check)."""

# --- src/_haproxy.pxi: HAProxy hash-type consistent (server points) ---

def haproxy_points(
    puids: npt.NDArray[np.int64], counts: npt.NDArray[np.uint32]
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int32]]:
    """HAProxy's tree keys avalanche(puid * 4096 + j) mod 2**32, j < counts[i], server by
    server: (keys uint32, owner int32 = i)."""

def haproxy_avalanche(x: int) -> int:
    """HAProxy's full_hash (the avalanche modifier) of one 32-bit integer."""
# --- src/_nginx.pxi ---

def nginx_crc32(data: bytes | bytearray | memoryview) -> int:
    """CRC-32 (zlib's) of a bytes-like object, as nginx computes it."""

def nginx_points(
    bases: list[bytes], counts: npt.NDArray[np.uint32]
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int32]]:
    """nginx's consistent points of servers hashed as bases[i] (host NUL port), counts[i]
    each, as positions value << 32: (positions, owners), unsorted, in generation order."""

@disjoint_base
class _NginxHash(_Router):
    """Plain nginx ``hash``: servers with cumulative weights ``ends``, ``down`` flags; hashes
    CRC-32(key) << 32 | length."""

    def __new__(
        cls, nodes: tuple[str, ...], hasher: _Hasher, ends: npt.ArrayLike, down: npt.ArrayLike
    ) -> Self: ...
    def tries(
        self, hashes: npt.NDArray[np.uint64]
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.uint32]]:
        """(server index, tries nginx makes) per core hash."""
# --- src/_twemproxy.pxi ---

@disjoint_base
class _Modula(_Router):
    """A twemproxy modula pool: table[i] = server index; a 32-bit hash h (the core's hash
    >> 32) goes to table[h % len(table)]; live is the number of distinct servers in it."""

    def __new__(cls, table: npt.ArrayLike, nodes: tuple[str, ...], hasher: _Hasher) -> Self: ...
    @property
    def table(self) -> npt.NDArray[np.int32]:
        """Read-only int32[T]: the node index of each entry."""

# --- src/_family.pxi: the modern family's shared pieces ---

def _crc32c_u64(key: int, seed: int, software: bool = False) -> int:
    """SSE4.2 crc32q's CRC-32C of key's 8 bytes from register seed (software: the tables)."""
def _crc32c_hardware(use: bool | None = None) -> bool:
    """Whether the crc32 instruction is used; use=False/True switches (a test hook)."""
def _simd(level: str | None = None) -> str:
    """The widest SIMD form batch kernels use ("avx512", "avx2", "portable"); level caps it
    (a test hook); returns the old setting."""
def _np_arrays_in_c(use: bool | None = None) -> bool:
    """Whether small batches make their arrays in C; use=False/True switches (a test hook)."""

@disjoint_base
class _NBuckets(_Router):
    """n numbered buckets: bucket i is nodes[i], or bare bucket numbers for nodes ()."""

    @property
    def n(self) -> int: ...

# --- src/_jumpback.pxi, _fliphash.pxi, _power.pxi, _binomial.pxi ---

class _JumpBack(_NBuckets):
    def __new__(cls, nodes: tuple[str, ...], hasher: _Hasher, n: int) -> Self: ...

def _jumpback_1(key_hash: int, n: int) -> int:
    """hash4j's JumpBackHash getBucket(key_hash, n), 1 <= n <= 2**31 - 1."""

@disjoint_base
class _FlipHash(_NBuckets):
    def __new__(
        cls, nodes: tuple[str, ...], hasher: _Hasher, n: int, flip_seed: int = 0
    ) -> Self: ...
    @property
    def flip_seed(self) -> int: ...

def _fliphash_1(key_hash: int, range_end: int, seed: int) -> int:
    """fliphash_64_with_seed(key_hash, seed, ..=range_end)."""

@disjoint_base
class _Power(_NBuckets):
    def __new__(cls, nodes: tuple[str, ...], hasher: _Hasher, n: int) -> Self: ...

def _power_1(key_hash: int, n: int) -> int:
    """PowerConsistentHasher::try_new(n)?.hash_u64(key_hash), n = 1 giving 0."""

@disjoint_base
class _Binomial(_NBuckets):
    def __new__(cls, nodes: tuple[str, ...], hasher: _Hasher, n: int) -> Self: ...

def _binomial_1(key_hash: int, n: int) -> int:
    """BinomialEngine(n, hf).getBucket with hf.hash = key_hash."""

# --- src/_jumpback_anchor.pxi ---

@disjoint_base
class _JBAState(_Router):
    """JumpBackAnchorBuckets' mutable state (hash4j's operations)."""

    def __new__(cls, hasher: _Hasher) -> Self: ...
    @property
    def a(self) -> int: ...
    @property
    def k(self) -> int: ...
    def add(self) -> int: ...
    def remove(self, b: int) -> bool: ...
    def is_working(self, b: int) -> bool: ...
    def copy(self) -> _JBAState: ...
    def removed(self) -> list[int]: ...
    def set(self, a: int, removed: list[int]) -> None: ...
    def bucket1(self, h: int) -> int: ...
    def nbytes(self) -> int: ...

@disjoint_base
class _JumpBackAnchor(_Router):
    def __new__(
        cls,
        nodes: tuple[str, ...],
        hasher: _Hasher,
        a: int,
        removed: npt.ArrayLike,
        slot_node: npt.ArrayLike,
    ) -> Self: ...
    @property
    def ka_array(self) -> npt.NDArray[np.int32]: ...
    @property
    def slot_node(self) -> npt.NDArray[np.int32]: ...

# --- src/_anchor.pxi ---

@disjoint_base
class _AnchorState:
    """AnchorBuckets' mutable state (cpp-anchorhash's AnchorHashQre)."""

    def __new__(cls, a: int, w: int) -> Self: ...
    @property
    def a(self) -> int: ...
    @property
    def n(self) -> int: ...
    @property
    def r(self) -> int: ...
    @property
    def A_array(self) -> npt.NDArray[np.uint32]: ...
    @property
    def K_array(self) -> npt.NDArray[np.uint32]: ...
    def copy(self) -> _AnchorState: ...
    def is_working(self, b: int) -> bool: ...
    def remove(self, b: int) -> None: ...
    def remove_many(self, bs: npt.NDArray[np.uint32]) -> None: ...
    def add(self) -> int: ...
    def removed(self) -> list[int]: ...
    def bucket1(self, key1: int, key2: int) -> int: ...
    def batch(
        self,
        key1: npt.NDArray[np.uint64],
        key2: npt.NDArray[np.uint64] | None,
        out: npt.NDArray[np.int32],
    ) -> None: ...
    def nbytes(self) -> int: ...

@disjoint_base
class _Anchor(_Router):
    def __new__(
        cls, nodes: tuple[str, ...], hasher: _Hasher, st: _AnchorState, slot_node: npt.ArrayLike
    ) -> Self: ...
    @property
    def A_array(self) -> npt.NDArray[np.uint32]: ...
    @property
    def K_array(self) -> npt.NDArray[np.uint32]: ...
    @property
    def slot_node(self) -> npt.NDArray[np.int32]: ...

# --- src/_dxhash.pxi ---

@disjoint_base
class _DxState(_Router):
    """DxBuckets' mutable state (ChaosD/DxHash's DxHash)."""

    def __new__(cls, hasher: _Hasher, size: int, working: int) -> Self: ...
    @property
    def size(self) -> int: ...
    @property
    def working(self) -> int: ...
    @property
    def bits(self) -> npt.NDArray[np.uint64]: ...
    def copy(self) -> _DxState: ...
    def is_working(self, b: int) -> bool: ...
    def remove(self, b: int) -> None: ...
    def grows(self) -> int: ...
    def add(self) -> int: ...
    def probe1(self, key: int, want: int = 1) -> tuple[int, int]: ...
    def reference_finds(self, key: int, want: int = 1) -> bool: ...
    def nbytes(self) -> int: ...

@disjoint_base
class _Dx(_Router):
    def __new__(
        cls,
        nodes: tuple[str, ...],
        hasher: _Hasher,
        size: int,
        bits: npt.ArrayLike,
        slot_node: npt.ArrayLike,
    ) -> Self: ...
    @property
    def bits(self) -> npt.NDArray[np.uint64]: ...
    @property
    def slot_node(self) -> npt.NDArray[np.int32]: ...

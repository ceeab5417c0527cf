"""A drop-in replacement for ``uhashring.HashRing`` (uhashring 2.5): change one import.

    from uhashring import HashRing                          # before
    from consistent_hash.compat.uhashring import HashRing   # after

Every method, argument and result is uhashring's, and every key goes to the node uhashring
sends it to, in both of its modes:

- the default mode: a point per ``f"{node}-{i}"``, ``i < vnodes * weight`` (vnodes 160), placed
  at the 128-bit ``int(md5(...).hexdigest(), 16)``; a key goes to the first point strictly
  greater than ``md5(str(key))``, wrapping round;
- ``hash_fn="ketama"``: libketama's points, ``(vnodes * len(nodes) * weight) // sum(weights)``
  labels per node (vnodes 40) and ``replicas`` (4) little-endian 32-bit words of each label's
  MD5, with uhashring's integer arithmetic.

What runs differently: the ring is a compiled, sorted NumPy array, so building it, changing it
and looking keys up run in C (and ``get_many`` / ``get_indices`` route whole batches); every
change builds a new snapshot and swaps it in with one assignment, so readers in other threads
never see a half-built ring (uhashring mutates its lists in place); the ring pickles
(uhashring's default mode does not: its hash is a lambda); and ``node in ring`` and
``iter(ring)`` (the node names) return, where uhashring's loop for ever.

Keys are hashed as ``str(key)``, as uhashring does, so ``b"x"`` is hashed as the text
``"b'x'"``: that is uhashring's placement and we keep it so that nothing moves.  A new
deployment that wants bytes hashed as bytes passes ``bytes_keys="raw"``.

The default mode compares the first 64 bits of the 128-bit MD5 values; it can differ from
uhashring only when a key's MD5 and a point's MD5 share their first 64 bits but not all 128
(a chance of about 2**-64 per key).  A custom ``hash_fn`` callable is supported on a
pure-Python path (its values need not fit 64 bits), at uhashring's speed.
"""

from __future__ import annotations

import hashlib
import operator
import threading
from bisect import bisect
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash._containers import route as _route
from consistent_hash._core import (
    POINTS_DIGEST,
    POINTS_MD5_BE64,
    _Ring,
    compat_points,
    walk_distinct,
)
from consistent_hash._hashes import compat_hasher
from consistent_hash._ringbase import build_ring
from consistent_hash._threads import resolve as _threads
from consistent_hash.compat._keys import text_key, text_keys

__all__ = ["HashRing"]

def _md5_int(key: Any) -> int:
    return int(hashlib.md5(str(key).encode("utf-8")).hexdigest(), 16)


def _ketama_int(key: Any, replica: int = 0) -> int:
    d = hashlib.md5(str(key).encode("utf-8")).digest()
    return int.from_bytes(d[4 * replica : 4 * replica + 4], "little")


class _Snapshot:
    """One immutable state: the compiled ring plus what the introspection calls need."""

    __slots__ = ("core", "names", "counts", "full", "pykeys", "pyring")

    def __init__(self, core: _Ring | None, names: tuple[Any, ...], counts: dict[Any, int],
                 pykeys: list[int] | None = None, pyring: dict[int, Any] | None = None) -> None:
        self.core = core
        self.names = names
        self.counts = counts
        self.full: list[int] | None = None   # 128-bit point values, computed on demand
        self.pykeys = pykeys                 # custom hash_fn: sorted point values
        self.pyring = pyring                 # custom hash_fn: point -> node name


class HashRing:
    """Implement a consistent hashing ring (uhashring 2.5's interface, compiled).

    :param nodes: nodes used to create the continuum (a name, a list of names, or a dict
        name -> weight or name -> configuration dict).
    :param hash_fn: ``"ketama"`` for the ketama-compatible ring, or a callable to hash keys.
    :param vnodes: default number of vnodes per node (160, or 40 with ``"ketama"``).
    :param weight_fn: use this function to calculate the node's weight.
    :param replicas: with ``"ketama"``, points per MD5 digest (4).
    :param bytes_keys: ``"repr"`` (uhashring's placement: ``str(b"x")``) or ``"raw"``.
    """

    def __init__(self, nodes: Any = [], **kwargs: Any) -> None:  # noqa: B006 (uhashring's)
        hash_fn = kwargs.get("hash_fn", None)
        vnodes = kwargs.get("vnodes", None)
        weight_fn = kwargs.get("weight_fn", None)
        bytes_keys = kwargs.get("bytes_keys", "repr")
        if bytes_keys not in ("repr", "raw"):
            raise ValueError(f'bytes_keys must be "repr" or "raw", got {bytes_keys!r}')
        self._raw_bytes = bytes_keys == "raw"
        self._ketama = hash_fn == "ketama"
        self._replicas = 4
        self._pyfn: Callable[[Any], Any] | None = None
        if self._ketama:
            if vnodes is None:
                vnodes = 40
            replicas = kwargs.get("replicas", 4)
            if isinstance(replicas, bool) or not isinstance(replicas, int) \
                    or not 0 <= replicas <= 4:
                raise ValueError(f"replicas must be an int between 0 and 4, got {replicas!r}")
            self._replicas = replicas
            self._hasher = compat_hasher("ketama_md5_next")
        else:
            if vnodes is None:
                vnodes = 160
            if hash_fn and not callable(hash_fn):
                raise TypeError("hash_fn should be a callable function")
            self._pyfn = hash_fn or None
            self._hasher = compat_hasher("md5_next")
        self._default_vnodes = vnodes
        if weight_fn and not callable(weight_fn):
            raise TypeError("weight_fn should be a callable function")
        self._weight_fn = weight_fn
        self._lock = threading.RLock()
        self._nodes: dict[Any, dict[str, Any]] = {}
        self._node_points: dict[Any, Any] = {}  # default mode: node -> its unsorted points
        self._snap = _Snapshot(None, (), {})
        self._configure_nodes(nodes)
        self._rebuild(None)

    # -- configuration (uhashring's rules) --------------------------------------------------

    def _configure_nodes(self, nodes: Any) -> bool:
        if isinstance(nodes, str):
            nodes = [nodes]
        elif not isinstance(nodes, (dict, list)):
            raise ValueError(
                f"nodes configuration should be a list or a dict, got {type(nodes)}")
        new_nodes = dict(self._nodes)
        changed = False
        for node in nodes:
            conf: dict[str, Any] = {"hostname": node, "instance": None, "nodename": node,
                                    "port": None, "vnodes": self._default_vnodes, "weight": 1}
            current = new_nodes.get(node, {})
            if not current:
                changed = True
            if isinstance(nodes, dict):
                node_conf = nodes[node]
                if isinstance(node_conf, int):
                    conf["weight"] = node_conf
                elif isinstance(node_conf, dict):
                    for k, v in node_conf.items():
                        if k in conf:
                            conf[k] = v
                            if k in ("nodename", "vnodes", "weight") and current.get(k) != v:
                                changed = True
                else:
                    raise ValueError(
                        f"node configuration should be a dict or an int, got {type(node_conf)}")
            if self._weight_fn:
                conf["weight"] = self._weight_fn(**conf)
            if current.get("weight") != conf["weight"]:
                changed = True
            new_nodes[node] = conf
        self._pending = new_nodes
        return changed

    def _labels(self, conf: dict[str, Any], n: int, weight_sum: Any) -> int:
        if self._ketama:
            count = (conf["vnodes"] * n * conf["weight"]) // weight_sum
        else:
            count = conf["vnodes"] * conf["weight"]
        # uhashring calls range(0, count): an int, or an error as range() would raise
        return max(0, operator.index(count))

    def _rebuild(self, changed: Iterable[Any] | None) -> None:
        """Build a snapshot of self._pending (all nodes, or only the changed ones' points in the
        default mode) and install it together with the new configuration."""
        nodes = self._pending
        names = tuple(nodes)
        if self._pyfn is not None:
            snap = self._build_python(nodes)
            self._nodes, self._snap = nodes, snap
            return
        if self._ketama:
            weight_sum = sum(c["weight"] for c in nodes.values())
            counts = [self._labels(nodes[n], len(nodes), weight_sum) for n in names] if nodes \
                else []
            prefixes = [f"{n}-".encode() for n in names]
            pos, gen = compat_points(prefixes, np.array(counts, dtype=np.uint32), POINTS_DIGEST,
                                     self._replicas)
            points = {n: c * self._replicas for n, c in zip(names, counts, strict=True)}
            node_points = self._node_points
        else:
            node_points = {n: p for n, p in self._node_points.items() if n in nodes}
            todo = list(names) if changed is None else [n for n in changed if n in nodes]
            if todo:
                counts = [self._labels(nodes[n], 0, 1) for n in todo]
                p, o = compat_points([f"{n}-".encode() for n in todo],
                                     np.array(counts, dtype=np.uint32), POINTS_MD5_BE64)
                bounds = np.cumsum([0] + counts)
                for i, n in enumerate(todo):
                    node_points[n] = p[bounds[i] : bounds[i + 1]]
            parts = [node_points[n] for n in names]
            pos = np.concatenate(parts) if parts else np.empty(0, np.uint64)
            gen = np.repeat(np.arange(len(names), dtype=np.int32),
                            [len(x) for x in parts]).astype(np.int32)
            points = {n: len(node_points[n]) for n in names}
        # a point claimed twice belongs to its last writer, as in a dict
        core = build_ring(pos, gen, names, self._hasher, "last")
        with self._lock:
            self._nodes, self._node_points = nodes, node_points
            self._snap = _Snapshot(core, names, points)

    def _build_python(self, nodes: dict[Any, dict[str, Any]]) -> _Snapshot:
        fn = self._pyfn
        assert fn is not None
        ring: dict[Any, Any] = {}
        counts: dict[Any, int] = {}
        for name, conf in nodes.items():
            c = self._labels(conf, 0, 1)
            counts[name] = c
            for w in range(c):
                ring[fn(f"{name}-{w}")] = name
        return _Snapshot(None, tuple(nodes), counts, sorted(ring), ring)

    # -- changes ----------------------------------------------------------------------------

    def __delitem__(self, nodename: Any) -> None:
        """Remove the given node.

        :param nodename: the node name.
        """
        with self._lock:
            if nodename not in self._nodes:
                raise KeyError(
                    f"node '{nodename}' not found, available nodes: {self._nodes.keys()}")
            self._pending = {n: c for n, c in self._nodes.items() if n != nodename}
            self._rebuild(())

    remove_node = __delitem__

    def __setitem__(self, nodename: Any, conf: Any = {"weight": 1}) -> None:  # noqa: B006
        """Add the given node with its associated configuration.

        :param nodename: the node name.
        :param conf: the node configuration.
        """
        with self._lock:
            if self._configure_nodes({nodename: conf}):
                self._rebuild([nodename])
            else:
                self._nodes = self._pending

    add_node = __setitem__

    def regenerate(self) -> None:
        """Regenerate the ring from the current nodes configuration (re-evaluates weight_fn)."""
        with self._lock:
            self._configure_nodes(dict(self._nodes))
            self._rebuild(None)

    # -- lookups ----------------------------------------------------------------------------

    def _hash_key(self, key: Any) -> Any:
        if self._raw_bytes and isinstance(key, (bytes, bytearray, memoryview)):
            return key
        return text_key(key)

    def hashi(self, key: Any) -> int:
        """Returns uhashring's integer hash of the given key."""
        if self._pyfn is not None:
            return self._pyfn(key)  # type: ignore[no-any-return]
        if self._raw_bytes and isinstance(key, (bytes, bytearray, memoryview)):
            d = hashlib.md5(bytes(key)).digest()
            return (int.from_bytes(d[:4], "little") if self._ketama
                    else int.from_bytes(d, "big"))
        return _ketama_int(key) if self._ketama else _md5_int(key)

    get_key = hashi

    def _pos(self, snap: _Snapshot, key: Any) -> int:
        if snap.core is None:
            keys = snap.pykeys or []
            p = bisect(keys, self.hashi(key))
            return 0 if p == len(keys) else p
        core = snap.core
        return int(core.position_index(core.hasher.hash(self._hash_key(key))))

    def _empty(self, snap: _Snapshot) -> bool:
        return not snap.pykeys if snap.core is None else len(snap.core) == 0

    def _nodename_at(self, snap: _Snapshot, pos: int) -> Any:
        if snap.core is None:
            assert snap.pykeys is not None and snap.pyring is not None
            return snap.pyring[snap.pykeys[pos]]
        return snap.names[int(snap.core.owners[pos])]

    def _get(self, key: Any, what: str) -> Any:
        snap, nodes = self._snap, self._nodes
        if self._empty(snap):
            return None
        if what == "nodename" and snap.core is not None:
            return snap.core.get(self._hash_key(key))
        pos = self._pos(snap, key)
        if what == "pos":
            return pos
        nodename = self._nodename_at(snap, pos)
        if what in ("hostname", "instance", "port", "weight"):
            return nodes[nodename][what]
        if what == "dict":
            return nodes[nodename]
        if what == "nodename":
            return nodename
        if what == "tuple":
            return (self._point_values(snap)[pos], nodename)
        return None

    def __getitem__(self, key: Any) -> Any:
        """Returns the instance of the node matching the hashed key."""
        return self._get(key, "instance")

    get_node_instance = __getitem__

    def __contains__(self, nodename: object) -> bool:
        """Whether ``nodename`` is a node of the ring (uhashring never returns: without this,
        ``in`` falls back on ``ring[0]``, ``ring[1]``, ...)."""
        try:
            return nodename in self._nodes
        except TypeError:  # an unhashable object is no node's name
            return False

    def __iter__(self) -> Iterator[Any]:
        """The node names, as ``get_nodes()`` (uhashring yields ``ring[i]``'s instance for
        ever)."""
        return iter(list(self._nodes))

    def get(self, key: Any) -> Any:
        """Returns the node object dict matching the hashed key."""
        return self._get(key, "dict")

    def get_node(self, key: Any) -> Any:
        """Returns the node name of the node matching the hashed key."""
        core = self._snap.core
        t = type(key)
        if core is not None and (t is str or t is int) and len(core):
            return core.get(key)  # the common case, straight to the compiled lookup
        return self._get(key, "nodename")

    def get_node_hostname(self, key: Any) -> Any:
        """Returns the hostname of the node matching the hashed key."""
        return self._get(key, "hostname")

    def get_node_port(self, key: Any) -> Any:
        """Returns the port of the node matching the hashed key."""
        return self._get(key, "port")

    def get_node_pos(self, key: Any) -> Any:
        """Returns the index position of the node matching the hashed key."""
        return self._get(key, "pos")

    def get_node_weight(self, key: Any) -> Any:
        """Returns the weight of the node matching the hashed key."""
        return self._get(key, "weight")

    def get_server(self, key: Any) -> Any:
        """Returns a ketama compatible (position, nodename) tuple."""
        return self._get(key, "tuple")

    # batch forms (ours): the same answers as get_node, for a whole container at C speed

    def get_indices(self, keys: Any, *, threads: int | None = None) -> npt.NDArray[np.int32]:
        """int32 index into ``ring_nodes()`` of each key's node (-1 on an empty ring);
        ``threads`` as in ``HashRing.get_many``."""
        t = _threads(threads)
        snap = self._snap
        if snap.core is None:
            idx = {n: i for i, n in enumerate(snap.names)}
            return np.array([idx[self.get_node(k)] if not self._empty(snap) else -1
                             for k in _as_list(keys)], dtype=np.int32)
        if len(snap.core) == 0:
            return np.full(len(_as_list(keys)), -1, dtype=np.int32)
        return _route(snap.core, self._batch(keys), hint=False, threads=t)

    def get_many(self, keys: Any, *, threads: int | None = None) -> npt.NDArray[np.object_]:
        """Object array: ``get_node(key)`` of each key (None on an empty ring)."""
        snap = self._snap
        idx = self.get_indices(keys, threads=threads)
        names = np.empty(len(snap.names) + 1, dtype=object)
        names[: len(snap.names)] = snap.names
        result: npt.NDArray[np.object_] = names[idx]
        return result

    def ring_nodes(self) -> tuple[Any, ...]:
        """The node names in the order ``get_indices`` numbers them."""
        return self._snap.names

    def _batch(self, keys: Any) -> Any:
        if self._raw_bytes:
            if isinstance(keys, (list, tuple)):
                keys = [k if isinstance(k, (bytes, bytearray)) else text_key(k) for k in keys]
                return keys
            if isinstance(keys, np.ndarray) and keys.dtype.kind == "S":
                return keys
        return text_keys(keys)

    def range(self, key: Any, size: int | None = None, unique: bool = True
              ) -> Generator[dict[str, Any], None, None]:
        """Returns a generator of nodes' configuration available in the continuum/ring.

        :param key: the key to look for.
        :param size: limit the list to at most this number of nodes.
        :param unique: a node may only appear once in the list (default True).
        """
        snap, nodes = self._snap, self._nodes
        if self._empty(snap):
            return
        pos = self._pos(snap, key)
        if unique:
            size = size or len(nodes)
            if snap.core is not None:
                for i in walk_distinct(snap.core, pos, size):
                    yield nodes[snap.names[i]]
                return
        order = self._points_from(snap, pos)
        seen: set[Any] = set()
        count = 0
        for name in order:
            if unique:
                if name in seen:
                    continue
                seen.add(name)
            count += 1
            yield nodes[name]
            if count == size:
                break

    def _points_from(self, snap: _Snapshot, pos: int) -> list[Any]:
        if snap.core is None:
            assert snap.pykeys is not None and snap.pyring is not None
            ks = snap.pykeys[pos:] + snap.pykeys[:pos]
            return [snap.pyring[k] for k in ks]
        own = np.roll(snap.core.owners, -pos)
        names = np.empty(len(snap.names), dtype=object)
        names[:] = snap.names
        return names[own].tolist()  # type: ignore[no-any-return]

    def iterate_nodes(self, key: Any, distinct: bool = True) -> Generator[Any, None, None]:
        """hash_ring compatibility: the nodes that can hold the key, once round the ring."""
        if self._empty(self._snap):
            yield None
        else:
            for node in self.range(key, unique=distinct):
                yield node["nodename"]

    # -- introspection (uhashring's) --------------------------------------------------------

    def _point_values(self, snap: _Snapshot) -> list[int]:
        """The sorted point values as uhashring holds them (128-bit in the default mode)."""
        if snap.core is None:
            return snap.pykeys or []
        if self._ketama:  # 32-bit points, held in the high half of the ring positions
            return (snap.core.positions >> np.uint64(32)).tolist()  # type: ignore[no-any-return]
        if snap.full is None:
            vals = []
            for name in snap.names:
                for w in range(snap.counts[name]):
                    vals.append(_md5_int(f"{name}-{w}"))
            snap.full = sorted(set(vals))
        return snap.full

    def get_instances(self) -> list[Any]:
        """Returns a list of the instances of all the configured nodes."""
        return [c.get("instance") for c in self._nodes.values() if c.get("instance")]

    def get_nodes(self) -> Any:
        """Returns a list of the names of all the configured nodes."""
        return self._nodes.keys()

    def get_points(self) -> list[tuple[int, Any]]:
        """Returns a ketama compatible list of (position, nodename) tuples."""
        snap = self._snap
        vals = self._point_values(snap)
        return [(v, self._nodename_at(snap, i)) for i, v in enumerate(vals)]

    def print_continuum(self) -> None:
        """Prints a ketama compatible continuum report."""
        points = self.get_points()
        if points:
            print(f"Numpoints in continuum: {len(points)}")
        else:
            print("Continuum empty")
        for point, node in points:
            print(f"{node} ({point})")

    @property
    def conf(self) -> dict[Any, dict[str, Any]]:
        return self._nodes

    nodes = conf

    @property
    def distribution(self) -> Counter[Any]:
        snap = self._snap
        return Counter({n: c for n, c in snap.counts.items() if c})

    @property
    def ring(self) -> dict[int, Any]:
        return dict(self.get_points())

    continuum = ring

    @property
    def size(self) -> int:
        return len(self.ring) if self._ketama or self._pyfn else len(self._point_values(self._snap))

    @property
    def _keys(self) -> list[int]:
        return self._point_values(self._snap)

    @property
    def _ring(self) -> dict[int, Any]:
        return self.ring

    # -- pickling ---------------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        return {"nodes": self._nodes, "ketama": self._ketama, "replicas": self._replicas,
                "vnodes": self._default_vnodes, "weight_fn": self._weight_fn,
                "hash_fn": self._pyfn, "raw": self._raw_bytes}

    def __setstate__(self, state: dict[str, Any]) -> None:
        kwargs: dict[str, Any] = {"vnodes": state["vnodes"], "weight_fn": None,
                                  "bytes_keys": "raw" if state["raw"] else "repr"}
        if state["ketama"]:
            kwargs["hash_fn"] = "ketama"
            kwargs["replicas"] = state["replicas"]
        elif state["hash_fn"] is not None:
            kwargs["hash_fn"] = state["hash_fn"]
        self.__init__(dict(state["nodes"]), **kwargs)  # type: ignore[misc]
        self._weight_fn = state["weight_fn"]


def _as_list(keys: Any) -> list[Any]:
    if isinstance(keys, (list, tuple)):
        return list(keys)
    if isinstance(keys, np.ndarray):
        return keys.tolist()  # type: ignore[no-any-return]
    if hasattr(keys, "to_pylist"):
        return keys.to_pylist()  # type: ignore[no-any-return]
    return list(keys)


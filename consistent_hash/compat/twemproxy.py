"""TwemproxyPool: route keys exactly as a twemproxy (nutcracker) pool does.

A service that talks to the memcached servers of a twemproxy pool directly (or plans a change
to that pool) needs to know where nutcracker sends each key.  ``TwemproxyPool`` reproduces a
pool's ``distribution: ketama`` and ``distribution: modula`` with every ``hash:`` value
nutcracker 0.5.0 accepts, named servers, weights, ``hash_tag`` and the servers
``auto_eject_hosts`` has taken out, and is built from the pool's own YAML::

    pool = twemproxy.from_config(open("nutcracker.yml").read(), name="alpha")
    pool.get("user:42")        # the server (as written in the config) holding the key

or from arguments: ``TwemproxyPool(["10.0.0.1:11211:1", "10.0.0.2:11211:2 cache-b"],
hash="fnv1a_64", distribution="ketama", hash_tag="{}")``.

Node names: a named server (``"host:port:weight name"``) is its name, which is also what
twemproxy places and reports it by; any other server is its address as written
(``"host:port"``, or a unix socket path), without the weight.  ``servers`` maps each node back
to its config line and ``addresses`` to its address.  The recipe, and what was checked against
a live nutcracker, is in docs/agreeing-with-twemproxy.md.

``distribution: random`` is refused: nutcracker picks a server with ``random()`` for every
request (seeded from the clock), so no function of the key can reproduce it.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from consistent_hash import _format
from consistent_hash._core import POINTS_DIGEST, _Hasher, _Modula, _Remap, compat_points
from consistent_hash._hashes import compat_hasher
from consistent_hash._ringbase import build_ring, ring_ownership
from consistent_hash._router import Router
from consistent_hash.compat.config import NameNeeded
from consistent_hash.compat.ketama import point_counts

__all__ = ["DISTRIBUTIONS", "HASHES", "TwemproxyPool", "from_config"]

#: every ``hash:`` value of nutcracker 0.5.0 (its default: fnv1a_64)
HASHES = ("one_at_a_time", "md5", "crc16", "crc32", "crc32a", "fnv1_64", "fnv1a_64",
          "fnv1_32", "fnv1a_32", "hsieh", "murmur", "jenkins")
DISTRIBUTIONS = ("ketama", "modula")
KIND_TWEMPROXY = _format.KINDS["TwemproxyPool"]
_DEFAULT_PORT = 11211          # a server on it is placed by its host alone (libmemcached's rule)
_MAX_LABEL = 272               # nutcracker truncates a ketama label past 272 bytes
_MAX_WEIGHT = (1 << 31) - 1    # nutcracker reads weights as a C int
_MAX_MODULA = 1 << 24          # entries of a modula table (the sum of the live weights)
_TAG_FLAG = 1 << 16            # the hasher's seed: flag | close << 8 | open (ch_hash_twemproxy.h)
_UCHAR_FLAG = 1 << 17          # ... and key bytes read as an unsigned char

# the keys of a pool in nutcracker.yml (nc_conf.c); only those routing depends on are read
_POOL_KEYS = frozenset({
    "listen", "hash", "hash_tag", "distribution", "timeout", "backlog", "client_connections",
    "redis", "tcpkeepalive", "redis_auth", "redis_db", "preconnect", "auto_eject_hosts",
    "server_connections", "server_retry_timeout", "server_failure_limit", "servers"})


class _Server(NamedTuple):
    line: str        # as written (the constructor's / the config's text)
    node: str        # our node name: the name when named, else the address as written
    address: str     # "host:port" or the socket path
    weight: int      # from the line (1 when it has none)
    label: bytes     # what twemproxy names it by in the continuum: name, host or host:port


def _parse_server(spec: Any) -> _Server:
    """A server line as nutcracker parses it, from the end: ``"host:port:weight [name]"`` or
    ``"/path/socket:weight [name]"``; also ``"host:port"`` (weight 1), which nutcracker's
    config would refuse but is how other routers name nodes."""
    if not isinstance(spec, str):
        raise TypeError(f"servers must be str like 'host:port:weight [name]', got "
                        f"{type(spec).__name__!r}")
    line = spec
    text = spec.strip()
    name = None
    if " " in text:
        text, name = text.rsplit(" ", 1)
        text = text.rstrip()
        if not name or not text:
            raise ValueError(f"bad server {spec!r}: expected 'host:port:weight [name]'")
    unix = text.startswith("/")
    parts = text.rsplit(":", 1 if unix else 2)
    if unix:
        if len(parts) == 1:
            parts.append("1")
        addr, wtext = parts
        port = None
        port_text = ""
    else:
        if len(parts) == 2:           # host:port, weight 1
            parts.append("1")
        if len(parts) != 3 or not parts[0]:
            raise ValueError(f"bad server {spec!r}: expected 'host:port:weight [name]' or "
                             "'/path/socket:weight [name]'")
        addr, port_text, wtext = parts
        if not port_text.isdigit() or not port_text.isascii() or not 0 < int(port_text) < 65536:
            raise ValueError(f"bad server {spec!r}: the port must be an integer in 1..65535")
        port = int(port_text)
    if not wtext.isdigit() or not wtext.isascii():
        raise ValueError(f"bad server {spec!r}: the weight must be a positive integer")
    weight = int(wtext)
    if not 1 <= weight <= _MAX_WEIGHT:
        raise ValueError(f"bad server {spec!r}: the weight must be between 1 and 2**31 - 1 "
                         "(nutcracker refuses a zero weight)")
    address = addr if unix else f"{addr}:{port_text}"
    if name is not None:
        label = name
    elif port == _DEFAULT_PORT:
        label = addr
    else:
        # nutcracker takes the address plus one byte and the port's digits: for a unix socket
        # (no port) that byte is the ':' before the weight, so "/tmp/mc.sock:1" is placed as
        # "/tmp/mc.sock:".
        label = address if not unix else addr + ":"
    node = name if name is not None else address
    return _Server(line, node, address, weight, label.encode("utf-8"))


def _tag_seed(hash_tag: Any) -> tuple[str | bytes | None, int]:
    """(the tag as given: str, or bytes for a tag that is not UTF-8 text; the hasher seed)."""
    if hash_tag is None or hash_tag == "":
        return None, 0
    shown: str | bytes
    if isinstance(hash_tag, (bytes, bytearray)):
        raw = shown = bytes(hash_tag)
    elif isinstance(hash_tag, str):
        raw = hash_tag.encode("utf-8")
        shown = hash_tag
    else:
        raise TypeError(f"hash_tag must be a str of two characters, got "
                        f"{type(hash_tag).__name__!r}")
    if len(raw) != 2:
        raise ValueError(f"hash_tag must be two characters (two bytes, as nutcracker requires), "
                         f"got {hash_tag!r}")
    return shown, _TAG_FLAG | raw[0] | (raw[1] << 8)


def _check_weight(w: Any, node: str) -> int:
    if isinstance(w, bool) or not isinstance(w, (int, np.integer)):
        raise TypeError(f"weight of {node!r} must be an int, got {type(w).__name__!r}")
    if not 1 <= w <= _MAX_WEIGHT:
        raise ValueError(f"weight of {node!r} must be between 1 and 2**31 - 1, got {w}")
    return int(w)


class TwemproxyPool(Router):
    """A twemproxy pool: ``distribution: ketama`` or ``modula``, any ``hash:``.

    Parameters
    ----------
    servers : iterable of str
        The pool's ``servers:`` lines, ``"host:port:weight [name]"`` or
        ``"/path/socket:weight [name]"`` (``"host:port"`` means weight 1).  Their order does
        not matter: nutcracker sorts a pool's servers by name (shorter names first) before it
        builds anything.
    weights : mapping node -> int, optional
        Weights overriding the lines' (nodes as ``nodes`` names them).
    hash : str
        The ``hash:`` value, one of ``HASHES`` (default ``"fnv1a_64"``, nutcracker's).
    distribution : {"ketama", "modula"}
        The ``distribution:`` value (default ``"ketama"``).
    hash_tag : str, optional
        The ``hash_tag:`` value, two characters such as ``"{}"``: a key with text between them
        is placed by that text alone.
    auto_eject_hosts : bool
        Whether nutcracker may eject failing servers (then ``eject`` / ``restore`` model it).
    signed_char : bool
        How the nutcracker binary reads key bytes in one_at_a_time, the FNVs and hsieh: True
        (the default) for a build where C's ``char`` is signed (x86-64, and i386), False where
        it is unsigned (arm64 / aarch64 Linux, POWER, s390x).  Only keys with bytes >= 0x80
        differ.

    Examples
    --------
    >>> pool = TwemproxyPool(["10.0.0.1:11211:1", "10.0.0.2:11211:1"], hash="fnv1a_64")
    >>> pool.get("user:42")
    '10.0.0.1:11211'
    """

    __slots__ = ("_servers", "_weights", "_hash_name", "_dist", "_tag", "_seed", "_auto_eject",
                 "_ejected", "_signed")
    _kind = KIND_TWEMPROXY
    _replicas = False
    _hash_shift = 32  # the 32-bit key hash sits in the high half of the core's positions

    def __init__(self, servers: Iterable[str] = (), weights: Mapping[str, int] | None = None,
                 *, hash: str = "fnv1a_64", distribution: str = "ketama",
                 hash_tag: str | bytes | None = None, auto_eject_hosts: bool = False,
                 signed_char: bool = True) -> None:
        if not isinstance(hash, str):
            raise TypeError(f"hash must be a str, got {type(hash).__name__!r}")
        if hash not in HASHES:
            raise ValueError(f"hash must be one of {', '.join(HASHES)} (nutcracker's hash: "
                             f"values), got {hash!r}")
        if not isinstance(distribution, str):
            raise TypeError(f"distribution must be a str, got {type(distribution).__name__!r}")
        if distribution == "random":
            raise ValueError("distribution 'random' cannot be reproduced: nutcracker picks a "
                             "server with random() for every request, whatever the key")
        if distribution not in DISTRIBUTIONS:
            raise ValueError(f"distribution must be 'ketama' or 'modula', got {distribution!r}")
        if not isinstance(auto_eject_hosts, (bool, np.bool_)):
            raise TypeError(f"auto_eject_hosts must be a bool, got "
                            f"{type(auto_eject_hosts).__name__!r}")
        if not isinstance(signed_char, (bool, np.bool_)):
            raise TypeError(f"signed_char must be a bool, got {type(signed_char).__name__!r}")
        self._signed = bool(signed_char)
        self._tag, self._seed = _tag_seed(hash_tag)
        if not self._signed:
            self._seed |= _UCHAR_FLAG
        self._hash_name = hash
        self._dist = distribution
        self._auto_eject = bool(auto_eject_hosts)
        self._lock = threading.Lock()
        if isinstance(servers, (str, bytes)):
            raise TypeError("servers must be an iterable of 'host:port:weight [name]' strings, "
                            "not a single str")
        parsed: list[_Server] = []
        ws: dict[str, int] = {}
        for s in servers:
            srv = _parse_server(s)
            parsed.append(srv)
            ws[srv.node] = srv.weight
        _check_unique(parsed)
        for k, w in (weights or {}).items():
            if k not in ws:
                raise KeyError(f"weight given for {k!r}, which is not a node of the pool "
                               "(nodes are the servers' names, or their addresses)")
            ws[k] = _check_weight(w, k)
        self._install(tuple(parsed), ws, frozenset())

    # -- building ---------------------------------------------------------------------------

    def _hasher(self) -> _Hasher:
        base = compat_hasher("twemproxy_" + self._hash_name)
        return _Hasher(base.hid, self._seed, None) if self._seed else base

    def _install(self, servers: tuple[_Server, ...], ws: dict[str, int],
                 ejected: frozenset[str]) -> None:
        nodes = tuple(s.node for s in servers)
        # nutcracker's server order: sorted by name, a shorter name first (string_compare)
        order = sorted(range(len(servers)), key=lambda i: (len(servers[i].label),
                                                           servers[i].label))
        live = [i for i in order if servers[i].node not in ejected]
        hasher = self._hasher()
        core: Any
        if self._dist == "ketama":
            weights = [ws[nodes[i]] for i in live]
            counts = point_counts(weights, "twemproxy") if live else []
            for i, c in zip(live, counts, strict=True):
                longest = len(servers[i].label) + 1 + len(str(max(c // 4 - 1, 0)))
                if longest > _MAX_LABEL:
                    raise ValueError(f"server name {servers[i].label!r} is too long: nutcracker "
                                     "truncates its ketama labels at 272 bytes")
            labels = np.array([c // 4 for c in counts], dtype=np.uint32)
            pos, gen = compat_points([servers[i].label + b"-" for i in live], labels,
                                     POINTS_DIGEST, 4)
            own = np.array(live, dtype=np.int32)[gen] if len(gen) else gen
            # ties: nutcracker's server order (glibc's stable qsort), the generation order
            core = build_ring(pos, own, nodes, hasher)
        else:
            total = sum(ws[nodes[i]] for i in live)
            if total > _MAX_MODULA:
                raise ValueError(f"the live weights sum to {total}: a modula pool of more than "
                                 f"{_MAX_MODULA} entries is not supported")
            table = np.repeat(np.array(live, dtype=np.int32),
                              [ws[nodes[i]] for i in live]) if live else np.empty(0, np.int32)
            core = _Modula(table, nodes, hasher)
        self._servers, self._weights, self._ejected = servers, dict(ws), ejected
        self._set_core(core)

    # -- changes ----------------------------------------------------------------------------

    def add(self, server: str, weight: int | None = None) -> None:
        """Add a server line (``"host:port:weight [name]"``); ``weight`` overrides its own."""
        srv = _parse_server(server)
        w = srv.weight if weight is None else _check_weight(weight, srv.node)
        with self._lock:
            servers = self._servers + (srv,)
            _check_unique(servers)
            self._install(servers, {**self._weights, srv.node: w}, self._ejected)

    def remove(self, node: str) -> None:
        """Remove a server (by node name); KeyError if it is absent."""
        with self._lock:
            if node not in self._weights:
                raise KeyError(node)
            self._install(tuple(s for s in self._servers if s.node != node),
                          {n: w for n, w in self._weights.items() if n != node},
                          self._ejected - {node})

    def set_weight(self, node: str, weight: int) -> None:
        """Change a server's weight; KeyError if it is absent."""
        w = _check_weight(weight, str(node))
        with self._lock:
            if node not in self._weights:
                raise KeyError(node)
            self._install(self._servers, {**self._weights, node: w}, self._ejected)

    def eject(self, node: str) -> None:
        """Take a server out of the distribution, as nutcracker does with
        ``auto_eject_hosts: true`` after ``server_failure_limit`` failures in a row: the pool
        is rebuilt from the other servers, exactly as if the ejected one were not configured
        (it keeps its node name; ``restore`` puts it back)."""
        with self._lock:
            if not self._auto_eject:
                raise ValueError("this pool has auto_eject_hosts false: nutcracker never ejects "
                                 "its servers (keys keep going to a failed one)")
            if node not in self._weights:
                raise KeyError(node)
            self._install(self._servers, self._weights, self._ejected | {node})

    def restore(self, node: str) -> None:
        """Put an ejected server back (nutcracker retries it after
        ``server_retry_timeout``); KeyError if it is not a node, ValueError if not ejected."""
        with self._lock:
            if node not in self._weights:
                raise KeyError(node)
            if node not in self._ejected:
                raise ValueError(f"{node!r} is not ejected")
            self._install(self._servers, self._weights, self._ejected - {node})

    # -- introspection ----------------------------------------------------------------------

    @property
    def hash_name(self) -> str:
        return self._hash_name

    @property
    def distribution(self) -> str:
        return self._dist

    @property
    def hash_tag(self) -> str | bytes | None:
        return self._tag

    @property
    def auto_eject_hosts(self) -> bool:
        return self._auto_eject

    @property
    def signed_char(self) -> bool:
        return self._signed

    @property
    def ejected(self) -> frozenset[str]:
        return self._ejected

    @property
    def weights(self) -> dict[str, int]:
        return dict(self._weights)

    @property
    def servers(self) -> dict[str, str]:
        """node -> the server line as written."""
        return {s.node: s.line for s in self._servers}

    @property
    def addresses(self) -> dict[str, str]:
        """node -> its address, ``"host:port"`` or the socket path."""
        return {s.node: s.address for s in self._servers}

    @property
    def positions(self) -> npt.NDArray[np.uint64] | None:
        """ketama: the continuum's points as ring positions (point << 32), ascending, which is
        what ``movement`` and ``migration_plan`` compare; None for modula."""
        return self._core.positions if self._dist == "ketama" else None

    @property
    def owners(self) -> npt.NDArray[np.int32] | None:
        """ketama: the node index of each point; None for modula."""
        return self._core.owners if self._dist == "ketama" else None

    @property
    def points(self) -> npt.NDArray[np.uint64] | None:
        """ketama: the continuum's 32-bit points as nutcracker holds them; None for modula."""
        p = self.positions
        return None if p is None else p >> np.uint64(32)

    def ownership(self) -> dict[str, float]:
        """The exact share of the 32-bit key hashes each node receives (sums to 1 over the
        servers in the distribution; an ejected or down one receives 0).  ketama: the
        continuum's arcs; modula: the hashes h with ``h % len(table)`` at each of the node's
        entries, counted exactly."""
        core = self._core
        if self._dist == "ketama":
            return ring_ownership(core)
        shares = dict.fromkeys(self.nodes, 0.0)
        if len(core.down) == len(self.nodes):
            return shares  # every server down: no hash is routed
        if isinstance(core, _Remap):  # servers marked down: the table built without them
            core = core.inner
        table = core.table
        if len(table):
            # 2**32 = q * size + r: entries below r are hit by q + 1 hashes, the others by q
            q, r = divmod(1 << 32, len(table))
            n = len(core.nodes)
            hits = np.bincount(table, minlength=n) * q + np.bincount(table[:r], minlength=n)
            for name, c in zip(core.nodes, hits.tolist(), strict=True):
                shares[name] = c / (1 << 32)
        return shares

    @property
    def table(self) -> npt.NDArray[np.int32] | None:
        """modula: the node index of each entry (hash % len(table) picks one); None for
        ketama."""
        return self._core.table if self._dist == "modula" else None

    # -- state and serialization --------------------------------------------------------------

    def _state(self) -> tuple[Any, ...]:
        return ([s.line for s in self._servers], dict(self._weights), self._hash_name,
                self._dist, self._tag, self._auto_eject, sorted(self._ejected), self._signed)

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> TwemproxyPool:
        lines, weights, hash, dist, tag, auto_eject, ejected, signed = state
        pool = cls(lines, weights, hash=hash, distribution=dist, hash_tag=tag,
                   auto_eject_hosts=auto_eject, signed_char=signed)
        if ejected:
            pool._install(pool._servers, pool._weights, frozenset(ejected))
        return pool

    def _payload(self) -> bytes:
        tag = b"" if self._tag is None else _tag_bytes(self._seed)
        parts = [_format.pack_str(self._hash_name), _format.pack_str(self._dist),
                 struct.pack("<B", len(tag)) + tag,
                 struct.pack("<B", self._auto_eject | (0 if self._signed else 2)),
                 _format.pack_names([s.line for s in self._servers])]
        parts += [struct.pack("<I", self._weights[s.node]) for s in self._servers]
        parts.append(_format.pack_names(sorted(self._ejected)))
        return b"".join(parts)

    @classmethod
    def _from_payload(cls, r: _format.Reader, **options: Any) -> TwemproxyPool:
        hash, dist = _format.read_str(r), _format.read_str(r)
        (tlen,) = r.unpack("B")
        tag = r.take(int(tlen))
        (flags,) = r.unpack("B")
        lines = _format.read_names(r)
        counts = r.unpack(f"{len(lines)}I")
        ejected = _format.read_names(r)
        try:
            nodes = [_parse_server(s).node for s in lines]
            tag_arg: Any = None
            if tag:
                try:
                    tag_arg = tag.decode("utf-8")
                except UnicodeDecodeError:
                    tag_arg = tag
            pool = cls(lines, dict(zip(nodes, (int(c) for c in counts), strict=True)),
                       hash=hash, distribution=dist, hash_tag=tag_arg,
                       auto_eject_hosts=bool(flags & 1), signed_char=not flags & 2)
            if flags > 3:
                raise ValueError("unknown flags")
            if any(e not in pool._weights for e in ejected):
                raise ValueError("an ejected server is not in the pool")
            pool._install(pool._servers, pool._weights, frozenset(ejected))
        except (TypeError, ValueError, KeyError) as e:
            raise _format.FormatError(f"data is damaged ({e})") from None
        return pool

    def _repr_args(self) -> str:
        args = [repr([s.line for s in self._servers]), f"hash={self._hash_name!r}",
                f"distribution={self._dist!r}"]
        if self._tag is not None:
            args.append(f"hash_tag={self._tag!r}")
        if self._auto_eject:
            args.append("auto_eject_hosts=True")
        if not self._signed:
            args.append("signed_char=False")
        return ", ".join(args)


def _tag_bytes(seed: int) -> bytes:
    return bytes([seed & 0xFF, (seed >> 8) & 0xFF])


def _check_unique(servers: Iterable[_Server]) -> None:
    nodes: set[str] = set()
    labels: set[bytes] = set()
    for s in servers:
        if s.node in nodes:
            raise ValueError(f"duplicate server {s.node!r}")
        if s.label in labels:
            # nutcracker: "has servers with same name"
            raise ValueError(f"two servers are placed by the same name {s.label.decode()!r} "
                             "(nutcracker refuses the pool)")
        nodes.add(s.node)
        labels.add(s.label)


def from_config(config: str | bytes | Mapping[str, Any], name: str | None = None, *,
                signed_char: bool = True) -> TwemproxyPool:
    """The pool ``name`` of a nutcracker YAML configuration (its text, or the mapping
    ``yaml.safe_load`` gives); ``name`` may be left out when the file has one pool.

    Reads ``servers``, ``hash``, ``distribution``, ``hash_tag`` and ``auto_eject_hosts``
    (nutcracker's defaults: fnv1a_64, ketama, none, false); the other keys of a pool do not
    change where a key goes.  ``signed_char=False`` for a nutcracker built where C's ``char``
    is unsigned (arm64 Linux; see ``TwemproxyPool``).  Needs PyYAML for text (``pip install
    consistent-hash-ring[yaml]``)."""
    if isinstance(config, (str, bytes)):
        try:
            import yaml  # type: ignore[import-untyped, unused-ignore]
        except ImportError:  # pragma: no cover - pyyaml is installed wherever tests run
            raise ImportError("reading a nutcracker YAML configuration needs PyYAML: "
                              "pip install consistent-hash-ring[yaml]") from None
        try:
            doc = yaml.safe_load(config)
        except yaml.YAMLError as e:
            raise ValueError(f"the configuration is not valid YAML: {e}") from None
    elif isinstance(config, Mapping):
        doc = config
    else:
        raise TypeError(f"config must be YAML text or a mapping, got {type(config).__name__!r}")
    if not isinstance(doc, Mapping) or not doc:
        raise ValueError("a nutcracker configuration is a mapping of pool names to pools")
    pools = [str(k) for k in doc]
    if name is None:
        if len(pools) != 1:
            raise NameNeeded("pools", pools)
        key: Any = next(iter(doc))
    else:
        matches = [k for k in doc if str(k) == name]
        if not matches:
            raise ValueError(f"no pool {name!r} in the configuration (pools: "
                             f"{', '.join(pools)})")
        key = matches[0]
    pool = doc[key]
    where = f"pool {str(key)!r}"
    if not isinstance(pool, Mapping):
        raise ValueError(f"{where} is not a mapping of directives")
    unknown = sorted(str(k) for k in pool if k not in _POOL_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown directive {unknown[0]!r} (nutcracker refuses it)")
    servers = pool.get("servers")
    if not isinstance(servers, list) or not servers:
        raise ValueError(f"{where}: 'servers' must be a non-empty list of "
                         "'host:port:weight [name]' lines")
    for s in servers:
        if not isinstance(s, str):
            raise ValueError(f"{where}: 'servers' entry {s!r} is not a 'host:port:weight "
                             "[name]' string")
    hash = pool.get("hash", "fnv1a_64")
    if hash not in HASHES:
        raise ValueError(f"{where}: 'hash' must be one of {', '.join(HASHES)}, got {hash!r}")
    dist = pool.get("distribution", "ketama")
    if dist not in DISTRIBUTIONS + ("random",):
        raise ValueError(f"{where}: 'distribution' must be ketama, modula or random, got "
                         f"{dist!r}")
    if dist == "random":
        raise ValueError(f"{where}: 'distribution: random' cannot be reproduced (nutcracker "
                         "picks a random server for every request)")
    tag = pool.get("hash_tag")
    if tag is not None and (not isinstance(tag, str) or len(tag.encode("utf-8")) != 2):
        raise ValueError(f"{where}: 'hash_tag' must be a string of two characters, such as "
                         f"\"{{}}\" (quoted in YAML), got {tag!r}")
    auto = pool.get("auto_eject_hosts", False)
    if not isinstance(auto, bool):
        raise ValueError(f"{where}: 'auto_eject_hosts' must be true or false, got {auto!r}")
    try:
        return TwemproxyPool(servers, hash=hash, distribution=dist, hash_tag=tag,
                             auto_eject_hosts=auto, signed_char=signed_char)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{where}: 'servers': {e}") from None

"""Copy the keys a layout change moves, from their old owners to their new ones, before the
clients switch: a resize without a miss.

    from consistent_hash import HashRing
    from consistent_hash.migrate import migrate_memcached

    old = HashRing(["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"])
    new = HashRing([*old.nodes, "10.0.0.4:11211"])
    report = migrate_memcached(old, new)      # copy what moves, then switch the clients
    print(report.copied, report.failed)

``old`` and ``new`` are any two routers of the library (HashRing, KetamaRing, JumpHash, ...)
whose node names are the servers' addresses, as pymemcache's HashClient names them:
``"host:port"``, ``"[::1]:11211"`` or ``"::1:11211"`` for IPv6, or a unix socket path
(``"/run/memcached.sock"``, ``"unix:/run/memcached.sock"``).

What it does, for each server of the old layout that can lose keys (every one, unless the
exact analysis of two rings that hash keys alike, ``analysis.movement``, shows that it loses
nothing, as the other servers in a weight increase):

1. enumerates its keys: memcached with ``lru_crawler metadump hash`` (the hash-table walk,
   which LRU reordering and locking cannot make skip an item as the LRU walk ``metadump
   all`` can; servers without it fall back to ``metadump all``), after
   ``lru_crawler crawl all`` has reclaimed expired items, and checks the listing against the
   server's ``curr_items`` (``SourceReport.complete``; up to three attempts); Redis with
   ``SCAN``, checked against ``DBSIZE``;
2. routes every key through both routers in batch (``old.get_indices``, ``new.get_indices``,
   over the key bytes the client hashes: the stored key without ``key_prefix``); a key moves
   when its old owner is this server and its new owner is another. Keys that do not move are
   never read or written; keys the old layout does not place here (strays) are left alone;
3. copies each moving key to its new owner, in pipelined batches: memcached with the meta
   protocol (``mg <key> v f t c u`` reads value, client flags, remaining TTL and CAS without
   bumping the LRU; ``ms <key> <size> ME F<flags> T<ttl>`` writes in *add* mode), Redis with
   ``DUMP`` + ``PTTL`` and ``RESTORE key ttl payload`` without ``REPLACE`` (every type). The
   TTL written is the remaining TTL less the time since it was read; a key that expires or
   disappears from its source before it is read is counted as ``vanished``.

Policy for concurrent writes: a copy never overwrites. A key the application wrote to the new
owner during the copy (memcached answers ``NS`` to the add, Redis ``BUSYKEY``) keeps the
application's value and is counted as ``skipped``. A key the application rewrites on its *old*
owner while its batch is copied is caught by a check after the batch: a source key changed
since it was read (memcached: its CAS; Redis: its DUMP, which costs a second DUMP of each
copied key) has its copy taken off the target again, only if the target still holds our copy
(memcached: by CAS; Redis: a script comparing DUMPs), so a client misses and refills rather
than reads the older value, and a second pass copies the newer one (``invalidated``). A key
rewritten on its old owner after its batch and before the clients switch keeps the older copy
on the new owner: switch soon after the copy (writes that delete or overwrite cache entries
after the switch are unaffected).

Options: ``dry_run`` (scan and route only: the report of what would move, nothing is read or
written beyond the listings), ``delete`` (remove each moved key from its old owner once its
new owner holds it: run it after the clients have switched, typically as a second pass
``migrate_*(old, new, delete=True)``, which also copies whatever is still missing;
memcached deletes by CAS, Redis only a key whose DUMP is unchanged, so a value changed since
it was read is kept), ``batch_size`` (keys
per pipelined round trip; memcached batches also stop at 8 MiB of items), ``rate`` (keys per
second, overall), ``progress(done, total)`` (called after every batch), ``timeout`` (seconds
per socket operation).

Failures: a server that cannot be reached at the start raises :class:`MigrationError` (one
line, naming the server) before anything is written. A server that fails during the copy
fails its batches: the keys are counted as ``failed`` in their (source, target) pair with the
error, their sources are left intact (a source is only ever written by ``delete``, and only
for keys the target confirmed), and the run goes on with the other pairs.

The report (:class:`MigrationReport`) has, per (source, target), the keys moved, copied,
skipped, vanished, invalidated, failed and deleted and the value bytes copied; per source the
keys scanned, the server's item count and whether the listing was complete; the totals; and
``to_dict()`` for JSON. The command line: ``consistent-hash migrate memcached|redis --from OLD
--to NEW`` (see ``consistent_hash.cli.migrate``).
"""

from __future__ import annotations

import base64
import builtins
import socket
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np

from consistent_hash._validate import is_ip

__all__ = ["Address", "MigrationError", "MigrationReport", "PairReport", "SourceReport",
           "migrate_memcached", "migrate_redis", "parse_address"]

Address: TypeAlias = "tuple[str, int] | str"
"""(host, port), or a unix socket path."""

Progress: TypeAlias = Callable[[int, int], None]

_MAX_ERRORS = 10  # distinct error messages kept per pair
_MAX_FAILED_KEYS = 1000  # failed keys listed per pair (all are counted)
_BATCH_BYTES = 8 << 20  # a memcached batch stops at this many item bytes
_RETRY_SECONDS = 1.0  # a failed server is reconnected at most this often
_MEMCACHED_RELATIVE_TTL_MAX = 30 * 24 * 3600  # above this memcached reads a unix time


class MigrationError(RuntimeError):
    """The migration cannot start: a server is unreachable, a node name is not an address, a
    server cannot list its keys."""


def parse_address(node: str) -> Address:
    """A node name as a server address: ``"host:port"``, ``"[v6]:port"`` or ``"v6:port"``
    (as HashClient names ``("::1", 11211)``) -> (host, port); ``"/path"`` or
    ``"unix:/path"`` -> the socket path. Raises ValueError for anything else."""
    if not isinstance(node, str):
        raise ValueError(f"node name {node!r} is not a string")
    if node.startswith("unix:"):
        node = node[5:]
        if not node:
            raise ValueError("empty unix socket path")
        return node
    if node.startswith("/"):
        return node
    if node.startswith("["):
        host, sep, port = node[1:].partition("]:")
        if not sep:
            raise ValueError(f"node name {node!r} is not an address: expected [host]:port")
    else:
        host, sep, port = node.rpartition(":")
        if not sep or not host:
            raise ValueError(f"node name {node!r} is not an address: expected host:port "
                             "(or a unix socket path)")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"node name {node!r}: bad port {port!r}")
    if (":" in host or node.startswith("[")) and not is_ip(host, v6=True):
        raise ValueError(f"node name {node!r} is not an address: {host!r} is not an IPv6 "
                         "address")
    return host, int(port)


# -- the report ------------------------------------------------------------------------------

@dataclass
class PairReport:
    """What happened to the keys that move from ``source`` to ``target``."""

    source: str
    target: str
    moved: int = 0  # keys whose owner changes from source to target
    copied: int = 0  # written to the target
    skipped: int = 0  # the target already held the key (written meanwhile): left as it was
    vanished: int = 0  # gone from the source (expired, evicted, deleted) before it was read
    invalidated: int = 0  # changed on the source during the copy: the copy was removed again
    failed: int = 0  # not copied because of an error (see errors, failed_keys)
    deleted: int = 0  # removed from the source (delete=True)
    bytes: int = 0  # value bytes copied (memcached: the values; Redis: the DUMP payloads)
    errors: list[str] = field(default_factory=list)
    failed_keys: list[builtins.bytes] = field(default_factory=list)

    def _fail(self, keys: Sequence[builtins.bytes], error: str) -> None:
        self.failed += len(keys)
        room = _MAX_FAILED_KEYS - len(self.failed_keys)
        if room > 0:
            self.failed_keys.extend(keys[:room])
        if error not in self.errors and len(self.errors) < _MAX_ERRORS:
            self.errors.append(error)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "moved": self.moved,
                "copied": self.copied, "skipped": self.skipped, "vanished": self.vanished,
                "invalidated": self.invalidated, "failed": self.failed,
                "deleted": self.deleted, "bytes": self.bytes, "errors": list(self.errors),
                "failed_keys": [_show_key(k) for k in self.failed_keys]}


@dataclass
class SourceReport:
    """The enumeration of one server of the old layout."""

    node: str
    scanned: int = 0  # distinct keys listed
    items: int = 0  # the server's own count (memcached curr_items, Redis DBSIZE)
    complete: bool = True  # the listing covered the server's count
    moved: int = 0  # keys that leave this server
    unchanged: int = 0  # keys that stay (never touched)
    strays: int = 0  # keys the old layout does not place here (left alone)
    foreign: int = 0  # keys without the key prefix (left alone)

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "scanned": self.scanned, "items": self.items,
                "complete": self.complete, "moved": self.moved, "unchanged": self.unchanged,
                "strays": self.strays, "foreign": self.foreign}


@dataclass
class MigrationReport:
    """The outcome of ``migrate_memcached`` / ``migrate_redis``: per source, per (source,
    target), and the totals (properties)."""

    backend: str
    dry_run: bool = False
    delete: bool = False
    sources: dict[str, SourceReport] = field(default_factory=dict)
    pairs: dict[tuple[str, str], PairReport] = field(default_factory=dict)
    seconds: float = 0.0

    def _sum(self, name: str) -> int:
        return sum(getattr(p, name) for p in self.pairs.values())

    @property
    def scanned(self) -> int:
        return sum(s.scanned for s in self.sources.values())

    @property
    def unchanged(self) -> int:
        return sum(s.unchanged for s in self.sources.values())

    @property
    def moved(self) -> int:
        return self._sum("moved")

    @property
    def copied(self) -> int:
        return self._sum("copied")

    @property
    def skipped(self) -> int:
        return self._sum("skipped")

    @property
    def vanished(self) -> int:
        return self._sum("vanished")

    @property
    def invalidated(self) -> int:
        return self._sum("invalidated")

    @property
    def failed(self) -> int:
        return self._sum("failed")

    @property
    def deleted(self) -> int:
        return self._sum("deleted")

    @property
    def bytes(self) -> int:
        return self._sum("bytes")

    @property
    def complete(self) -> bool:
        """Every source's listing covered its item count."""
        return all(s.complete for s in self.sources.values())

    @property
    def ok(self) -> bool:
        """Complete listings and no failed key."""
        return self.complete and self.failed == 0

    def to_dict(self) -> dict[str, Any]:
        totals = {k: getattr(self, k) for k in (
            "scanned", "unchanged", "moved", "copied", "skipped", "vanished", "invalidated",
            "failed", "deleted", "bytes")}
        return {"backend": self.backend, "dry_run": self.dry_run, "delete": self.delete,
                "ok": self.ok, "complete": self.complete, "totals": totals,
                "sources": [s.to_dict() for s in self.sources.values()],
                "pairs": [p.to_dict() for p in self.pairs.values()],
                "seconds": self.seconds}


def _show_key(key: bytes) -> str:
    """A key for a report: its text when it is UTF-8, else ``b64:`` and its base64."""
    try:
        return key.decode("utf-8")
    except UnicodeDecodeError:
        return "b64:" + base64.b64encode(key).decode("ascii")


def _error_text(e: BaseException) -> str:
    text = str(e) or type(e).__name__
    return text.splitlines()[0][:200]


# -- memcached: a small client over the text and meta protocols ------------------------------

class _MemcachedError(Exception):
    """A memcached error line (ERROR, CLIENT_ERROR, SERVER_ERROR)."""


def _connect(address: Address, timeout: float) -> socket.socket:
    if isinstance(address, str):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(address)
        except OSError:
            sock.close()
            raise
        return sock
    sock = socket.create_connection(address, timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _wire_key(key: bytes) -> tuple[bytes, bytes]:
    """The key as the command carries it and the flag that goes with it: the key itself when
    the text protocol allows it, else its base64 with the ``b`` flag."""
    if 0 < len(key) <= 250 and not any(c <= 32 or c == 127 for c in key):
        return key, b""
    encoded = base64.b64encode(key)
    if not key or len(encoded) > 250:
        raise ValueError(f"key {_show_key(key)[:60]!r} cannot be sent to memcached "
                         "(empty, or too long in base64)")
    return encoded, b" b"


class _Memcached:
    """One connection to one memcached server."""

    def __init__(self, address: Address, timeout: float) -> None:
        self.sock = _connect(address, timeout)
        self.rfile = self.sock.makefile("rb", buffering=1 << 16)

    def close(self) -> None:
        try:
            self.rfile.close()
        finally:
            self.sock.close()

    def _line(self) -> bytes:
        line: bytes = self.rfile.readline()
        if not line.endswith(b"\r\n") and not line.endswith(b"\n"):
            raise ConnectionError("memcached closed the connection")
        return line.rstrip(b"\r\n")

    def _exact(self, n: int) -> bytes:
        data: bytes = self.rfile.read(n + 2)
        if len(data) != n + 2:
            raise ConnectionError("memcached closed the connection")
        return data[:n]

    @staticmethod
    def _check(line: bytes) -> bytes:
        if line == b"ERROR" or line.startswith((b"CLIENT_ERROR", b"SERVER_ERROR",
                                                b"ERROR ")):
            raise _MemcachedError(line.decode("utf-8", "replace"))
        return line

    def stats(self) -> dict[str, str]:
        self.sock.sendall(b"stats\r\n")
        out: dict[str, str] = {}
        while True:
            line = self._check(self._line())
            if line == b"END":
                return out
            parts = line.decode("utf-8", "replace").split(" ", 2)
            if len(parts) == 3 and parts[0] == "STAT":
                out[parts[1]] = parts[2]

    def crawler(self, command: bytes, deadline: float) -> bytes:
        """Send an lru_crawler command, retrying while the crawler is busy; the first line."""
        while True:
            self.sock.sendall(b"lru_crawler " + command + b"\r\n")
            line = self._line()
            if not line.startswith(b"BUSY"):
                return line
            if time.monotonic() > deadline:
                raise MigrationError(f"memcached's lru_crawler stayed busy ({line.decode()})")
            time.sleep(0.02)

    def metadump(self, deadline: float) -> tuple[list[bytes], list[int]]:
        """Every key of the server (lru_crawler metadump hash), and each item's size."""
        line = self.crawler(b"metadump hash", deadline)
        if line.startswith((b"ERROR", b"CLIENT_ERROR", b"BADCLASS")):
            # memcached before 1.6.? has no hash walk: the LRU walk (checked by the count)
            line = self.crawler(b"metadump all", deadline)
        keys: list[bytes] = []
        sizes: list[int] = []
        while line != b"END":
            self._check(line)
            if line.startswith(b"key="):
                fields = dict(f.split(b"=", 1) for f in line.split(b" ") if b"=" in f)
                keys.append(urllib.parse.unquote_to_bytes(fields[b"key"]))
                size = fields.get(b"size", b"0")
                sizes.append(int(size) if size.isdigit() else 0)
            line = self._line()
        return keys, sizes

    def get_many(self, keys: Sequence[bytes]
                 ) -> list[tuple[bytes, int, int, int] | None | _MemcachedError]:
        """(value, client flags, remaining TTL (-1: none), CAS) per key, None for a miss."""
        self.sock.sendall(b"".join(b"mg %s v f t c u%s\r\n" % _wire_key(k) for k in keys))
        out: list[tuple[bytes, int, int, int] | None | _MemcachedError] = []
        for _ in keys:
            line = self._line()
            if line == b"EN":
                out.append(None)
                continue
            if not line.startswith(b"VA "):
                try:
                    self._check(line)
                except _MemcachedError as e:
                    out.append(e)
                    continue
                raise ConnectionError(f"unexpected memcached reply {line[:80]!r}")
            tokens = line.split(b" ")
            value = self._exact(int(tokens[1]))
            got = {t[:1]: t[1:] for t in tokens[2:]}
            out.append((value, int(got[b"f"]), int(got[b"t"]), int(got[b"c"])))
        return out

    def cas_many(self, keys: Sequence[bytes]) -> list[int | None]:
        """The current CAS of each key (None: gone)."""
        self.sock.sendall(b"".join(b"mg %s c u%s\r\n" % _wire_key(k) for k in keys))
        out: list[int | None] = []
        for _ in keys:
            line = self._check(self._line())
            out.append(int(line.split(b" ")[1][1:]) if line.startswith(b"HD c") else None)
        return out

    def add_many(self, items: Sequence[tuple[bytes, bytes, int, int]]
                 ) -> list[int | bool | _MemcachedError]:
        """Add (key, value, flags, ttl) items: the new CAS when stored, False when the key
        exists, or the server's error."""
        parts = []
        for key, value, flags, ttl in items:
            wkey, b = _wire_key(key)
            parts.append(b"ms %s %d ME F%d T%d c%s\r\n" % (wkey, len(value), flags, ttl, b))
            parts.append(value)
            parts.append(b"\r\n")
            if sum(map(len, parts)) > 1 << 20:
                self.sock.sendall(b"".join(parts))
                parts = []
        if parts:
            self.sock.sendall(b"".join(parts))
        out: list[int | bool | _MemcachedError] = []
        for _ in items:
            line = self._line()
            if line.startswith(b"HD"):
                tokens = line.split(b" ")
                out.append(int(tokens[1][1:]) if len(tokens) > 1 else True)
            elif line.startswith(b"NS"):
                out.append(False)
            else:
                try:
                    self._check(line)
                    raise ConnectionError(f"unexpected memcached reply {line[:80]!r}")
                except _MemcachedError as e:
                    out.append(e)
        return out

    def delete_many(self, items: Sequence[tuple[bytes, int]]) -> list[bool]:
        """Delete (key, CAS) items, each only if its CAS is unchanged: True when deleted."""
        self.sock.sendall(b"".join(b"md %s C%d%s\r\n" % (_wire_key(k)[0], cas, _wire_key(k)[1])
                                   for k, cas in items))
        return [self._check(self._line()).startswith(b"HD") for _ in items]


# -- the two backends ------------------------------------------------------------------------

class _Aborted(Exception):
    """A batch stopped because a connection failed: ``keys`` were not copied."""

    def __init__(self, role: str, keys: Sequence[bytes], error: BaseException) -> None:
        super().__init__(_error_text(error))
        self.role, self.keys = role, list(keys)


class _Backend:
    """How the driver talks to one kind of server."""

    name = ""

    def connect(self, node: str, address: Address) -> Any:
        raise NotImplementedError

    def close(self, conn: Any) -> None:
        raise NotImplementedError

    def enumerate(self, conn: Any) -> tuple[list[bytes], list[int], int, bool]:
        """(keys, their sizes or [], the server's count, complete)."""
        raise NotImplementedError

    def copy(self, src: Any, dst: Any, keys: Sequence[bytes], pair: PairReport,
             delete: bool) -> None:
        raise NotImplementedError


class _MemcachedBackend(_Backend):
    name = "memcached"

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.clock: dict[int, float] = {}  # id(conn) -> server time - local time

    def connect(self, node: str, address: Address) -> Any:
        conn = _Memcached(address, self.timeout)
        try:
            stats = conn.stats()
            conn.sock.sendall(b"mn\r\n")
            meta = conn._line() == b"MN"
        except BaseException:
            conn.close()
            raise
        if not meta:
            conn.close()
            raise MigrationError(f"memcached server {node} (version {stats.get('version', '?')})"
                                 " has no meta commands: memcached >= 1.6 is needed")
        if "time" in stats:
            self.clock[id(conn)] = float(stats["time"]) - time.time()
        return conn

    def close(self, conn: Any) -> None:
        self.clock.pop(id(conn), None)
        conn.close()

    def enumerate(self, conn: Any) -> tuple[list[bytes], list[int], int, bool]:
        best: tuple[list[bytes], list[int], int, bool] = ([], [], 0, False)
        for _ in range(3):
            # (a crawl of a large server takes a while: the crawler may stay busy)
            deadline = time.monotonic() + max(300.0, 3 * self.timeout)
            # Reclaim expired and flushed items first: curr_items counts them, the dump
            # does not list them.
            conn.crawler(b"crawl all", deadline)
            before = int(conn.stats().get("curr_items", 0))
            keys, sizes = conn.metadump(deadline)
            after = int(conn.stats().get("curr_items", 0))
            unique = dict(zip(keys, sizes, strict=True))
            items = min(before, after)
            complete = len(unique) >= items
            if complete or len(unique) > len(best[0]):
                best = (list(unique), list(unique.values()), items, complete)
            if complete:
                break
        return best

    def _ttl(self, conn: Any, remaining: int, read_at: float) -> int | None:
        """The TTL to write for an item read at read_at with ``remaining`` seconds left
        (-1: none): 0 for none, None when it has expired meanwhile."""
        if remaining < 0:
            return 0
        left = remaining - int(time.monotonic() - read_at)
        if left <= 0:
            return None
        if left > _MEMCACHED_RELATIVE_TTL_MAX:  # memcached takes this as a unix time
            return int(time.time() + self.clock.get(id(conn), 0.0)) + left
        return left

    def copy(self, src: Any, dst: Any, keys: Sequence[bytes], pair: PairReport,
             delete: bool) -> None:
        sendable = []
        for key in keys:
            try:
                _wire_key(key)
                sendable.append(key)
            except ValueError as e:
                pair._fail([key], str(e))
        keys = sendable
        read_at = time.monotonic()
        try:
            got = src.get_many(keys)
        except (OSError, _MemcachedError) as e:
            raise _Aborted("source", keys, e) from e
        items: list[tuple[bytes, bytes, int, int]] = []
        cas: list[int] = []
        for key, g in zip(keys, got, strict=True):
            if g is None:
                pair.vanished += 1
            elif isinstance(g, _MemcachedError):
                pair._fail([key], f"source: {g}")
            else:
                value, flags, remaining, c = g
                ttl = self._ttl(dst, remaining, read_at)
                if ttl is None:
                    pair.vanished += 1
                else:
                    items.append((key, value, flags, ttl))
                    cas.append(c)
        if not items:
            return
        try:
            results = dst.add_many(items)
        except (OSError, _MemcachedError) as e:
            raise _Aborted("target", [k for k, *_ in items], e) from e
        stored: list[tuple[bytes, int, int]] = []  # key, source CAS, target CAS
        present: list[tuple[bytes, int]] = []  # key, source CAS
        for (key, value, _, _), c, r in zip(items, cas, results, strict=True):
            if isinstance(r, _MemcachedError):
                pair._fail([key], f"target: {r}")
            elif r is False:
                pair.skipped += 1
                present.append((key, c))
            else:
                pair.copied += 1
                pair.bytes += len(value)
                stored.append((key, c, int(r)))
        # A source item rewritten since it was read: take our (older) copy back off the
        # target, if it is still ours, so the client misses rather than reads the old value.
        if stored:
            try:
                now = src.cas_many([k for k, _, _ in stored])
            except (OSError, _MemcachedError) as e:
                raise _Aborted("source", [], e) from e
            changed = [(k, t) for (k, c, t), n in zip(stored, now, strict=True) if n != c]
            if changed:
                try:
                    removed = dst.delete_many(changed)
                except (OSError, _MemcachedError) as e:
                    raise _Aborted("target", [], e) from e
                n_removed = sum(removed)
                pair.invalidated += n_removed
                pair.copied -= n_removed
                gone = {k for (k, _), r in zip(changed, removed, strict=True) if r}
                stored = [s for s in stored if s[0] not in gone]
        if delete:
            victims = [(k, c) for k, c, _ in stored] + present
            if victims:
                try:
                    pair.deleted += sum(src.delete_many(victims))
                except (OSError, _MemcachedError) as e:
                    raise _Aborted("source", [], e) from e


# Delete a key only if it still holds the value that was copied (its DUMP is unchanged): a
# value the application rewrote on the old owner since it was read is kept.
_DELETE_IF_UNCHANGED = """
if redis.call('DUMP', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class _RedisBackend(_Backend):
    name = "redis"

    def __init__(self, timeout: float, db: int, match: str | None, password: str | None
                 ) -> None:
        self.timeout, self.db, self.match, self.password = timeout, db, match, password

    def connect(self, node: str, address: Address) -> Any:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # No automatic retry: a pipeline of RESTOREs run twice would count its keys as
        # skipped; a failed batch is counted as failed and the server reconnected later.
        options: dict[str, Any] = {"db": self.db, "password": self.password,
                                   "socket_timeout": self.timeout,
                                   "socket_connect_timeout": self.timeout,
                                   "retry": Retry(NoBackoff(), 0)}
        if isinstance(address, str):
            conn = redis.Redis(unix_socket_path=address, **options)
        else:
            conn = redis.Redis(host=address[0], port=address[1], **options)
        try:
            conn.ping()
        except BaseException:
            conn.close()
            raise
        return conn

    def close(self, conn: Any) -> None:
        conn.close()

    def enumerate(self, conn: Any) -> tuple[list[bytes], list[int], int, bool]:
        best: tuple[list[bytes], list[int], int, bool] = ([], [], 0, False)
        for _ in range(3):
            before = int(conn.dbsize())
            keys = dict.fromkeys(conn.scan_iter(match=self.match, count=1000))
            after = int(conn.dbsize())
            # SCAN skips (and reclaims) logically expired keys that DBSIZE still counted.
            complete = self.match is not None or len(keys) >= min(before, after)
            if complete or len(keys) > len(best[0]):
                best = (list(keys), [], min(before, after), complete)
            if complete:
                break
        return best

    def copy(self, src: Any, dst: Any, keys: Sequence[bytes], pair: PairReport,
             delete: bool) -> None:
        import redis

        read_at = time.monotonic()
        pipe = src.pipeline(transaction=False)
        for k in keys:
            pipe.pttl(k)
            pipe.dump(k)
        try:
            got = pipe.execute(raise_on_error=False)
        except (OSError, redis.RedisError) as e:
            raise _Aborted("source", keys, e) from e
        items: list[tuple[bytes, int, bytes]] = []
        for i, key in enumerate(keys):
            pttl, payload = got[2 * i], got[2 * i + 1]
            if isinstance(pttl, Exception) or isinstance(payload, Exception):
                err = pttl if isinstance(pttl, Exception) else payload
                pair._fail([key], f"source: {_error_text(err)}")
            elif payload is None or pttl == -2:
                pair.vanished += 1
            else:
                ttl = 0
                if pttl >= 0:
                    ttl = int(pttl) - int(1000 * (time.monotonic() - read_at))
                    if ttl <= 0:
                        pair.vanished += 1
                        continue
                items.append((key, ttl, payload))
        if not items:
            return
        pipe = dst.pipeline(transaction=False)
        for key, ttl, payload in items:
            pipe.restore(key, ttl, payload)  # no REPLACE: never overwrite
            pipe.dump(key)  # our copy as the target serializes it (its encoding may differ)
        try:
            results = pipe.execute(raise_on_error=False)
        except (OSError, redis.RedisError) as e:
            raise _Aborted("target", [k for k, _, _ in items], e) from e
        done: list[tuple[bytes, bytes]] = []
        stored: list[tuple[bytes, bytes, Any]] = []  # key, payload read, the target's DUMP
        for i, (key, _, payload) in enumerate(items):
            r, mine = results[2 * i], results[2 * i + 1]
            if isinstance(r, Exception):
                if "BUSYKEY" in str(r):
                    pair.skipped += 1
                    done.append((key, payload))
                else:
                    pair._fail([key], f"target: {_error_text(r)}")
            else:
                pair.copied += 1
                pair.bytes += len(payload)
                stored.append((key, payload, mine))
        # A source key rewritten since it was read: take our (older) copy back off the target
        # if it still holds it, so a second pass after the switch copies the newer value.
        if stored:
            pipe = src.pipeline(transaction=False)
            for key, _, _ in stored:
                pipe.dump(key)
            try:
                now = pipe.execute(raise_on_error=False)
            except (OSError, redis.RedisError) as e:
                raise _Aborted("source", [], e) from e
            changed = [(k, mine) for (k, payload, mine), n in zip(stored, now, strict=True)
                       if n != payload and isinstance(mine, bytes)]
            gone: set[bytes] = set()
            if changed:
                pipe = dst.pipeline(transaction=False)
                for key, mine in changed:
                    pipe.eval(_DELETE_IF_UNCHANGED, 1, key, mine)
                try:
                    removed = pipe.execute(raise_on_error=False)
                except (OSError, redis.RedisError) as e:
                    raise _Aborted("target", [], e) from e
                gone = {k for (k, _), r in zip(changed, removed, strict=True) if r == 1}
                pair.invalidated += len(gone)
                pair.copied -= len(gone)
            done += [(k, payload) for k, payload, _ in stored if k not in gone]
        if delete and done:
            pipe = src.pipeline(transaction=False)
            for key, payload in done:
                pipe.eval(_DELETE_IF_UNCHANGED, 1, key, payload)
            try:
                pair.deleted += sum(int(n) for n in pipe.execute(raise_on_error=False)
                                    if isinstance(n, int))
            except (OSError, redis.RedisError) as e:
                raise _Aborted("source", [], e) from e


# -- the driver ------------------------------------------------------------------------------

def _addresses(router: Any, which: str) -> dict[str, Address]:
    try:
        nodes = list(router.nodes)
    except AttributeError:
        raise TypeError(f"{which} is not a router (it has no nodes)") from None
    out: dict[str, Address] = {}
    for n in nodes:
        try:
            out[n] = parse_address(n)
        except ValueError as e:
            raise ValueError(f"{which} layout: {e}") from None
    return out


def _losing(old: Any, new: Any) -> set[str]:
    """The old nodes that can lose keys: all of them, unless the exact analysis of two rings
    that hash keys alike shows that some lose nothing (a weight increase, say)."""
    from consistent_hash.analysis import _exactly_comparable, movement

    nodes = set(old.nodes)
    if not (len(old.nodes) and len(new.nodes) and _exactly_comparable(old, new)):
        return nodes
    mv = movement(old, new)
    return {a for (a, _), share in mv.flows.items() if share > 0} & nodes


def _route_bytes(keys: list[bytes], prefix: bytes) -> tuple[list[bytes], np.ndarray]:
    """The part of each key the client hashes, and the mask of keys that carry the prefix."""
    if not prefix:
        return keys, np.ones(len(keys), dtype=bool)
    mask = np.fromiter((k.startswith(prefix) for k in keys), dtype=bool, count=len(keys))
    return [k[len(prefix):] for k, m in zip(keys, mask, strict=True) if m], mask


def _batches(keys: list[bytes], sizes: list[int], batch_size: int) -> Iterator[list[bytes]]:
    start, total = 0, 0
    for i in range(len(keys)):
        total += sizes[i] if sizes else 0
        if i + 1 - start >= batch_size or total >= _BATCH_BYTES:
            yield keys[start:i + 1]
            start, total = i + 1, 0
    if start < len(keys):
        yield keys[start:]


def _migrate(backend: _Backend, old: Any, new: Any, *, dry_run: bool, delete: bool,
             batch_size: int, rate: float | None, progress: Progress | None,
             key_prefix: bytes = b"") -> MigrationReport:
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if rate is not None and not rate > 0:
        raise ValueError(f"rate must be > 0 keys per second, got {rate}")
    t0 = time.perf_counter()
    old_addr, new_addr = _addresses(old, "old"), _addresses(new, "new")
    old_nodes, new_nodes = tuple(old.nodes), tuple(new.nodes)
    report = MigrationReport(backend.name, dry_run=dry_run, delete=delete)
    conns: dict[str, Any] = {}

    def connect(node: str, address: Address) -> Any:
        try:
            return backend.connect(node, address)
        except MigrationError:
            raise
        except Exception as e:
            raise MigrationError(f"cannot reach {backend.name} server {node}: "
                                 f"{_error_text(e)}") from None

    losing = _losing(old, new)
    try:
        # 1. every old server that can lose keys: list its keys, route them through both
        # layouts.
        moves: dict[tuple[str, str], tuple[list[bytes], list[int]]] = {}
        for node in old_nodes:
            if node in losing:
                conns[node] = connect(node, old_addr[node])
        for si, node in enumerate(old_nodes):
            if node not in losing:
                continue
            try:
                keys, sizes, items, complete = backend.enumerate(conns[node])
            except (OSError, _MemcachedError) as e:
                raise MigrationError(f"cannot list the keys of {backend.name} server {node}: "
                                     f"{_error_text(e)}") from None
            except Exception as e:
                if type(e).__module__.startswith("redis"):
                    raise MigrationError(f"cannot list the keys of {backend.name} server "
                                         f"{node}: {_error_text(e)}") from None
                raise
            src = report.sources[node] = SourceReport(node, len(keys), items, complete)
            route, mask = _route_bytes(keys, key_prefix)
            src.foreign = len(keys) - len(route)
            if not route:
                continue
            was = old.get_indices(route)
            now = np.asarray(new.get_indices(route))
            names = np.asarray(new_nodes, dtype=object)
            here = was == si
            src.strays = int((~here).sum())
            now_names = names[now]
            leaving = here & (now_names != node)
            src.moved = int(leaving.sum())
            src.unchanged = int(here.sum()) - src.moved
            listed = [k for k, m in zip(keys, mask, strict=True) if m]
            sized = [s for s, m in zip(sizes, mask, strict=True) if m] if sizes else []
            for j in np.flatnonzero(leaving):
                target = now_names[j]
                bucket = moves.setdefault((node, target), ([], []))
                bucket[0].append(listed[j])
                if sized:
                    bucket[1].append(sized[j])
        for (s, t), (ks, _) in sorted(moves.items()):
            report.pairs[(s, t)] = PairReport(s, t, moved=len(ks))
        # 2. every server that receives keys must be reachable before anything is written.
        for node in sorted({t for _, t in moves}):
            if node not in conns:
                conns[node] = connect(node, new_addr[node])
        total = sum(len(ks) for ks, _ in moves.values())
        if dry_run or total == 0:
            if progress:
                progress(total, total)
            return report
        # 3. copy, pair by pair, batch by batch.
        done = 0
        start = time.monotonic()
        down: dict[str, float] = {}  # node -> when its connection last failed
        for (s, t), (ks, sizes) in sorted(moves.items()):
            pair = report.pairs[(s, t)]
            for batch in _batches(ks, sizes, batch_size):
                if rate is not None:
                    wait = start + done / rate - time.monotonic()
                    if wait > 0:
                        time.sleep(wait)
                failed = [n for n in (s, t) if conns.get(n) is None]
                for n in failed:
                    if time.monotonic() - down.get(n, 0.0) >= _RETRY_SECONDS:
                        try:
                            addr = old_addr[n] if n in old_addr else new_addr[n]
                            conns[n] = backend.connect(n, addr)
                            down.pop(n, None)
                        except Exception:
                            down[n] = time.monotonic()
                if conns.get(s) is None or conns.get(t) is None:
                    n = s if conns.get(s) is None else t
                    pair._fail(batch, f"{'source' if n == s else 'target'} {n} is "
                               "unreachable")
                else:
                    try:
                        backend.copy(conns[s], conns[t], batch, pair, delete)
                    except _Aborted as e:
                        n = s if e.role == "source" else t
                        pair._fail(e.keys, f"{e.role} {n}: {e}")
                        # its connection is in an unknown state: reconnect later
                        try:
                            backend.close(conns[n])
                        except Exception:
                            pass
                        conns[n] = None
                        down[n] = time.monotonic()
                done += len(batch)
                if progress:
                    progress(done, total)
        return report
    finally:
        for c in conns.values():
            if c is not None:
                try:
                    backend.close(c)
                except Exception:
                    pass
        report.seconds = time.perf_counter() - t0


def migrate_memcached(old: Any, new: Any, *, dry_run: bool = False, delete: bool = False,
                      batch_size: int = 500, rate: float | None = None,
                      progress: Progress | None = None, key_prefix: bytes | str = b"",
                      timeout: float = 5.0) -> MigrationReport:
    """Copy every key whose owner changes from layout ``old`` to layout ``new`` (two routers
    whose node names are the memcached servers' addresses) from its old owner to its new one,
    with its value, client flags and remaining TTL, in add mode (an existing key on the new
    owner is never overwritten). ``key_prefix``: the prefix a pymemcache client with
    ``key_prefix=`` adds to the keys it stores but does not hash. See the module docstring for
    the options and the report."""
    prefix = key_prefix.encode("utf-8") if isinstance(key_prefix, str) else bytes(key_prefix)
    return _migrate(_MemcachedBackend(timeout), old, new, dry_run=dry_run, delete=delete,
                    batch_size=batch_size, rate=rate, progress=progress, key_prefix=prefix)


def migrate_redis(old: Any, new: Any, *, dry_run: bool = False, delete: bool = False,
                  batch_size: int = 500, rate: float | None = None,
                  progress: Progress | None = None, db: int = 0, match: str | None = None,
                  password: str | None = None, timeout: float = 5.0) -> MigrationReport:
    """Copy every key whose owner changes from layout ``old`` to layout ``new`` (two routers
    whose node names are standalone Redis servers' addresses) from its old owner to its new
    one: ``DUMP`` and ``RESTORE`` with the remaining ``PTTL``, any type, without ``REPLACE``
    (a key the new owner already holds keeps its value: ``skipped``). ``db``: the database
    number; ``match``: a ``SCAN MATCH`` pattern (only those keys are considered; the listing
    is then not checked against ``DBSIZE``). See the module docstring for the rest."""
    return _migrate(_RedisBackend(timeout, db, match, password), old, new, dry_run=dry_run,
                    delete=delete, batch_size=batch_size, rate=rate, progress=progress)

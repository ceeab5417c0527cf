"""The two backends the driver talks to: memcached (our client) and Redis (redis-py)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from consistent_hash._address import Address
from consistent_hash.integrations.migrate._memcached import _Memcached, _MemcachedError, _wire_key
from consistent_hash.integrations.migrate._report import (
    _MEMCACHED_RELATIVE_TTL_MAX,
    MigrationError,
    PairReport,
    _error_text,
)


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

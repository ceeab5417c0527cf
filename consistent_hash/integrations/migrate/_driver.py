"""The driver: which servers lose keys, route them through both layouts, copy in batches."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from consistent_hash._address import Address, parse_address
from consistent_hash.integrations.migrate._backends import (
    _Aborted,
    _Backend,
    _MemcachedBackend,
    _RedisBackend,
)
from consistent_hash.integrations.migrate._memcached import _MemcachedError
from consistent_hash.integrations.migrate._report import (
    _BATCH_BYTES,
    _RETRY_SECONDS,
    MigrationError,
    MigrationReport,
    PairReport,
    Progress,
    SourceReport,
    _error_text,
)


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

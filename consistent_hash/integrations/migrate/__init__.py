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


from consistent_hash._address import Address, parse_address
from consistent_hash.integrations.migrate._driver import migrate_memcached, migrate_redis
from consistent_hash.integrations.migrate._memcached import _Memcached as _Memcached  # for tests
from consistent_hash.integrations.migrate._report import (
    MigrationError,
    MigrationReport,
    PairReport,
    SourceReport,
)

__all__ = ["Address", "MigrationError", "MigrationReport", "PairReport", "SourceReport",
           "migrate_memcached", "migrate_redis", "parse_address"]

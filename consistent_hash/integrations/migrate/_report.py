"""The migration's vocabulary: addresses, its limits, its error and its report."""

from __future__ import annotations

import base64
import builtins
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

Progress: TypeAlias = Callable[[int, int], None]

_MAX_ERRORS = 10  # distinct error messages kept per pair
_MAX_FAILED_KEYS = 1000  # failed keys listed per pair (all are counted)
_BATCH_BYTES = 8 << 20  # a memcached batch stops at this many item bytes
_RETRY_SECONDS = 1.0  # a failed server is reconnected at most this often
_MEMCACHED_RELATIVE_TTL_MAX = 30 * 24 * 3600  # above this memcached reads a unix time


class MigrationError(RuntimeError):
    """The migration cannot start: a server is unreachable, a node name is not an address, a
    server cannot list its keys."""


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

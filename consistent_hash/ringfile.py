"""Ring files: a small versioned JSON document that lets the CLI, services and other processes
agree on one layout.

    {
      "format": "consistent_hash.ring",
      "version": 1,
      "kind": "HashRing",
      "hash": "xxh3", "seed": 0, "vnodes": 160,
      "nodes": {"cache-a": 1.0, "cache-b": 2.0},
      "fingerprint": "<sha256 hex of the layout, HashRing.fingerprint()>"
    }

A ring with nodes marked down (``mark_down``) is written as version 2, with a ``"down"`` list
of their names (sorted) before the fingerprint, which then covers them too; a ring with nothing
down is version 1, exactly as before.

Loading checks every field and rebuilds the ring, then requires the rebuilt ring's fingerprint
to equal the one in the file, so a hand-edited or damaged file is refused rather than routing
keys somewhere else. Sizes are checked before anything large is built.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

from consistent_hash.ring import DEFAULT_MAX_LOAD_VNODES, HashRing, check_budget

__all__ = ["FORMAT", "VERSION", "dumps", "load", "loads", "save"]

FORMAT = "consistent_hash.ring"
VERSION = 2  # the newest version written (only when nodes are marked down); VERSIONS are read
VERSIONS = (1, 2)
MAX_FILE_BYTES = 64 << 20
MAX_NODES = 1_000_000


def to_dict(ring: HashRing) -> dict[str, Any]:
    if not isinstance(ring, HashRing):
        raise TypeError(f"ring files hold HashRing layouts, got {type(ring).__name__!r}")
    down = sorted(ring.down)
    doc: dict[str, Any] = {"format": FORMAT, "version": 2 if down else 1, "kind": "HashRing",
                           "hash": ring.hash_name, "seed": ring.seed, "vnodes": ring.vnodes,
                           "nodes": ring.weights}
    if down:
        doc["down"] = down
    doc["fingerprint"] = ring.fingerprint()
    return doc


def dumps(ring: HashRing) -> str:
    """The ring as a ring-file JSON document."""
    return json.dumps(to_dict(ring), indent=1, ensure_ascii=False) + "\n"


def save(ring: HashRing, path: str | os.PathLike[str]) -> None:
    """Write a ring file (atomically: a temporary file renamed into place)."""
    text = dumps(ring)
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):  # a failed write or rename leaves nothing behind
            os.unlink(tmp)
        raise


def from_dict(doc: Any) -> HashRing:
    """Rebuild and verify a ring from a parsed ring-file document."""
    if not isinstance(doc, dict):
        raise ValueError("not a ring file: the document is not a JSON object")
    if doc.get("format") != FORMAT:
        raise ValueError(f"not a ring file: format is {doc.get('format')!r}, expected {FORMAT!r}")
    version = doc.get("version")
    if version not in VERSIONS or isinstance(version, bool):
        raise ValueError(f"unsupported ring file version {version!r} "
                         f"(this library reads versions {', '.join(map(str, VERSIONS))})")
    down = doc.get("down", [])
    if version == 1 and "down" in doc:
        raise ValueError("ring file: 'down' needs version 2")
    if version == 2 and (not isinstance(down, list) or not down
                         or not all(isinstance(n, str) for n in down)):
        raise ValueError("ring file: version 2 needs 'down', a non-empty list of node names")
    if doc.get("kind") != "HashRing":
        raise ValueError(f"unsupported ring kind {doc.get('kind')!r}")
    nodes = doc.get("nodes")
    if not isinstance(nodes, dict):
        raise ValueError("ring file: 'nodes' must be an object mapping node -> weight")
    if len(nodes) > MAX_NODES:
        raise ValueError(f"ring file: {len(nodes)} nodes exceeds the limit of {MAX_NODES}")
    for key in ("hash", "seed", "vnodes", "fingerprint"):
        if key not in doc:
            raise ValueError(f"ring file: missing field {key!r}")
    if not isinstance(doc["hash"], str):
        raise ValueError("ring file: 'hash' must be a string")
    check_budget(nodes, doc["vnodes"], DEFAULT_MAX_LOAD_VNODES)
    try:
        ring = HashRing(nodes, vnodes=doc["vnodes"], hash=doc["hash"], seed=doc["seed"])
    except (TypeError, ValueError) as e:
        raise ValueError(f"ring file: {e}") from None
    for node in down:
        if node not in ring:
            raise ValueError(f"ring file: down node {node!r} is not in 'nodes'")
        ring.mark_down(node)
    if ring.fingerprint() != doc["fingerprint"]:
        raise ValueError("ring file: the fingerprint does not match the layout it describes "
                         "(edited or damaged file)")
    return ring


def loads(text: str | bytes) -> HashRing:
    """Parse and verify a ring-file document."""
    if len(text) > MAX_FILE_BYTES:
        raise ValueError(f"ring file larger than {MAX_FILE_BYTES} bytes")
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise ValueError(f"not a ring file: invalid JSON ({e})") from None
    return from_dict(doc)


def load(path: str | os.PathLike[str]) -> HashRing:
    """Read and verify a ring file."""
    size = os.path.getsize(path)
    if size > MAX_FILE_BYTES:
        raise ValueError(f"{os.fspath(path)}: larger than {MAX_FILE_BYTES} bytes")
    with open(path, "rb") as f:
        return loads(f.read())

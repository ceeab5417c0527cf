"""A ring defined outside the library, on the public RingRouter base: fastring's placement.

fastring 0.2.1 (the Rust ring, PyPI ``fastring``) places node ``name``'s i-th point at
``xxh3_64(utf8(name) + b"#" + u32_le(i))`` and hashes a key with ``xxh3_64(key)``.  This
module is what a user writes; tests/test_ringrouter.py checks it against a model built on the
xxhash package and bisect, and tests/routers.py puts it in the conformance registry.
"""

from __future__ import annotations

import struct
from typing import Any

from consistent_hash import RingRouter


class FastringRing(RingRouter):
    """fastring's points: ``round(160 * weight)`` labels ``name#<u32 LE i>``."""

    def __init__(self, nodes: Any = (), *, vnodes: int = 160, **kw: Any) -> None:
        self.vnodes = vnodes
        super().__init__(nodes, **kw)

    def points(self, node: str, weight: float) -> Any:
        name = node.encode()
        count = max(1, round(self.vnodes * weight))
        return self.hash_labels([name + b"#" + struct.pack("<I", i) for i in range(count)])

    def _options(self) -> dict[str, Any]:
        return {"vnodes": self.vnodes}

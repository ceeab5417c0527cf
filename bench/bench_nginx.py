"""Time NginxUpstream batch lookups (consistent and plain hash, with and without servers
down) against KetamaRing on the same keys.

    CONSISTENT_HASH_THREADS=1 python bench/bench_nginx.py [--keys N] [--runs N]

Prints ns per key of ``get_indices`` on N str keys (best of runs), 25 servers.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from consistent_hash import KetamaRing
from consistent_hash.compat.nginx import NginxUpstream


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    keys = np.char.add("user:", np.arange(a.keys).astype("U"))
    servers = [f"10.0.0.{i}:11211" for i in range(1, 26)]
    cases = [
        ("nginx hash consistent", NginxUpstream(servers)),
        ("nginx hash consistent, 3 down", NginxUpstream(servers, down=servers[:3])),
        ("nginx hash (plain)", NginxUpstream(servers, consistent=False)),
        ("nginx hash (plain), 3 down", NginxUpstream(servers, consistent=False,
                                                     down=servers[:3])),
        ("KetamaRing ketama_weighted (MD5)", KetamaRing(servers, mode="ketama_weighted")),
    ]
    print(f"| router | ns/key ({a.keys:,} str keys, 25 servers) |\n|---|---|")
    for label, r in cases:
        r.get_indices(keys[:1000])
        best = float("inf")
        for _ in range(a.runs):
            t = time.perf_counter()
            r.get_indices(keys)
            best = min(best, time.perf_counter() - t)
        print(f"| {label} | {best / a.keys * 1e9:.1f} |")


if __name__ == "__main__":
    main()

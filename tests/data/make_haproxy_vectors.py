"""Generate tests/data/haproxy_vectors.json: where a live HAProxy sends keys.

Every expected server comes from a real haproxy (the installed /usr/sbin/haproxy, 2.6), never
from consistent_hash: the backends of tests/support/live_haproxy.py (3, 5 and 25 servers, every hash
function with and without avalanche, weights, a server removed with and without explicit ids,
mixed ids, a disabled server, backups, a defaults section) behind ``balance hdr(X-Key)``, and
five behind ``balance hdr(X-Key) use_domain_only``, ``balance uri`` (plain, ``whole len 24``,
``depth 2``) and ``balance url_param id``: each key sent as an X-Key header (another header
after it) or as the request target, the answering server's name read back.  Keys HAProxy
does not hash (an empty header value, no ``id`` parameter: it then balances round robin) are
left out, decided by the tests' own model of the extraction (tests/support/model_haproxy.py).

    python tests/data/make_haproxy_vectors.py      # needs haproxy installed

The stored config has the ports of a fixed layout (HAProxy's placement ignores addresses), so
regenerating gives an identical file while HAProxy behaves the same.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "support"))

import live_haproxy  # noqa: E402
import model_haproxy  # noqa: E402

KEYS_PER_BACKEND = 300
OUT = HERE / "haproxy_vectors.json"


def main() -> None:
    binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
    version = subprocess.run([binary, "-v"], capture_output=True, text=True,
                             check=True).stdout.splitlines()[0]
    cfgs = live_haproxy.configs()
    names = live_haproxy.server_names(cfgs)
    fixed_fe = {c["name"]: 30000 + i for i, c in enumerate(cfgs)}
    fixed_srv = {n: 31000 + i for i, n in enumerate(names)}
    backends = {}
    with live_haproxy.running(binary, cfgs) as live, ThreadPoolExecutor(4) as pool:
        for c in live_haproxy.keyed_configs():
            make = live_haproxy.key_source(c)
            keys = [k for k in make("vectors:" + c["name"], KEYS_PER_BACKEND)
                    if model_haproxy.hashed_bytes(c, k) is not None]
            got = live.ask_many(c["name"], keys, pool)
            if any(g is None for g in got):
                raise SystemExit(f"{c['name']}: HAProxy refused a key")
            backends["be_" + c["name"]] = {"via": c.get("via") or {"kind": "hdr"},
                                           "keys_hex": [k.hex() for k in keys],
                                           "servers": got}
    data = {"haproxy": version,
            "generator": "tests/data/make_haproxy_vectors.py",
            "header": "X-Key",
            "config": live_haproxy.config_text(cfgs, fixed_fe, fixed_srv),
            "backends": backends}
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=True) + "\n")
    print(f"wrote {OUT} ({sum(len(b['servers']) for b in backends.values())} keys)")


if __name__ == "__main__":
    main()

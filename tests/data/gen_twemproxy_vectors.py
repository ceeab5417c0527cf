"""Write tests/data/twemproxy_vectors.json from a live nutcracker in front of live memcached.

    python tests/data/gen_twemproxy_vectors.py     (from the repository root)

Runs the configurations of tests/_twemproxy_live.py (every hash, ketama and modula, 3, 5 and
25 servers, weights, a server removed, named servers, hash_tag, the defaults, a server
ejected by auto_eject_hosts) through one real nutcracker process, stores every key through
its pool, and records which memcached server holds it, found by listing each server's keys.
Nothing here imports consistent_hash's routers: the vectors are nutcracker's answers.  The
memcached ports are picked free at each run and recorded with the servers (they are part of
the point labels), so a new run writes different, equally valid vectors.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent), str(HERE.parent)]

import _twemproxy_live as live  # noqa: E402

KEYS_PER_CONFIG = 60  # spread over each pool's sorted keys, so every kind is in


def pick(n: int) -> range:
    return range(0, n, max(1, n // KEYS_PER_CONFIG))


def main() -> None:
    version = subprocess.run(["nutcracker", "--version"], capture_output=True, text=True)
    text = (version.stdout + version.stderr).strip().splitlines()[0]  # This is nutcracker-X
    cfgs = live.configs()
    keys, landed, _ = live.run(cfgs, seed=2026)
    out = []
    for c in cfgs:
        args = live.pool_args(c)
        out.append({"id": c.id, "servers": c.lines, "hash": args["hash"],
                    "distribution": args["distribution"], "hash_tag": c.hash_tag,
                    "ejected": [j for j, (i, _, _) in enumerate(c.servers) if i < 0],
                    "keys": [keys[c.id][j].hex() for j in pick(len(keys[c.id]))],
                    "server": [landed[c.id][j] for j in pick(len(keys[c.id]))]})
    doc = {"nutcracker": text.rsplit("-", 1)[-1] if "-" in text else text,
           "generator": "tests/data/gen_twemproxy_vectors.py",
           "note": "server: the index into servers of the memcached server holding each key "
                   "(keys hex-encoded)",
           "configs": out}
    path = HERE / "twemproxy_vectors.json"
    body = ",\n".join(json.dumps(c, separators=(",", ":")) for c in out)
    head = json.dumps({k: v for k, v in doc.items() if k != "configs"}, indent=1)[:-2]
    path.write_text(head + ',\n "configs": [\n' + body + "\n]}\n")
    print(f"wrote {path} ({len(out)} configurations, {sum(len(c['keys']) for c in out)} keys)",
          file=sys.stderr)


if __name__ == "__main__":
    os.chdir(HERE.parent.parent)
    main()

"""Write tests/data/twemproxy_vectors.json from a live nutcracker in front of live memcached.

    python tests/data/make_twemproxy_vectors.py     (from the repository root)

Runs the configurations of tests/support/live_twemproxy.py (every hash, ketama and modula, 3, 5 and
25 servers, weights, a server removed, named servers, hash_tag, the defaults, a server
ejected by auto_eject_hosts) through one real nutcracker process, stores every key through
its pool, and records which memcached server holds it, found by listing each server's keys.
With ``--nutcracker PATH --unsigned-char`` it runs another nutcracker build instead and writes
tests/data/twemproxy_vectors_unsigned_char.json: the pools whose hash reads key bytes through a
C ``char`` (one_at_a_time, the FNVs, hsieh), keys with bytes >= 0x80 only.  That build is
nutcracker 0.5.0's own source compiled with ``-funsigned-char``, which gives the ``char`` of
arm64 Linux on this x86-64 machine::

    git -C twemproxy archive v0.5.0 src | tar x        # github.com/twitter/twemproxy
    printf '#define HAVE_EPOLL 1\n#define HAVE_STATS 1\n#define HAVE_LITTLE_ENDIAN 1\n'\
           '#define NC_VERSION_STRING "0.5.0-unsigned-char"\n' > src/config.h
    rm src/test_all.c
    gcc -O2 -funsigned-char -D_GNU_SOURCE -DHAVE_CONFIG_H -Isrc -Isrc/hashkit -Isrc/proto \
        -Isrc/event -o nutcracker-uchar src/*.c src/hashkit/*.c src/proto/*.c \
        src/event/nc_epoll.c -lyaml -lm

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
sys.path[:0] = [str(HERE.parent.parent), str(HERE.parent / "support")]

import live_twemproxy as live  # noqa: E402

KEYS_PER_CONFIG = 60  # spread over each pool's sorted keys, so every kind is in


def pick(n: int) -> range:
    return range(0, n, max(1, n // KEYS_PER_CONFIG))


SIGNED = ("one_at_a_time", "fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32", "hsieh")


def main() -> None:
    args = sys.argv[1:]
    binary = "nutcracker"
    unsigned = "--unsigned-char" in args
    if "--nutcracker" in args:
        binary = args[args.index("--nutcracker") + 1]
    version = subprocess.run([binary, "--version"], capture_output=True, text=True)
    text = (version.stdout + version.stderr).strip().splitlines()[0]  # This is nutcracker-X
    cfgs = live.configs()
    if unsigned:
        cfgs = [c for c in cfgs if c.hash in SIGNED and c.id.endswith("-5")]
    keys, landed, _ = live.run(cfgs, seed=2027 if unsigned else 2026, binary=binary)
    out = []
    for c in cfgs:
        pool_args = live.pool_args(c)
        ks = keys[c.id]
        chosen = ([j for j, k in enumerate(ks) if max(k) >= 0x80][:150] if unsigned
                  else list(pick(len(ks))))
        out.append({"id": c.id, "servers": c.lines, "hash": pool_args["hash"],
                    "distribution": pool_args["distribution"], "hash_tag": c.hash_tag,
                    "ejected": [j for j, (i, _, _) in enumerate(c.servers) if i < 0],
                    "signed_char": not unsigned,
                    "keys": [ks[j].hex() for j in chosen],
                    "server": [landed[c.id][j] for j in chosen]})
    doc = {"nutcracker": text.split("nutcracker-", 1)[-1],
           "generator": "tests/data/make_twemproxy_vectors.py",
           "note": "server: the index into servers of the memcached server holding each key "
                   "(keys hex-encoded)",
           "configs": out}
    path = HERE / ("twemproxy_vectors_unsigned_char.json" if unsigned
                   else "twemproxy_vectors.json")
    body = ",\n".join(json.dumps(c, separators=(",", ":")) for c in out)
    head = json.dumps({k: v for k, v in doc.items() if k != "configs"}, indent=1)[:-2]
    path.write_text(head + ',\n "configs": [\n' + body + "\n]}\n")
    print(f"wrote {path} ({len(out)} configurations, {sum(len(c['keys']) for c in out)} keys)",
          file=sys.stderr)


if __name__ == "__main__":
    os.chdir(HERE.parent.parent)
    main()

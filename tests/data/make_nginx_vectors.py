"""Generate tests/data/nginx_vectors.json from a live nginx (nothing from consistent_hash).

    python tests/data/make_nginx_vectors.py [--keys 300] [--nginx /usr/sbin/nginx]

Starts the nginx of tests/support/live_nginx.py (backends answering with their own address, one
upstream per configuration balanced by ``hash $http_x_key [consistent]``), sends every key in
an X-Key header, and records, per configuration, the ``upstream`` block exactly as nginx read
it, the keys (hex) and the server (as written in the block) nginx sent each key to.
tests/test_nginx.py checks NginxUpstream.from_config(block) against these without nginx.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "support"))  # live_nginx

from live_nginx import keys, live_nginx  # noqa: E402

OUT = os.path.join(HERE, "nginx_vectors.json")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keys", type=int, default=300, help="keys per configuration")
    ap.add_argument("--nginx", default="/usr/sbin/nginx")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args()
    version = subprocess.run([args.nginx, "-v"], capture_output=True, text=True).stderr.strip()
    ks = keys(20261201, args.keys)
    with live_nginx(args.nginx) as live:
        answers = live.route([(c.name, k) for c in live.configs for k in ks])
        cases = []
        for i, c in enumerate(live.configs):
            got = answers[i * len(ks):(i + 1) * len(ks)]
            written = [s for s, _, _ in c.servers]
            cases.append({
                "name": c.name,
                "consistent": c.consistent,
                "upstream": textwrap.dedent(c.block()).strip() + "\n",
                "servers": written,
                "dead": list(c.dead),  # nothing listens there (failed: skipped as down)
                # per key, the index in "servers" of the server nginx sent it to
                "answers": [written.index(live.answer_to_server(c, a)) for a in got],
            })
    doc = {"generator": "tests/data/make_nginx_vectors.py", "nginx": version,
           "key_header": "X-Key", "keys": [k.hex() for k in ks], "cases": cases}
    with open(args.out, "w") as f:
        f.write("{\n")
        items = list(doc.items())
        for j, (name, value) in enumerate(items):
            f.write(f" {json.dumps(name)}: ")
            if name == "cases":
                f.write("[\n" + ",\n".join("  " + json.dumps(cs, ensure_ascii=True)
                                            for cs in value) + "\n ]")
            else:
                f.write(json.dumps(value, ensure_ascii=True))
            f.write(",\n" if j < len(items) - 1 else "\n")
        f.write("}\n")
    print(f"wrote {args.out}: {len(cases)} configurations x {len(ks)} keys ({version})")


if __name__ == "__main__":
    main()

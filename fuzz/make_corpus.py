"""Write the seed corpora under fuzz/corpus/ (deterministic: run it again after a format
changes). Seeds are encoded the way each target decodes its bytes, so they start the fuzzer at
valid inputs of every kind; regression inputs (``regress-*``) are kept as they are.

    python fuzz/make_corpus.py
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "tests"),
               os.path.join(os.path.dirname(HERE), "tests", "support")]

from routers import NODES, ROUTERS  # noqa: E402

from consistent_hash import HashRing, ringfile  # noqa: E402

CORPUS = os.path.join(HERE, "corpus")


def write(target: str, blobs: list[bytes]) -> None:
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    for name in os.listdir(d):
        if name.startswith("seed-"):
            os.unlink(os.path.join(d, name))
    for blob in blobs:
        with open(os.path.join(d, "seed-" + hashlib.sha1(blob).hexdigest()[:12]), "wb") as f:
            f.write(blob)


def from_bytes() -> list[bytes]:
    classes = list(dict.fromkeys(s.cls for s in ROUTERS))
    out = []
    for s in ROUTERS:
        ci = classes.index(s.cls)
        for nodes in (NODES[:3], NODES[:1]):
            blob = s.make(nodes).to_bytes()
            out.append(bytes([ci, 1]) + blob[12:-8])  # payload mode: the envelope is rebuilt
            out.append(bytes([ci, 0]) + blob)  # raw mode
    return out


def ringfiles() -> list[bytes]:
    rings = [HashRing(["a", "b"], vnodes=4), HashRing({"a": 1.0, "bé": 2.5}, vnodes=3,
                                                      hash="murmur3", seed=7),
             HashRing([], vnodes=1, hash="md5")]
    out = [ringfile.dumps(r).encode() for r in rings]
    out.append(b"\x00" + out[0])  # through a file (ringfile.load)
    out.append(json.dumps(json.loads(out[1]), separators=(",", ":")).encode())
    return out


def provider(*parts: tuple[int, int, int]) -> bytes:
    """Bytes that atheris.FuzzedDataProvider.ConsumeIntInRange(lo, hi) reads back as the given
    values: for a range of width < 256 it reads one byte (value = lo + byte % (hi - lo + 1))."""
    out = bytearray()
    for v, lo, hi in parts:
        assert hi - lo < 256
        out.append(v - lo)
    return bytes(out)


def servers() -> list[bytes]:
    # which=1 (parse_address) / which=2 (node lists): the rest is the text (the provider reads
    # ConsumeUnicodeNoSurrogates: a first byte with bit 0 clear means ASCII).
    texts1 = ["10.0.0.1:11211", "[::1]:11211", "::1:11211", "unix:/run/mc.sock", "/tmp/s",
              "fe80::1%eth0:6379", "localhost:0"]
    texts2 = ["a,b,c", "a:2,b:1", "10.0.0.1:11211:2,[::1]:11211:1", "h:1,h:1"]
    out = [provider((1, 0, 3)) + b"\x00" + t.encode() for t in texts1]
    out += [provider((2, 0, 3)) + b"\x00" + t.encode() for t in texts2]
    return out


def cluster_slots() -> list[bytes]:
    # Random-looking seeds are enough here: the grammar makes nearly every input a reply.
    return [bytes(range(i, i + 40)) for i in (0, 7, 50, 120)] + [b"\x01" * 30, b"\x05" * 30]


def arrow_keys() -> list[bytes]:
    return [bytes((i * 37 + j * 11) % 256 for j in range(80)) for i in range(8)]


def numpy_keys() -> list[bytes]:
    return [bytes((i * 53 + j * 7) % 256 for j in range(60)) for i in range(8)]


def cli_inputs() -> list[bytes]:
    # Byte 0 picks the format from --input-format's choices (text, csv, parquet), byte 1
    # the column (0, 1: the first), byte 2 the batch size; the rest is the file.
    text = b"user:1\nuser:2\r\nuser:3\rlast"
    csv = b'key,other\n"a,b",1\nc,2\n\n"d""e",3\n'
    return [bytes([0, 0, 2]) + text, bytes([1, 0, 1]) + csv, bytes([1, 1, 3]) + csv,
            bytes([2, 0, 2, 1]) + bytes(range(64)), bytes([2, 0, 2, 0]) + b"PAR1"]


NGINX = b"""http {
  upstream cache {
    hash $http_x_key consistent;
    server 127.0.0.1:8001;
    server 127.0.0.1:8002 weight=2 max_fails=3;
    server localhost:8003 down;
    server unix:/tmp/s.sock;
  }
  upstream plain { hash $request_uri; server 10.0.0.1; server [::1]:80 weight=3; }
}
"""
HAPROXY = b"""defaults base
  mode http
  hash-type consistent djb2 avalanche
backend cache from base
  balance hdr(X-Key) use_domain_only
  default-server weight 3
  server s1 127.0.0.1:8001 id 7
  server s2 127.0.0.1:8002 weight 2
  server s3 127.0.0.1:8003 disabled
  server b1 127.0.0.1:8009 backup
  option allbackups
listen web
  mode http
  balance url_param user
  hash-type consistent crc32
  server w1 10.0.0.1:80
"""
ENVOY = b"""static_resources:
  clusters:
  - name: ring
    lb_policy: RING_HASH
    ring_hash_lb_config: {minimum_ring_size: 64, maximum_ring_size: 4096, hash_function: MURMUR_HASH_2}
    common_lb_config: {consistent_hashing_lb_config: {use_hostname_for_hashing: true}}
    load_assignment:
      cluster_name: ring
      endpoints:
      - locality: {zone: a}
        load_balancing_weight: 2
        lb_endpoints:
        - endpoint: {hostname: h1, address: {socket_address: {address: 10.0.0.1, port_value: 80}}}
          load_balancing_weight: 3
        - endpoint: {hostname: h2, address: {socket_address: {address: 10.0.0.2, port_value: 80}}}
  - name: mag
    lb_policy: MAGLEV
    maglev_lb_config: {table_size: 17}
    load_assignment: {cluster_name: mag, endpoints: [{lb_endpoints: [{endpoint: {address: {socket_address: {address: 10.0.0.3, port_value: 81}}}}]}]}
"""
ENVOY_JSON = (b'{"name": "c", "load_balancing_policy": {"policies": [{"typed_extension_config": '
              b'{"name": "envoy.load_balancing_policies.maglev", "typed_config": {"@type": '
              b'"type.googleapis.com/envoy.extensions.load_balancing_policies.maglev.v3.Maglev",'
              b' "tableSize": "7"}}}]}, "load_assignment": {"cluster_name": "c", "endpoints": '
              b'[{"lb_endpoints": [{"endpoint": {"address": {"socket_address": {"address": '
              b'"10.0.0.1", "port_value": 80}}}}]}]}}')
TWEMPROXY = b"""alpha:
  listen: 127.0.0.1:22121
  hash: fnv1a_64
  hash_tag: "{}"
  distribution: ketama
  auto_eject_hosts: true
  servers:
   - 127.0.0.1:11211:1
   - 127.0.0.1:11212:2 cache-b
   - /tmp/m.sock:1
beta:
  listen: 127.0.0.1:22122
  hash: crc32a
  distribution: modula
  servers: [10.0.0.1:11211:1, 10.0.0.2:11211:3]
"""


def lb_configs() -> list[bytes]:
    """Byte 0 picks the reader (fuzz_lb_config.READERS: nginx, haproxy, envoy, twemproxy,
    any), byte 1 the name= (fuzz_lb_config.NAMES: None, cache, plain, web, ring, mag, alpha,
    beta); each reader gets its system's config with each of its names, "any" all of them."""
    configs = [(0, NGINX, [1, 2]), (1, HAPROXY, [1, 3]), (2, ENVOY, [4, 5]),
               (2, ENVOY_JSON, [0]), (3, TWEMPROXY, [6, 7])]
    out = [bytes([r, n]) + c for r, c, names in configs for n in names]
    return out + [bytes([4, names[0]]) + c for _, c, names in configs]


def main() -> None:
    write("from_bytes", from_bytes())
    write("ringfile", ringfiles())
    write("servers", servers())
    write("cluster_slots", cluster_slots())
    write("arrow_keys", arrow_keys())
    write("numpy_keys", numpy_keys())
    write("cli_inputs", cli_inputs())
    write("lb_config", lb_configs())


if __name__ == "__main__":
    main()

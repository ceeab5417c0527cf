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
sys.path[:0] = [os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "tests")]

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


def main() -> None:
    write("from_bytes", from_bytes())
    write("ringfile", ringfiles())
    write("servers", servers())
    write("cluster_slots", cluster_slots())
    write("arrow_keys", arrow_keys())
    write("numpy_keys", numpy_keys())
    write("cli_inputs", cli_inputs())
    os.makedirs(os.path.join(CORPUS, "lb_config"), exist_ok=True)
    keep = os.path.join(CORPUS, "lb_config", "README")
    with open(keep, "w") as f:
        f.write("Seed configs of the readers listed in fuzz/fuzz_lb_config.py READERS "
                "(byte 0 picks the reader).\n")


if __name__ == "__main__":
    main()

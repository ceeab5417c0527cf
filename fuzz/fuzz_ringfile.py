"""Fuzz ring files: ``ringfile.loads`` (and ``load``, through a file, for one input in 16).

An accepted document must describe the ring it built: ``dumps`` of it loads back equal, with
the same fingerprint, and the ring routes a few keys the same way through ``get`` (the
plain-Python path) and ``get_many``.

    python fuzz/fuzz_ringfile.py [-atheris_runs=N] fuzz/corpus/ringfile
"""

from __future__ import annotations

import os
import tempfile

import _harness  # noqa: I001

from consistent_hash import ringfile

KEYS = ["", "a", "user:42", "ключ"]
TMP = os.path.join(tempfile.gettempdir(), f"fuzz_ringfile.{os.getpid()}.json")


def test_one(data: bytes) -> None:
    try:
        if data[:1] == b"\x00":
            with open(TMP, "wb") as f:
                f.write(data[1:])
            ring = ringfile.load(TMP)
        else:
            ring = ringfile.loads(data)
    except _harness.EXPECTED:
        return
    text = ringfile.dumps(ring)
    again = ringfile.loads(text)
    assert again == ring
    assert again.fingerprint() == ring.fingerprint()
    assert ringfile.dumps(again) == text
    if len(ring):
        assert list(ring.get_many(KEYS)) == [ring.get(k) for k in KEYS]


if __name__ == "__main__":
    _harness.main(test_one)

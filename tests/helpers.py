"""Helpers shared by the test files (``tests/`` is on sys.path via conftest.py: import as
``from helpers import ...``)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["DIGEST_KEYS", "check_vectors", "names_digest", "names_word", "obj_array",
           "vector_key"]

# the 100,000 keys of the golden vectors' assignment digests (tests/data/make_*vectors.py)
DIGEST_KEYS = np.char.add("key-", np.arange(100_000).astype("U"))


def vector_key(k: dict[str, str]) -> Any:
    """A key of a golden-vector file: {"str": ...}, {"bytes": hex} or {"int": decimal}."""
    if "str" in k:
        return k["str"]
    if "bytes" in k:
        return bytes.fromhex(k["bytes"])
    return int(k["int"])


def names_digest(names: Iterable[Any]) -> str:
    """sha256 of the node names one a line (a NumPy array of names, or any iterable)."""
    if isinstance(names, np.ndarray):
        names = names.tolist()
    return hashlib.sha256("\n".join(map(str, names)).encode("utf-8")).hexdigest()


def obj_array(values: list[Any]) -> np.ndarray:
    """A 1-D object array holding ``values`` as they are (no nesting, no conversion)."""
    a = np.empty(len(values), dtype=object)
    a[:] = values
    return a


def names_word(msg: str, word: str) -> bool:
    """``word`` stands in ``msg`` as a word of its own (an argument name, a position)."""
    return re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", msg) is not None


def check_vectors(router: Any, cfg: dict[str, Any]) -> None:
    """A golden-vector config: each key's node by ``get`` and by ``get_many``, and the digest
    of the assignment of DIGEST_KEYS."""
    keys = [vector_key(k) for k, _ in cfg["vectors"]]
    expected = [node for _, node in cfg["vectors"]]
    assert [router.get(k) for k in keys] == expected
    assert router.get_many(keys).tolist() == expected
    assert names_digest(router.get_many(DIGEST_KEYS)) == cfg["assignment_sha256"]

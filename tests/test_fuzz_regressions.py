"""What the coverage-guided fuzz targets (fuzz/) found, one test per bug, and a replay of every
committed corpus input through its target (the inputs that found a bug are ``regress-*``).

The references are pyarrow's own reading (``validate(full=True)``, ``to_pylist``), Python's
reading of a NumPy array (``tolist``), and the plain-Python path (``router.get`` per key).
"""

from __future__ import annotations

import functools
import importlib
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from consistent_hash import HashRing, KetamaRing, SlotMap
from consistent_hash.integrations import KetamaHasher

pa = pytest.importorskip("pyarrow")

REPO = Path(__file__).resolve().parent.parent
RING = HashRing(["a", "b", "c"], vnodes=32)


def _offsets_array(offsets: list[int], data: bytes, typ: object = None) -> object:
    typ = typ or pa.string()
    dt = np.int64 if typ in (pa.large_string(), pa.large_binary()) else np.int32
    return pa.Array.from_buffers(typ, len(offsets) - 1,
                                 [None, pa.py_buffer(np.array(offsets, dt).tobytes()),
                                  pa.py_buffer(data)])


# -- Arrow: damaged offsets were read outside the data (a segmentation fault) ----------------

@pytest.mark.parametrize("offsets", [[0, 10, 2, 3], [0, -5, 3, 3], [2, 1, 0, 3],
                                     [0, 100, 200, 3]])
@pytest.mark.parametrize("typ", ["string", "binary", "large_string", "large_binary"])
def test_damaged_arrow_offsets_raise(offsets: list[int], typ: str) -> None:
    arr = _offsets_array(offsets, b"abc", getattr(pa, typ)())
    with pytest.raises(pa.ArrowInvalid):
        arr.validate(full=True)  # pyarrow's own verdict: damaged
    with pytest.raises(ValueError, match="damaged Arrow array"):
        RING.get_indices(arr)
    with pytest.raises(ValueError, match="damaged Arrow array"):
        RING.get_many(arr.slice(1))


def test_valid_arrow_offsets_still_route() -> None:
    arr = _offsets_array([0, 1, 1, 3], b"abc")
    arr.validate(full=True)
    assert list(RING.get_many(arr)) == [RING.get(k) for k in arr.to_pylist()]


def test_damaged_arrow_array_with_nulls_is_not_handed_to_a_pyarrow_kernel() -> None:
    """A damaged array with missing values reached pyarrow's fill_null, which crashed on it
    (negative memcpy in its coalesce kernel): now its buffers are read and checked by the core
    only. Run in a child process, so a crash is a failure, not the end of the test run."""
    code = (
        "import numpy as np, pyarrow as pa\n"
        "from consistent_hash import HashRing\n"
        "offs = pa.py_buffer(np.array([0, 3, 1, 3], np.int32).tobytes())\n"
        "for t in (pa.string(), pa.large_binary()):\n"
        "    if t == pa.large_binary():\n"
        "        offs = pa.py_buffer(np.array([0, 3, 1, 3], np.int64).tobytes())\n"
        "    a = pa.Array.from_buffers(t, 3, [pa.py_buffer(bytes([5])), offs,\n"
        "                                     pa.py_buffer(b'abc')])\n"
        "    try:\n"
        "        HashRing(['a', 'b']).get_indices(a, nulls='none')\n"
        "    except ValueError as e:\n"
        "        print('ValueError', e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=60, cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("ValueError damaged Arrow array") == 2, r.stdout


def test_null_views_need_not_point_anywhere() -> None:
    """A missing string_view slot may hold any view (pyarrow's full validation accepts it):
    it is None / -1, not a damaged array."""
    views = (struct.pack("<i4s8x", 2, b"ab") + struct.pack("<i4sii", 40, b"xxxx", 5, 1000))
    arr = pa.Array.from_buffers(pa.string_view(), 2, [pa.py_buffer(bytes([1])),
                                                      pa.py_buffer(views)])
    arr.validate(full=True)
    assert arr.to_pylist() == ["ab", None]
    assert RING.get_indices(arr, nulls="none").tolist() == [RING.nodes.index(RING.get("ab")),
                                                           -1]
    assert list(RING.get_many(arr, nulls="none")) == [RING.get("ab"), None]


def test_masked_integer_arrays_route_their_values() -> None:
    arr = pa.array([5, None, 7], type=pa.int16())
    want = [RING.get(5), None, RING.get(7)]
    assert list(RING.get_many(arr, nulls="none")) == want


# -- Arrow dictionaries: indices outside the dictionary; null dictionary values ---------------

@pytest.mark.parametrize("indices", [[0, 3], [0, -1], [-2, 0], [127, 0]])
def test_dictionary_indices_outside_the_dictionary_raise(indices: list[int]) -> None:
    dictionary = pa.array(["x", "y", "z"])
    arr = pa.DictionaryArray.from_buffers(
        pa.dictionary(pa.int8(), pa.string()), len(indices),
        [None, pa.py_buffer(np.array(indices, np.int8).tobytes())], dictionary)
    with pytest.raises(pa.ArrowException):
        arr.validate(full=True)
    with pytest.raises(ValueError, match="outside its dictionary"):
        RING.get_indices(arr)


def test_null_dictionary_values_are_missing_keys() -> None:
    arr = pa.DictionaryArray.from_arrays(pa.array([0, 1, 1, 0]), pa.array(["x", None]))
    assert arr.to_pylist() == ["x", None, None, "x"]
    want = [RING.get("x"), None, None, RING.get("x")]
    assert list(RING.get_many(arr, nulls="none")) == want
    with pytest.raises(ValueError, match="2 missing value"):
        RING.get_indices(arr)
    unused = pa.DictionaryArray.from_arrays(pa.array([0, 0]), pa.array(["x", None]))
    assert list(RING.get_many(unused)) == [RING.get("x")] * 2  # the null is never used


# -- NumPy: a code point above U+10FFFF was a SystemError -------------------------------------

def test_numpy_code_point_above_unicode_is_a_value_error() -> None:
    arr = np.frombuffer(np.array([0x61, 0x110000], np.uint32).tobytes(), dtype="<U1")
    with pytest.raises((ValueError, SystemError)):
        arr.tolist()  # Python cannot hold it either
    with pytest.raises(ValueError, match="position 1"):
        RING.get_indices(arr)


# -- CLUSTER SLOTS replies: IndexError / KeyError / OverflowError, absurd ports ---------------

@pytest.mark.parametrize("reply,exc", [
    ([[0, 1]], ValueError),  # no node
    ([[0, 1, ["h"]]], ValueError),  # a node without a port
    ({(0, 1): {}}, ValueError),  # no "primary"
    ({(0, 1): {"primary": ("h",)}}, ValueError),
    ({0: 1}, ValueError),  # a key that is not a range
    ([5], ValueError),
    ([[0, 1, ["h", 1e300]]], TypeError),  # was accepted as port 10**300
    ([[0, 1, ["h", float("inf")]]], TypeError),  # was an OverflowError
    ([[0, 1, ["h", 70000]]], ValueError),
    ([[0, 1, [None, 6379]]], TypeError),
    ("CLUSTER", TypeError),
])
def test_bad_cluster_slots_replies_raise_cleanly(reply: object, exc: type) -> None:
    with pytest.raises(exc, match="CLUSTER SLOTS|slot"):
        SlotMap.from_cluster_slots(reply)


def test_good_cluster_slots_replies_still_load() -> None:
    raw = [[0, 5460, [b"10.0.0.1", 6379, b"id1"], [b"10.0.0.4", 6379, b"id4"]],
           [5461, 16383, ["10.0.0.2", np.int64(6380)]]]
    m = SlotMap.from_cluster_slots(raw)
    assert m.ranges() == [(0, 5460, "10.0.0.1:6379"), (5461, 16383, "10.0.0.2:6380")]
    d = {(0, 5460): {"primary": ("10.0.0.1", 6379), "replicas": []},
         (5461, 16383): {"primary": ("10.0.0.2", 6380), "replicas": []}}
    assert SlotMap.from_cluster_slots(d) == m


# -- ketama / twemproxy / pymemcache server names ----------------------------------------------

@pytest.mark.parametrize("spec,name", [
    ("[::1]:11211", "::1:11211"), ("::1:11211", "::1:11211"), ("[::1]", "::1:11211"),
    ("[fe80::1]:6379:2", "fe80::1:6379"), ("fe80::1%eth0:11211", "fe80::1%eth0:11211"),
    ("10.0.0.1:11211:3 cache-a", "10.0.0.1:11211"),
])
def test_ketama_names_parse_back_to_the_same_server(spec: str, name: str) -> None:
    ring = KetamaRing([spec, "10.0.0.9:11211"], mode="twemproxy")
    assert ring.nodes[0] == name
    assert name in ring
    ring.remove(ring.nodes[0])  # was ValueError for every IPv6 server: its own name
    assert ring.nodes == ("10.0.0.9:11211",)


@pytest.mark.parametrize("spec", ["[::1", "[:11211", "[[]::6]0", "[\n6563]", "[a:b]:1"])
def test_ketama_bad_bracketed_hosts_raise(spec: str) -> None:
    with pytest.raises(ValueError, match="bad server"):
        KetamaRing([spec], mode="ketama")


def test_ketama_hasher_under_hashclient_with_ipv6_servers() -> None:
    """HashClient names ("::1", 11211) "::1:11211"; KetamaHasher refused it (ValueError)."""
    pytest.importorskip("pymemcache")
    from pymemcache.client.hash import HashClient

    client = HashClient([("::1", 11211), ("127.0.0.1", 11212)],
                        hasher=functools.partial(KetamaHasher, mode="ketama"))
    ring = KetamaRing(["[::1]:11211", "127.0.0.1:11212"], mode="ketama")
    keys = [f"k{i}" for i in range(200)]
    assert [client.hasher.get_node(k) for k in keys] == [ring.get(k) for k in keys]
    assert set(client.hasher.ring.nodes) == set(client.clients)


@pytest.mark.parametrize("name", ["a:1:2", "a b:5", "[::1]:11211", "::1:11211"])
def test_ketama_hasher_answers_only_with_names_hashclient_gave(name: str) -> None:
    """get_node must answer with a name HashClient knows: the name as it was added (or the
    name is refused with a ValueError), never the ketama parser's reading of it."""
    h = KetamaHasher(mode="ketama")
    h.add_node("10.0.0.9:11211")
    try:
        h.add_node(name)
    except ValueError:
        return
    answers = {h.get_node(f"key:{i}") for i in range(500)}
    assert answers == {name, "10.0.0.9:11211"}


# -- the CLI readers -------------------------------------------------------------------------

def _assign(tmp_path: Path, body: bytes, *extra: str) -> subprocess.CompletedProcess[str]:
    src = tmp_path / "keys.in"
    src.write_bytes(body)
    return subprocess.run([sys.executable, "-m", "consistent_hash", "assign", "--nodes",
                           "a,b", str(src), *extra], capture_output=True, text=True,
                          timeout=120, cwd=REPO)


@pytest.mark.parametrize("body,fmt,msg", [
    (b"a\n\xff\n", "text", "not UTF-8"),
    (b"key\n\xe9t\xe9\n", "csv", "not UTF-8"),
    (b"\n\x7f\n", "csv", "header row"),
    (b"PAR1" + bytes(40) + b"PAR1", "parquet", "keys.in"),
])
def test_damaged_cli_input_is_one_line_error(tmp_path: Path, body: bytes, fmt: str,
                                             msg: str) -> None:
    r = _assign(tmp_path, body, "--input-format", fmt)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and msg in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_csv_blank_lines_are_skipped(tmp_path: Path) -> None:
    r = _assign(tmp_path, b"key\nx\n\ny\n\n", "--input-format", "csv")
    assert r.returncode == 0, r.stderr
    ring = HashRing(["a", "b"])
    assert r.stdout.splitlines() == ["key,node", f"x,{ring.get('x')}", f"y,{ring.get('y')}"]


def test_parquet_without_columns_is_a_user_error(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "empty.parquet"
    pq.write_table(pa.table({}), path)
    r = subprocess.run([sys.executable, "-m", "consistent_hash", "assign", "--nodes", "a,b",
                        str(path)], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert r.returncode == 2 and "no columns" in r.stderr, r.stderr


# -- every corpus input through its target -----------------------------------------------------

CORPUS = REPO / "fuzz" / "corpus"
# A target's corpus with no input yet (lb_config, until a reader is listed) has nothing to replay.
TARGETS = sorted(p.name for p in CORPUS.iterdir()
                 if p.is_dir() and any(q.name != "README" for q in p.iterdir())
                 ) if CORPUS.is_dir() else []


@pytest.mark.parametrize("target", TARGETS)
def test_corpus_replays_clean(target: str) -> None:
    """Each committed input (seeds and the regress-* inputs that found the bugs above) runs
    through its fuzz target's check without a finding."""
    pytest.importorskip("atheris")  # the fuzz targets decode their input with it
    sys.path.insert(0, str(REPO / "fuzz"))
    try:
        mod = importlib.import_module(f"fuzz_{target}")
    finally:
        sys.path.remove(str(REPO / "fuzz"))
    inputs = sorted(p for p in (CORPUS / target).iterdir() if p.name != "README")
    assert inputs
    for p in inputs:
        mod.test_one(p.read_bytes())
    if target in ("servers", "arrow_keys", "cli_inputs", "cluster_slots", "numpy_keys",
                  "from_bytes"):
        assert any(p.name.startswith("regress-") for p in inputs)
    assert os.path.isfile(REPO / "fuzz" / f"fuzz_{target}.py")


# -- from_bytes: a damaged payload built its (up to 2**26-entry) table before it was refused ---

def test_damaged_node_set_payload_is_refused_before_building(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    from consistent_hash import Maglev, _format

    good = Maglev(["a", "b"], table_size=65537).to_bytes()
    payload = good[12:-8] + b"\x00"  # one trailing byte
    built = []
    monkeypatch.setattr(Maglev, "__init__", lambda self, *a, **k: built.append(a))
    with pytest.raises(ValueError, match="trailing bytes"):
        Maglev.from_bytes(_format.pack(Maglev._kind, payload))
    assert built == []


def test_nginx_plain_hash_refuses_a_server_name_that_is_not_unicode() -> None:
    # Found by fuzz_lb_config: in plain `hash` mode the server names are never hashed, so a
    # name with a lone surrogate was accepted and to_bytes() then failed.
    from consistent_hash.compat.nginx import NginxUpstream, from_config

    with pytest.raises(ValueError, match="not valid Unicode"):
        NginxUpstream(["unix:/tmp/s\udcff.sock", "127.0.0.1:1"], consistent=False)
    text = "upstream u {\n  hash $k;\n  server unix:/tmp/s\udcff;\n}\n"
    with pytest.raises(ValueError, match="not valid Unicode"):
        from_config(text)


@pytest.mark.parametrize("spec", ["[/]", "[/]:11211", "[]:11211"])
def test_ketama_refuses_a_bracketed_socket_path_or_empty_host(spec: str) -> None:
    # Found by fuzz_servers: "[/]" was read as host "/" and named "/:11211", a name that reads
    # back as a unix socket path (port 0).
    from consistent_hash import KetamaRing

    with pytest.raises(ValueError, match="IPv6"):
        KetamaRing([spec], mode="ketama")


@pytest.mark.parametrize("cluster", [
    {"name": "c", "lb_policy": "MAGLEV", "load_assignment": {"endpoints": [
        {"locality": "zone-a", "lb_endpoints": []}]}},
    {"name": "c", "lb_policy": "MAGLEV", "load_assignment": {"endpoints": "x"}},
    {"name": "c", "lb_policy": "MAGLEV", "load_assignment": {"endpoints": [
        {"lb_endpoints": [{"endpoint": "10.0.0.1:80"}]}]}},
    {"name": "c", "lb_policy": "RING_HASH", "ring_hash_lb_config": [1, 2]},
    {"name": "c", "load_balancing_policy": {"policies": ["ring"]}},
])
def test_envoy_config_of_the_wrong_shape_is_a_value_error(cluster: dict) -> None:
    # Found by fuzz_lb_config: a locality given as a string was an AttributeError.
    from consistent_hash.compat.envoy import from_config

    with pytest.raises(ValueError, match="must be a"):
        from_config(cluster)


@pytest.mark.parametrize("text, what", [
    ("static_resources:\n  clusters:\n  - a string, not a cluster\n",
     "an entry of static_resources"),
    ("static_resources: 5\n", "static_resources must be a mapping"),
    ("static_resources:\n  clusters: abc\n", "static_resources.clusters must be a list"),
    ('{"clusters": [{"name": "c", "lb_policy": "MAGLEV"}, 3]}', "an entry of clusters"),
    ("[1, 2]", "an entry of the list of clusters"),
])
def test_envoy_cluster_list_of_the_wrong_shape_is_a_value_error(text: str, what: str) -> None:
    # Found by the sanitized fuzz_lb_config long run (its input is
    # fuzz/corpus/lb_config/regress-envoy-cluster-not-a-mapping): a bootstrap whose
    # static_resources.clusters held a string was an AttributeError ('str' has no 'get').
    pytest.importorskip("yaml")
    from consistent_hash.compat.envoy import from_config

    with pytest.raises(ValueError, match=what):
        from_config(text)

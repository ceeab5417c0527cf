"""Envoy's ring_hash and maglev load balancers (consistent_hash.compat.envoy).

Envoy cannot be installed here, so the proof is threefold:

1. every placement expectation of Envoy's own unit tests, transcribed below, each citing its
   test; read at envoyproxy/envoy
     RING = test/extensions/load_balancing_policies/ring_hash/ring_hash_lb_test.cc
            @ 13e9fdb2d4db3480ff278565a596324951e8dccd
     MAGLEV = test/extensions/load_balancing_policies/maglev/maglev_lb_test.cc
            @ 08417eb62f1ecfa6ac015caa0146d25565a142ed
     HASH = test/common/common/hash_test.cc @ 01ee5bb6f8621b9e227acfc3eb9243e8eaba967e
   (In those tests ``makeTestHost(info_, "tcp://127.0.0.1:90")`` is an endpoint Envoy hashes
   as "127.0.0.1:90"; ``makeTestHost(info_, "90", url)`` has hostname "90";
   ``makeTestHostWithHashKey(info_, "90", url)`` has envoy.lb hash_key "90".  A test's
   ``TestLoadBalancerContext(h)`` routes the raw hash h: our ``lookup([h])``.)
2. a pure-Python transcription of both recipes from Envoy's source
   (tests/support/model_envoy.py, independent of the library), compared with the router directly and
   through the golden vectors tests/data/make_envoy_vectors.py made from it;
3. the murmur2 point hash against Envoy's hash_test.cc and against libstdc++'s own
   std::hash<std::string>, which Envoy's murmurHash2 reproduces (when a C++ compiler exists).
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from consistent_hash import EmptyRingError
from consistent_hash._ring import hash_bytes
from consistent_hash.analysis import migration_plan, movement
from consistent_hash.compat import config, envoy
from consistent_hash.compat.envoy import EnvoyMaglev, EnvoyRingHash, from_config, header_hash

DATA = Path(__file__).resolve().parent / "data"
sys.path.insert(0, str(DATA))

import model_envoy as ref  # noqa: E402
from live_servers import require  # noqa: E402
from make_envoy_vectors import configs as vector_configs  # noqa: E402

U64_MAX = (1 << 64) - 1


def A(port: int) -> str:
    return f"127.0.0.1:{port}"


def ports(*ps: int) -> list[str]:
    return [A(p) for p in ps]


def hosts_of(r: Any, hashes: list[int]) -> list[str]:
    return [r.nodes[i] for i in r.lookup(np.array(hashes, dtype=np.uint64))]


def spread(r: Any, n: int) -> dict[str, int]:
    """Envoy's histogram loops: hashes i * (UINT64_MAX / n) for i < n."""
    step = U64_MAX // n
    got = hosts_of(r, [i * step for i in range(n)])
    return {h: got.count(h) for h in r.nodes}


# ------------------------------------------------------------------------------------------
# The hashes (HASH: TEST(Hash, xxHash), TEST(Hash, murmurHash2), TEST(Hash, xxHashWithVector))
# ------------------------------------------------------------------------------------------

HASH_VECTORS = [(b"foo", 3728699739546630719, 9631199822919835226),
                (b"bar", 5234164152756840025, 11474628671133349555),
                (b"foo\nbar", 8917841378505826757, 16306510975912980159),
                (b"lyft", 4400747396090729504, 12847078931730529320),
                (b"", 17241709254077376921, 6142509188972423790)]


@pytest.mark.parametrize(("data", "xx", "mm"), HASH_VECTORS)
def test_hash_test_cc_vectors(data: bytes, xx: int, mm: int) -> None:
    # HASH: TEST(Hash, xxHash) and TEST(Hash, murmurHash2)
    assert hash_bytes("xxh64", data, 0) == xx
    assert hash_bytes("envoy_murmur2", data) == mm
    assert ref.xxh64(data) == xx and ref.murmur2(data) == mm


def test_murmur2_every_length_against_the_transcription() -> None:
    rnd = random.Random(5)
    for n in range(0, 300):
        data = bytes(rnd.getrandbits(8) for _ in range(n))
        assert hash_bytes("envoy_murmur2", data) == ref.murmur2(data), n


def test_murmur2_is_libstdcxx_std_hash() -> None:
    """Envoy's murmurHash2 is libstdc++'s std::hash<std::string> (its comment, and its
    stdhash test): compile a program that prints std::hash of some strings and compare."""
    cxx = shutil.which("clang++") or require("g++")  # .ci/run installs g++ if neither is
    rnd = random.Random(11)
    words = [bytes(rnd.choice(b"abcdefghij_0123456789:.") for _ in range(n)) for n in range(40)]
    words += [f"10.0.0.{i}:80_{j}".encode() for i in range(3) for j in range(5)]
    src = ("#include <cstdio>\n#include <string>\n#include <functional>\nint main(){char b[256];"
           "while(fgets(b,sizeof b,stdin)){std::string s(b);s.pop_back();"
           "printf(\"%zu\\n\",std::hash<std::string>()(s));}}\n")
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        exe = Path(d) / "stdhash"
        subprocess.run([cxx, "-O1", "-x", "c++", "-", "-o", str(exe)], input=src.encode(),
                       check=True, capture_output=True)
        out = subprocess.run([str(exe)], input=b"".join(w + b"\n" for w in words),
                             check=True, capture_output=True).stdout.split()
    assert [int(x) for x in out] == [hash_bytes("envoy_murmur2", w) for w in words]


def test_header_hash() -> None:
    # HASH: TEST(Hash, xxHashWithVector): {"foo", "bar"} chained in that order
    chained = int(hash_bytes("xxh64", b"bar", hash_bytes("xxh64", b"foo", 0)))
    assert chained == 17745830980996999794
    # the header policy sorts the values first (hash_policy.cc HeaderHashMethod)
    assert header_hash(["foo", "bar"]) == header_hash([b"bar", "foo"]) == int(
        hash_bytes("xxh64", b"foo", hash_bytes("xxh64", b"bar", 0)))
    assert header_hash("user-1") == ref.xxh64(b"user-1")
    r = EnvoyRingHash(ports(90, 91, 92))
    assert r.get("user-1") == r.nodes[r.lookup([header_hash("user-1")])[0]]
    with pytest.raises(ValueError, match="values"):
        header_hash([])


# ------------------------------------------------------------------------------------------
# ring_hash: RING's tests
# ------------------------------------------------------------------------------------------

BASIC_RING = [  # RING: TEST_P(RingHashLoadBalancerTest, Basic) and BasicWithRetryHostPredicate
    (833437586790550860, 94), (928266305478181108, 92), (1033482794131418490, 90),
    (3551244743356806947, 95), (3851675632748031481, 93), (5583722120771150861, 91),
    (6311230543546372928, 91), (7700377290971790572, 93), (13144177310400110813, 95),
    (13444792449719432967, 92), (15516499411664133160, 94), (16117243373044804889, 90)]


def test_ring_basic() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, Basic)
    hosts = ports(90, 91, 92, 93, 94, 95)
    r = EnvoyRingHash(hosts, minimum_ring_size=12)
    assert r.ring_size == 12
    assert min(r.hashes_per_host.values()) == 2 and max(r.hashes_per_host.values()) == 2
    assert list(zip(r.positions.tolist(), [int(r.nodes[i][-2:]) for i in r.owners],
                    strict=True)) == BASIC_RING
    assert hosts_of(r, [0, U64_MAX, 3551244743356806947, 3551244743356806948,
                        16117243373044804880]) == [hosts[4], hosts[4], hosts[5], hosts[3],
                                                   hosts[0]]


def test_ring_basic_retries_walk_the_entries() -> None:
    # RING: BasicWithRetryHostPredicate: attempt k takes the ring entry k places after the
    # chosen one (Ring::chooseHost: midp = (midp + attempt) % ring size)
    hosts = ports(90, 91, 92, 93, 94, 95)
    r = EnvoyRingHash(hosts, minimum_ring_size=12)
    i = int(np.searchsorted(r.positions, 0, side="left")) % r.ring_size
    at = [r.nodes[r.owners[(i + k) % r.ring_size]] for k in (0, 1, 2, 13)]
    assert at == [hosts[4], hosts[2], hosts[0], hosts[2]]


def test_ring_single_host_failover_size() -> None:
    # RING: TEST_P(RingHashFailoverTest, BasicFailover): one host, ring of 12, 12 hashes
    r = EnvoyRingHash([A(80)], minimum_ring_size=12)
    assert r.ring_size == 12 and r.hashes_per_host == {A(80): 12}


def test_ring_basic_murmur2() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, BasicWithMurmur2)
    hosts = ports(80, 81, 82, 83, 84, 85)
    r = EnvoyRingHash(hosts, minimum_ring_size=12, hash_function="MURMUR_HASH_2")
    assert r.ring_size == 12 and set(r.hashes_per_host.values()) == {2}
    expect = [(1358027074129602068, 85), (4361834613929391114, 83), (7224494972555149682, 84),
              (7701421856454313576, 81), (8649315368077433379, 82), (8739448859063030639, 84),
              (9887544217113020895, 81), (10150910876324007731, 82),
              (15168472011420622455, 83), (15427156902705414897, 80),
              (16375050414328759093, 85), (17613279263364193813, 80)]
    assert list(zip(r.positions.tolist(), [int(r.nodes[i][-2:]) for i in r.owners],
                    strict=True)) == expect
    assert hosts_of(r, [0, U64_MAX, 1358027074129602068, 1358027074129602069,
                        10150910876324007730]) == [hosts[5], hosts[5], hosts[5], hosts[3],
                                                   hosts[2]]


HOSTNAME_RING = [(1975508444536362413, "95"), (2376063919839173711, "95"),
                 (2386806903309390596, "93"), (6749904478991551885, "94"),
                 (6803900775736438537, "93"), (7225015537174310577, "92"),
                 (8787465352164086522, "90"), (11282020843382717940, "92"),
                 (13723418369486627818, "91"), (13776502110861797421, "90"),
                 (14338313586354474791, "91"), (15364271037087512980, "94")]


def test_ring_basic_with_hostname() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, BasicWithHostname) (BasicWithDoundedLoad asserts
    # the same ring: its bounded loads only act on live load)
    hosts = ["90", "91", "92", "93", "94", "95"]
    r = EnvoyRingHash(hosts, minimum_ring_size=12)
    assert r.ring_size == 12 and set(r.hashes_per_host.values()) == {2}
    assert list(zip(r.positions.tolist(), [r.nodes[i] for i in r.owners],
                    strict=True)) == HOSTNAME_RING
    assert hosts_of(r, [0, U64_MAX, 7225015537174310577, 6803900775736438537]) == [
        hosts[5], hosts[5], hosts[2], hosts[3]]


def test_ring_basic_with_metadata_hash_key() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, BasicWithMetadataHashKey): hash_key "90".."95"
    hosts = ports(90, 91, 92, 93, 94, 95)
    r = EnvoyRingHash(hosts, minimum_ring_size=12, hash_keys={h: h[-2:] for h in hosts})
    assert list(zip(r.positions.tolist(), [r.nodes[i][-2:] for i in r.owners],
                    strict=True)) == HOSTNAME_RING
    assert hosts_of(r, [0, U64_MAX, 7225015537174310577, 6803900775736438537]) == [
        hosts[5], hosts[5], hosts[2], hosts[3]]
    assert r.hash_keys[hosts[0]] == "90"


def test_ring_uneven_hosts() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, UnevenHosts)
    r = EnvoyRingHash(ports(80, 81), minimum_ring_size=3)
    assert r.ring_size == 4 and set(r.hashes_per_host.values()) == {2}
    assert list(zip(r.positions.tolist(), [r.nodes[i] for i in r.owners], strict=True)) == [
        (5454692015285649509, A(80)), (7859399908942313493, A(81)),
        (13838424394637650569, A(80)), (16064866803292627174, A(81))]
    assert hosts_of(r, [0]) == [A(80)]
    r = EnvoyRingHash(ports(81, 82), minimum_ring_size=3)
    assert list(zip(r.positions.tolist(), [r.nodes[i] for i in r.owners], strict=True)) == [
        (7859399908942313493, A(81)), (8241336090459785962, A(82)),
        (12882406409176325258, A(82)), (16064866803292627174, A(81))]
    assert hosts_of(r, [0]) == [A(81)]


TINY = {928266305478181108: 2, 4443673547860492590: 2, 5583722120771150861: 1,
        6311230543546372928: 1, 13444792449719432967: 2, 16117243373044804889: 0}


def test_ring_host_weighted_tiny_ring() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, HostWeightedTinyRing)
    hosts = ports(90, 91, 92)
    r = EnvoyRingHash(dict(zip(hosts, [1, 2, 3], strict=True)), minimum_ring_size=6,
                      maximum_ring_size=6)
    assert r.ring_size == 6 and r.hashes_per_host == {A(90): 1, A(91): 2, A(92): 3}
    assert hosts_of(r, list(TINY)) == [hosts[i] for i in TINY.values()]


def test_ring_host_weighted_large_ring() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, HostWeightedLargeRing)
    hosts = ports(90, 91, 92)
    r = EnvoyRingHash(dict(zip(hosts, [1, 2, 3], strict=True)), minimum_ring_size=6144)
    assert r.ring_size == 6144 and r.hashes_per_host == {A(90): 1024, A(91): 2048,
                                                         A(92): 3072}
    assert spread(r, 6000) == {A(90): 987, A(91): 1932, A(92): 3081}


def test_ring_zero_locality_weights() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, ZeroLocalityWeights): no host is chosen
    r = EnvoyRingHash(ports(90, 91), localities={A(90): "/A", A(91): "/B"},
                      locality_weights={"/A": 0, "/B": 0})
    with pytest.raises(EmptyRingError):
        r.lookup([0])
    with pytest.raises(EmptyRingError):
        r.get("x")


def zones(hosts: list[str], zs: str) -> dict[str, str]:
    return {h: f"/{z}" for h, z in zip(hosts, zs, strict=True)}


def test_ring_locality_weighted_tiny_ring() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, LocalityWeightedTinyRing)
    hosts = ports(90, 91, 92, 93)
    r = EnvoyRingHash(hosts, localities=zones(hosts, "ABCD"),
                      locality_weights={"/A": 1, "/B": 2, "/C": 3, "/D": 0},
                      minimum_ring_size=6, maximum_ring_size=6)
    assert r.ring_size == 6
    assert r.hashes_per_host == {A(90): 1, A(91): 2, A(92): 3, A(93): 0}
    assert hosts_of(r, list(TINY)) == [hosts[i] for i in TINY.values()]


def test_ring_locality_weighted_large_ring() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, LocalityWeightedLargeRing)
    hosts = ports(90, 91, 92, 93)
    r = EnvoyRingHash(hosts, localities=zones(hosts, "ABCD"),
                      locality_weights={"/A": 1, "/B": 2, "/C": 3, "/D": 0},
                      minimum_ring_size=6144)
    assert r.ring_size == 6144
    assert r.hashes_per_host == {A(90): 1024, A(91): 2048, A(92): 3072, A(93): 0}
    assert spread(r, 6000) == {A(90): 987, A(91): 1932, A(92): 3081, A(93): 0}


def test_ring_host_and_locality_weighted_tiny_ring() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, HostAndLocalityWeightedTinyRing)
    hosts = ports(90, 91, 92, 93)
    r = EnvoyRingHash(dict(zip(hosts, [1, 2, 1, 2], strict=True)),
                      localities=zones(hosts, "AABB"), locality_weights={"/A": 1, "/B": 2},
                      minimum_ring_size=9, maximum_ring_size=9)
    assert r.ring_size == 9
    assert r.hashes_per_host == {A(90): 1, A(91): 2, A(92): 2, A(93): 4}
    expect = {928266305478181108: 2, 3851675632748031481: 3, 5583722120771150861: 1,
              6311230543546372928: 1, 7700377290971790572: 3, 12559126875973811811: 3,
              13444792449719432967: 2, 13784988426630141778: 3, 16117243373044804889: 0}
    assert hosts_of(r, list(expect)) == [hosts[i] for i in expect.values()]


def test_ring_host_and_locality_weighted_large_ring() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, HostAndLocalityWeightedLargeRing)
    hosts = ports(90, 91, 92, 93)
    r = EnvoyRingHash(dict(zip(hosts, [1, 2, 1, 2], strict=True)),
                      localities=zones(hosts, "AABB"), locality_weights={"/A": 1, "/B": 2},
                      minimum_ring_size=9216)
    assert r.ring_size == 9216
    assert min(r.hashes_per_host.values()) == 1024 and max(r.hashes_per_host.values()) == 4096
    assert spread(r, 9000) == {A(90): 924, A(91): 2009, A(92): 2053, A(93): 4014}


def test_ring_small_fractional_scale() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, SmallFractionalScale)
    r = EnvoyRingHash(ports(90, 91, 92, 93), minimum_ring_size=2, maximum_ring_size=2)
    assert r.ring_size == 2
    assert min(r.hashes_per_host.values()) == 0 and max(r.hashes_per_host.values()) == 1
    counts = spread(r, 1024)
    assert sorted(counts.values())[:2] == [0, 0] and sum(counts.values()) == 1024


def test_ring_large_fractional_scale() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, LargeFractionalScale)
    r = EnvoyRingHash(ports(90, 91), minimum_ring_size=1023, maximum_ring_size=1023)
    assert r.ring_size == 1023 and sorted(r.hashes_per_host.values()) == [511, 512]
    assert spread(r, 1023) == {A(90): 526, A(91): 497}


def test_ring_lopsided_weight_small_scale() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, LopsidedWeightSmallScale)
    hosts = [A(i) for i in range(1024)]
    r = EnvoyRingHash(hosts, localities={h: "/A" if i == 0 else "/B"
                                         for i, h in enumerate(hosts)},
                      locality_weights={"/A": 127, "/B": 1},
                      minimum_ring_size=1024, maximum_ring_size=1024)
    assert r.ring_size == 1024
    assert min(r.hashes_per_host.values()) == 0 and max(r.hashes_per_host.values()) == 1016
    expect = {11664790346325243808: 1, 15894554872961148518: 128, 13958138884277627155: 256,
              15803774069438192949: 384, 3829253010855396576: 512, 17918147347826565154: 640,
              6442769608292299103: 768, 5881074926069334434: 896}
    assert hosts_of(r, list(expect)) == [hosts[i] for i in expect.values()]


def test_ring_bad_ring_size_bounds() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, BadRingSizeBounds)
    with pytest.raises(ValueError, match=r"minimum_ring_size \(20\) > maximum_ring_size \(10\)"):
        EnvoyRingHash([A(80)], minimum_ring_size=20, maximum_ring_size=10)


def test_ring_no_host() -> None:
    # RING: TEST_P(RingHashLoadBalancerTest, NoHost)
    with pytest.raises(EmptyRingError):
        EnvoyRingHash([]).lookup([0])


# ------------------------------------------------------------------------------------------
# maglev: MAGLEV's tests
# ------------------------------------------------------------------------------------------

def table_hosts(m: Any, n: int) -> list[str]:
    """Hosts of hashes 0 .. n - 1, as MAGLEV's loops over TestLoadBalancerContext(i)."""
    return hosts_of(m, list(range(n)))


def test_maglev_no_host_and_bad_sizes() -> None:
    # MAGLEV: TEST_F(MaglevLoadBalancerTest, NoHost), NoPrimeNumber, DefaultMaglevTableSize
    with pytest.raises(EmptyRingError):
        EnvoyMaglev([], table_size=7).lookup([0])
    with pytest.raises(ValueError, match="must be prime"):
        EnvoyMaglev([A(90)], table_size=8)
    assert EnvoyMaglev([A(90)]).table_size == 65537


def test_maglev_single_host() -> None:
    # MAGLEV: TEST_F(MaglevLoadBalancerTest, SingleHost) and WeightedSingleHost (their
    # entries gauges say 1: the newest Envoy keeps one host in a one-entry table; every hash
    # still goes to it, which is what is checked here)
    assert table_hosts(EnvoyMaglev([A(90)], table_size=7), 5) == [A(90)] * 5
    assert table_hosts(EnvoyMaglev({A(90): 7}, table_size=17), 17) == [A(90)] * 17


BASIC_TABLE = [2, 4, 0, 1, 5, 0, 3]


def test_maglev_basic() -> None:
    # MAGLEV: TEST_F(MaglevLoadBalancerTest, Basic)
    hosts = ports(90, 91, 92, 93, 94, 95)
    m = EnvoyMaglev(hosts, table_size=7)
    counts = m.entries_per_host.values()
    assert min(counts) == 1 and max(counts) == 2
    assert table_hosts(m, 21) == [hosts[BASIC_TABLE[i % 7]] for i in range(21)]


def test_maglev_basic_stability() -> None:
    # MAGLEV: TEST_F(MaglevLoadBalancerTest, BasicStability): host order does not matter
    hosts = ports(90, 91, 92, 93, 94, 95)
    shuffled = hosts[:]
    random.Random(3).shuffle(shuffled)
    m = EnvoyMaglev(shuffled, table_size=7)
    assert table_hosts(m, 21) == [hosts[BASIC_TABLE[i % 7]] for i in range(21)]


def test_maglev_retry_hashes() -> None:
    # MAGLEV: TEST_F(MaglevLoadBalancerTest, BasicWithRetryHostPredicate): attempt k routes
    # hash ^ (~0 - k + 1) (OriginalMaglevTable::chooseHost)
    hosts = ports(90, 91, 92, 93, 94, 95)
    m = EnvoyMaglev(hosts, table_size=7)
    assert hosts_of(m, [10, 10 ^ U64_MAX, 10 ^ (U64_MAX - 1)]) == [hosts[1], hosts[0],
                                                                   hosts[5]]


def test_maglev_basic_with_hostname_and_hash_key() -> None:
    # MAGLEV: TEST_F(MaglevLoadBalancerTest, BasicWithHostName), BasicWithMetadataHashKey
    # (and BasicWithBoundedLoad, which asserts the same table)
    expect = [2, 5, 0, 3, 4, 1, 0]
    names = ["90", "91", "92", "93", "94", "95"]
    m = EnvoyMaglev(names, table_size=7)
    assert table_hosts(m, 21) == [names[expect[i % 7]] for i in range(21)]
    hosts = ports(90, 91, 92, 93, 94, 95)
    m = EnvoyMaglev(hosts, table_size=7, hash_keys={h: h[-2:] for h in hosts})
    assert table_hosts(m, 21) == [hosts[expect[i % 7]] for i in range(21)]
    assert min(m.entries_per_host.values()) == 1 and max(m.entries_per_host.values()) == 2


def test_maglev_weighted() -> None:
    # MAGLEV: TEST_F(MaglevLoadBalancerTest, Weighted)
    hosts = ports(90, 91)
    m = EnvoyMaglev({A(90): 1, A(91): 2}, table_size=17)
    assert m.entries_per_host == {A(90): 6, A(91): 11}
    expect = [1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1]
    assert table_hosts(m, 51) == [hosts[expect[i % 17]] for i in range(51)]


def test_maglev_locality_weighted_same_weights() -> None:
    # MAGLEV: LocalityWeightedSameLocalityWeights (and LocalityWeightedGlobalPanic: with no
    # healthy host Envoy uses them all, the same two hosts)
    hosts = ports(90, 91)
    m = EnvoyMaglev({A(90): 1, A(91): 2}, table_size=17, localities=zones(hosts, "AB"),
                    locality_weights={"/A": 1, "/B": 1})
    assert m.entries_per_host == {A(90): 9, A(91): 8}
    expect = [1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 1]
    assert table_hosts(m, 51) == [hosts[expect[i % 17]] for i in range(51)]


def test_maglev_locality_weighted_different_weights() -> None:
    # MAGLEV: LocalityWeightedDifferentLocalityWeights: :90 in A (8), :91 in C (2), :92 in
    # B (0)
    hosts = ports(90, 91, 92)
    m = EnvoyMaglev(dict(zip(hosts, [1, 2, 3], strict=True)), table_size=17,
                    localities=zones(hosts, "ACB"),
                    locality_weights={"/A": 8, "/B": 0, "/C": 2})
    assert m.entries_per_host == {A(90): 13, A(91): 4, A(92): 0}
    expect = [1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0]
    assert table_hosts(m, 51) == [hosts[expect[i % 17]] for i in range(51)]


def test_maglev_locality_weighted_all_zero() -> None:
    # MAGLEV: LocalityWeightedAllZeroLocalityWeights
    m = EnvoyMaglev([A(90)], table_size=17, localities={A(90): "/A"},
                    locality_weights={"/A": 0})
    with pytest.raises(EmptyRingError):
        m.lookup([0])


def test_maglev_locality_weighted_lopsided() -> None:
    # MAGLEV: LocalityWeightedLopsided
    hosts = [A(i) for i in range(1024)]
    m = EnvoyMaglev(hosts, localities={h: "/A" if i == 0 else "/B"
                                       for i, h in enumerate(hosts)},
                    locality_weights={"/A": 127, "/B": 1})
    counts = np.bincount(m.lookup(np.arange(65537, dtype=np.uint64)), minlength=1024)
    assert counts[0] == 65537 - 1023 and (counts[1:] == 1).all()


# ------------------------------------------------------------------------------------------
# Against the pure-Python transcription, directly and through the golden vectors
# ------------------------------------------------------------------------------------------

VECTORS = json.loads((DATA / "envoy_vectors.json").read_text(encoding="utf-8"))


def build(c: dict[str, Any]) -> Any:
    cls = EnvoyRingHash if c["kind"] == "ring" else EnvoyMaglev
    return cls(dict(zip(c["hosts"], c["weights"], strict=True)), **c["options"],
               hash_keys=c["hash_keys"] or None, localities=c["localities"] or None,
               locality_weights=c["locality_weights"])


def digest(idx: Any) -> str:
    return hashlib.sha256(",".join(map(str, np.asarray(idx).tolist())).encode()).hexdigest()


def test_vectors_cover_the_configurations() -> None:
    assert VECTORS.keys() == vector_configs().keys()
    assert {v["config"]["kind"] for v in VECTORS.values()} == {"ring", "maglev"}
    assert {len(v["config"]["hosts"]) for v in VECTORS.values()} >= {3, 5, 24, 25}


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_golden_vectors(name: str) -> None:
    c, e = VECTORS[name]["config"], VECTORS[name]["expect"]
    assert c == vector_configs()[name]  # the file is what the generator writes
    r = build(c)
    if c["kind"] == "ring":
        assert r.ring_size == e["ring_size"]
        assert list(r.hashes_per_host.values()) == e["hashes_per_host"]
    else:
        assert list(r.entries_per_host.values()) == e["entries_per_host"]
    keys = ref.vector_keys()
    by_key = r.get_indices(keys)
    assert by_key[:200].tolist() == e["keys_head"]
    assert digest(by_key) == e["keys_sha256"]
    extra = [int(x, 16) for x in e["extra_hashes"].split()]
    hashes = np.array(ref.vector_hashes() + extra, dtype=np.uint64)
    by_hash = r.lookup(hashes)
    assert by_hash[:200].tolist() == e["hashes_head"]
    assert digest(by_hash) == e["hashes_sha256"]
    # str keys (the UTF-8 ones decoded) route as their bytes do
    text = [k.decode("utf-8") for k in keys]
    assert (r.get_indices(text) == by_key).all()
    assert [r.get(k) for k in text[:50]] == [r.nodes[i] for i in by_key[:50]]


def random_cluster(rnd: random.Random) -> tuple[list[tuple[str, int, Any]], dict[Any, int] | None]:
    n = rnd.randrange(1, 12)
    hosts = []
    for i in range(n):
        name = rnd.choice([f"10.{rnd.randrange(256)}.0.{i}:{rnd.randrange(1, 65536)}",
                           f"host-{i}-{rnd.getrandbits(16)}.svc", f"[fd00::{i:x}]:80"])
        hosts.append((name, rnd.choice([1, 1, 2, 3, 7, 100]), ("r", rnd.choice("xyz"), "")))
    lw = None
    if rnd.random() < 0.4:
        lw = {("r", z, ""): rnd.choice([0, 1, 2, 5]) for z in "xyz"}
    return hosts, lw


def router_of(hosts: list[tuple[str, int, Any]], lw: dict[Any, int] | None, cls: Any,
              **kw: Any) -> Any:
    return cls({h: w for h, w, _ in hosts}, localities={h: loc for h, _, loc in hosts},
               locality_weights=lw, **kw)


def test_ring_against_the_transcription_on_random_clusters() -> None:
    rnd = random.Random(2024)
    for _ in range(60):
        hosts, lw = random_cluster(rnd)
        mn = rnd.choice([1, 5, 64, 1024, 3000])
        mx = rnd.choice([mn, mn + 7, 8 * 1024 * 1024])
        hf = rnd.choice(envoy.HASH_FUNCTIONS)
        ring, per, _ = ref.ring_build(hosts, lw, mn, mx, hf)
        r = router_of(hosts, lw, EnvoyRingHash, minimum_ring_size=mn, maximum_ring_size=mx,
                      hash_function=hf)
        assert r.positions.tolist() == [p for p, _ in ring]
        assert r.owners.tolist() == [i for _, i in ring]
        if not ring:
            continue
        hs = [rnd.getrandbits(64) for _ in range(500)] + [p for p, _ in ring[:50]]
        assert r.lookup(np.array(hs, dtype=np.uint64)).tolist() == [
            ring[ref.ring_choose(ring, h)][1] for h in hs]


def test_maglev_against_the_transcription_on_random_clusters() -> None:
    rnd = random.Random(4048)
    for _ in range(40):
        hosts, lw = random_cluster(rnd)
        m = rnd.choice([2, 3, 7, 17, 251, 1009, 4093])
        table = ref.maglev_build(hosts, lw, m)
        r = router_of(hosts, lw, EnvoyMaglev, table_size=m)
        assert r.table.tolist() == table
        if table:
            hs = [rnd.getrandbits(64) for _ in range(300)]
            assert r.lookup(np.array(hs, dtype=np.uint64)).tolist() == [
                table[h % m] for h in hs]


def test_the_transcribed_search_is_first_entry_at_or_after() -> None:
    """Envoy's ketama-style binary search is 'first entry >= h, wrapping' (what _Ring does)."""
    import bisect

    rnd = random.Random(9)
    for size in (1, 2, 3, 7, 100):
        pos = sorted(rnd.getrandbits(64) for _ in range(size))
        ring = [(p, 0) for p in pos]
        for h in [0, U64_MAX] + pos + [p + 1 for p in pos] + [p - 1 for p in pos if p]:
            assert ref.ring_choose(ring, h) == bisect.bisect_left(pos, h) % size


# ------------------------------------------------------------------------------------------
# Changes, movement
# ------------------------------------------------------------------------------------------

def test_add_remove_rebuild_as_envoy_would() -> None:
    hosts = ports(90, 91, 92, 93)
    r = EnvoyRingHash(hosts[:3], minimum_ring_size=64)
    r.add(hosts[3])
    assert r == EnvoyRingHash(hosts, minimum_ring_size=64)
    r.set_weight(hosts[0], 3)
    assert r == EnvoyRingHash({hosts[0]: 3, **dict.fromkeys(hosts[1:], 1)},
                              minimum_ring_size=64)
    r.remove(hosts[0])
    assert r == EnvoyRingHash(hosts[1:], minimum_ring_size=64)
    with pytest.raises(KeyError):
        r.remove(hosts[0])
    with pytest.raises(ValueError, match="already"):
        r.add(hosts[1])
    m = EnvoyMaglev(hosts, table_size=17)
    m.remove(hosts[2])
    assert m.table.tolist() == [i if i < 2 else i for i in EnvoyMaglev(
        [h for h in hosts if h != hosts[2]], table_size=17).table.tolist()]


def test_movement_exact_for_rings_and_the_survivor_surprise() -> None:
    """ring_hash spreads a fixed ring size over the hosts: adding a fourth host shrinks
    every survivor's share of entries, so keys also move between survivors."""
    old = EnvoyRingHash(ports(90, 91, 92))
    new = EnvoyRingHash(ports(90, 91, 92, 93))
    mv = movement(old, new)
    assert mv.exact
    between_survivors = sum(s for (a, b), s in mv.flows.items() if b != A(93))
    assert between_survivors > 0.005
    # the exact figures agree with routing 200,000 random hashes through the transcription
    ring_o, _, _ = ref.ring_build([(h, 1, None) for h in old.nodes], None, 1024, 8 << 20,
                                  "XX_HASH")
    ring_n, _, _ = ref.ring_build([(h, 1, None) for h in new.nodes], None, 1024, 8 << 20,
                                  "XX_HASH")
    rnd = np.random.default_rng(1)
    hs = rnd.integers(0, U64_MAX, 200_000, dtype=np.uint64, endpoint=True)
    po, pn = np.array([p for p, _ in ring_o], np.uint64), np.array([p for p, _ in ring_n],
                                                                     np.uint64)
    oo = np.array([i for _, i in ring_o])[np.searchsorted(po, hs) % len(po)]
    on = np.array([i for _, i in ring_n])[np.searchsorted(pn, hs) % len(pn)]
    est = float((oo != on).mean())
    assert abs(est - mv.moved) < 0.01
    plan = migration_plan(old, new)
    assert abs(plan.moved - mv.moved) < 1e-12


def test_movement_estimated_for_maglev() -> None:
    old = EnvoyMaglev(ports(90, 91, 92), table_size=1009)
    new = EnvoyMaglev(ports(90, 91, 92, 93), table_size=1009)
    mv = movement(old, new)
    assert not mv.exact and 0.2 < mv.moved < 0.4


# ------------------------------------------------------------------------------------------
# from_config
# ------------------------------------------------------------------------------------------

def endpoints_yaml(hosts: list[tuple[str, int]], weights: list[int] | None = None,
                   indent: str = "    ") -> str:
    lines = [f"{indent}load_assignment:", f"{indent}  cluster_name: c",
             f"{indent}  endpoints:", f"{indent}  - lb_endpoints:"]
    for k, (ip, port) in enumerate(hosts):
        lines += [f"{indent}    - endpoint:",
                  f"{indent}        address:",
                  f"{indent}          socket_address: {{address: {ip}, port_value: {port}}}"]
        if weights:
            lines.append(f"{indent}      load_balancing_weight: {weights[k]}")
    return "\n".join(lines) + "\n"


RING_YAML = """\
name: backend
type: STATIC
lb_policy: RING_HASH
ring_hash_lb_config:
  minimum_ring_size: 12
""" + endpoints_yaml([("127.0.0.1", p) for p in range(90, 96)], indent="")


def test_from_config_ring_yaml_is_envoys_basic() -> None:
    r = from_config(RING_YAML)
    assert isinstance(r, EnvoyRingHash)
    assert r == EnvoyRingHash(ports(90, 91, 92, 93, 94, 95), minimum_ring_size=12)
    assert list(zip(r.positions.tolist(), [int(r.nodes[i][-2:]) for i in r.owners],
                    strict=True)) == BASIC_RING


def test_from_config_json_dict_and_bootstrap() -> None:
    import yaml

    doc = yaml.safe_load(RING_YAML)
    assert from_config(doc) == from_config(json.dumps(doc)) == from_config(RING_YAML)
    camel = {"name": "backend", "type": "STATIC", "lbPolicy": "RING_HASH",
             "ringHashLbConfig": {"minimumRingSize": "12"},
             "loadAssignment": {"endpoints": [{"lbEndpoints": [
                 {"endpoint": {"address": {"socketAddress": {"address": "127.0.0.1",
                                                             "portValue": p}}}}
                 for p in range(90, 96)]}]}}
    assert from_config(json.dumps(camel)) == from_config(doc)
    boot = {"static_resources": {"clusters": [doc]}}
    assert from_config(json.dumps(boot)) == from_config(doc)
    two = {"static_resources": {"clusters": [doc, {**doc, "name": "other",
                                                   "lb_policy": "MAGLEV"}]}}
    with pytest.raises(ValueError, match="'backend', 'other'"):
        from_config(two)
    assert isinstance(from_config(two, name="other"), EnvoyMaglev)
    with pytest.raises(ValueError, match="no cluster named 'x'"):
        from_config(two, name="x")


def test_from_config_typed_load_balancing_policy() -> None:
    text = """\
name: typed
load_balancing_policy:
  policies:
  - typed_extension_config:
      name: envoy.load_balancing_policies.ring_hash
      typed_config:
        "@type": type.googleapis.com/envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash
        hash_function: MURMUR_HASH_2
        minimum_ring_size: 12
        consistent_hashing_lb_config: {use_hostname_for_hashing: true}
load_assignment:
  endpoints:
  - lb_endpoints:
""" + "".join(f"    - endpoint: {{hostname: '{p}', address: {{socket_address: "
              f"{{address: 127.0.0.1, port_value: {p}}}}}}}\n" for p in range(80, 86))
    r = from_config(text)
    assert r == EnvoyRingHash([str(p) for p in range(80, 86)], minimum_ring_size=12,
                              hash_function="MURMUR_HASH_2")
    # RingHash's deprecated use_hostname_for_hashing (counts without consistent_hashing_lb_config)
    old_style = text.replace("consistent_hashing_lb_config: {use_hostname_for_hashing: true}",
                             "use_hostname_for_hashing: true")
    assert from_config(old_style) == r
    maglev = text.replace("ring_hash.v3.RingHash", "maglev.v3.Maglev").replace(
        "hash_function: MURMUR_HASH_2", "table_size: 7").replace(
        "        minimum_ring_size: 12\n", "")
    m = from_config(maglev)
    assert isinstance(m, EnvoyMaglev) and m.table_size == 7


def test_from_config_maglev_weights_localities_metadata() -> None:
    # MAGLEV: LocalityWeightedDifferentLocalityWeights, as a cluster config
    text = """\
name: m
lb_policy: MAGLEV
maglev_lb_config: {table_size: 17}
common_lb_config: {locality_weighted_lb_config: {}}
load_assignment:
  endpoints:
  - locality: {zone: A}
    load_balancing_weight: 8
    lb_endpoints:
    - endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: 90}}}
      load_balancing_weight: 1
  - locality: {zone: C}
    load_balancing_weight: 2
    lb_endpoints:
    - endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: 91}}}
      load_balancing_weight: 2
  - locality: {zone: B}
    lb_endpoints:
    - endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: 92}}}
      load_balancing_weight: 3
      metadata: {filter_metadata: {envoy.lb: {hash_key: shard-92}}}
"""
    m = from_config(text)
    hosts = ports(90, 91, 92)
    expect = [1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0]
    assert table_hosts(m, 17) == [hosts[i] for i in expect]
    assert m.hash_keys[A(92)] == "shard-92" and m.weights == {A(90): 1, A(91): 2, A(92): 3}


def test_from_config_addresses_and_refusals() -> None:
    base = {"name": "c", "lb_policy": "RING_HASH", "load_assignment": {"endpoints": [
        {"lb_endpoints": [{"endpoint": {"address": {"socket_address": {
            "address": "0:0:0:0:0:0:0:1", "port_value": 80}}}}]}]}}
    assert from_config(base).nodes == ("[::1]:80",)
    ep = base["load_assignment"]["endpoints"][0]["lb_endpoints"][0]
    ep["endpoint"]["address"]["socket_address"]["address"] = "backend.svc"
    with pytest.raises(ValueError, match="not an IP address"):
        from_config(base)
    ep["endpoint"]["address"]["socket_address"]["address"] = "10.0.0.1"
    ep["health_status"] = "UNHEALTHY"
    with pytest.raises(ValueError, match="health_status"):
        from_config(base)
    del ep["health_status"]
    bounded = {**base, "common_lb_config": {"consistent_hashing_lb_config": {
        "hash_balance_factor": 150}}}
    with pytest.raises(ValueError, match="hash_balance_factor"):
        from_config(bounded)
    with pytest.raises(ValueError, match="ROUND_ROBIN"):
        from_config({**base, "lb_policy": "ROUND_ROBIN"})
    with pytest.raises(ValueError, match="hostname"):
        from_config({**base, "common_lb_config": {"consistent_hashing_lb_config": {
            "use_hostname_for_hashing": True}}})
    with pytest.raises(TypeError, match="text"):
        from_config(42)
    # failover priorities: a fully healthy cluster routes to the lowest priority present
    base["load_assignment"]["endpoints"].append({"priority": 1, "lb_endpoints": [
        {"endpoint": {"address": {"socket_address": {"address": "10.0.0.2",
                                                     "port_value": 80}}}}]})
    assert from_config(base).nodes == ("10.0.0.1:80",)


def _config_dump(include_eds: bool = True) -> dict[str, Any]:
    """An admin /config_dump document (envoy.admin.v3.ConfigDump as Envoy serves it: a list of
    typed dumps, each cluster and endpoint config an Any with its @type): a static ring hash
    cluster, an EDS Maglev cluster delivered by CDS, one still warming, and (with
    ?include_eds) the endpoints."""
    import yaml

    static = yaml.safe_load(RING_YAML)
    admin = "type.googleapis.com/envoy.admin.v3."
    cluster_t = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
    cla_t = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
    dyn = {"@type": cluster_t, "name": "dyn", "type": "EDS", "lb_policy": "MAGLEV",
           "eds_cluster_config": {"eds_config": {"ads": {}}, "service_name": "dyn-svc"},
           "maglev_lb_config": {"table_size": "307"}}
    warming = {"@type": cluster_t, "name": "warming", "type": "EDS", "lb_policy": "RING_HASH"}
    dyn_cla = {"@type": cla_t, "cluster_name": "dyn-svc", "endpoints": [{"lb_endpoints": [
        {"endpoint": {"address": {"socket_address": {"address": f"10.1.0.{i}",
                                                     "port_value": 8080}}},
         "load_balancing_weight": i} for i in (1, 2, 3)]}]}
    configs: list[dict[str, Any]] = [
        {"@type": admin + "BootstrapConfigDump",
         "bootstrap": {"static_resources": {"clusters": [static]}},
         "last_updated": "2024-05-06T07:08:09Z"},
        {"@type": admin + "ClustersConfigDump", "version_info": "v7",
         "static_clusters": [{"cluster": {"@type": cluster_t, **static},
                              "last_updated": "2024-05-06T07:08:09Z"}],
         "dynamic_active_clusters": [{"version_info": "v7", "cluster": dyn,
                                      "last_updated": "2024-05-06T07:08:10Z"}],
         "dynamic_warming_clusters": [{"version_info": "v8", "cluster": warming}]},
        {"@type": admin + "ListenersConfigDump", "version_info": "v7"},
    ]
    if include_eds:
        configs.append({"@type": admin + "EndpointsConfigDump",
                        "static_endpoint_configs": [{"endpoint_config": {
                            "@type": cla_t, **static["load_assignment"]}}],
                        "dynamic_endpoint_configs": [{"version_info": "v7",
                                                      "endpoint_config": dyn_cla}]})
    return {"configs": configs}


def test_from_config_reads_an_admin_config_dump() -> None:
    """An Envoy /config_dump gave "cluster '' has lb_policy 'ROUND_ROBIN'": the whole document
    was taken for one cluster.  Its clusters are the ones serving traffic (static and dynamic
    active, not warming), an EDS cluster's endpoints come from the dump's endpoints."""
    import yaml

    dump = _config_dump()
    with pytest.raises(ValueError, match="'backend', 'dyn'") as ei:
        from_config(dump)
    assert "warming" not in str(ei.value)
    assert from_config(dump, name="backend") == from_config(RING_YAML)
    assert from_config(json.dumps(dump, indent=2), name="backend") == from_config(RING_YAML)
    dyn = from_config(dump, name="dyn")
    assert dyn == EnvoyMaglev({"10.1.0.1:8080": 1, "10.1.0.2:8080": 2, "10.1.0.3:8080": 3},
                              table_size=307)
    # as the CLI and config.load read files: recognised as Envoy's, from JSON or YAML
    for text in (json.dumps(dump, indent=2), yaml.safe_dump(dump)):
        assert config.detect(text) == "envoy"
        assert config.from_text(text, name="dyn") == dyn
    # without ?include_eds an EDS cluster has no endpoints in the dump: say so
    with pytest.raises(ValueError, match="include_eds") as ei:
        from_config(_config_dump(include_eds=False), name="dyn")
    assert "'dyn'" in str(ei.value) and "EDS" in str(ei.value)
    assert from_config(_config_dump(include_eds=False), name="backend") == from_config(
        RING_YAML)
    with pytest.raises(ValueError, match="warming"):
        from_config(dump, name="warming")


@pytest.mark.parametrize("doc", [
    {"configs": [{"@type": "type.googleapis.com/envoy.admin.v3.ListenersConfigDump"}]},
    {"configs": []},
    {"admin": {"address": {"socket_address": {"address": "127.0.0.1", "port_value": 9901}}}},
    {"version_info": "1"},
])
def test_from_config_refuses_a_document_with_no_cluster(doc: dict[str, Any]) -> None:
    with pytest.raises(ValueError) as ei:
        from_config(doc)
    msg = str(ei.value)
    assert "no" in msg and "cluster" in msg and "ROUND_ROBIN" not in msg and "''" not in msg


def test_from_config_movement_between_two_configs() -> None:
    old = from_config(RING_YAML)
    new = from_config(RING_YAML.replace("port_value: 95}", "port_value: 96}"))
    mv = movement(old, new)
    assert mv.exact and 0 < mv.moved < 1
    assert any(a == A(95) for a, _ in mv.flows) and any(b == A(96) for _, b in mv.flows)
    assert A(95) not in new and A(96) in new


# ------------------------------------------------------------------------------------------
# Arguments
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("call", "exc", "pattern"), [
    (lambda: EnvoyRingHash("a:1"), TypeError, "single str"),
    (lambda: EnvoyRingHash([1]), TypeError, "str"),
    (lambda: EnvoyRingHash([""]), ValueError, "empty"),
    (lambda: EnvoyRingHash(["a", "a"]), ValueError, "duplicate"),
    (lambda: EnvoyRingHash({"a": 0}), ValueError, "weight"),
    (lambda: EnvoyRingHash({"a": 1.5}), TypeError, "weight"),
    (lambda: EnvoyRingHash({"a": 2**32 - 1, "b": 1}), ValueError, "sum"),
    (lambda: EnvoyRingHash(["a"], hash_function="CRC"), ValueError, "hash_function"),
    (lambda: EnvoyRingHash(["a"], minimum_ring_size=0), ValueError, "minimum_ring_size"),
    (lambda: EnvoyRingHash(["a"], maximum_ring_size=2**24), ValueError, "maximum_ring_size"),
    (lambda: EnvoyRingHash(["a", "b"], hash_keys={"a": "k", "b": "k"}), ValueError, "same key"),
    (lambda: EnvoyRingHash(["a", "b"], hash_keys={"a": "b"}), ValueError, "same key"),
    (lambda: EnvoyRingHash(["a"], hash_keys={"z": "k"}), KeyError, "z"),
    (lambda: EnvoyRingHash(["a"], localities={"a": "/A"}, locality_weights={"/B": 1}),
     ValueError, "locality_weights"),
    (lambda: EnvoyRingHash(["a"], localities={"a": 5}), TypeError, "locality"),
    (lambda: EnvoyMaglev(["a"], table_size=5000101), ValueError, "table_size"),
    (lambda: EnvoyMaglev(["a"], table_size=65536), ValueError, "prime"),
])
def test_bad_arguments(call: Any, exc: type, pattern: str) -> None:
    with pytest.raises(exc, match=pattern):
        call()


def test_failed_change_leaves_the_router_unchanged() -> None:
    r = EnvoyRingHash({"a:1": 1, "b:1": 1})
    before = r.to_bytes()
    with pytest.raises(ValueError):
        r.set_weight("a:1", 2**32 - 1)
    with pytest.raises(TypeError):
        r.add(5)  # type: ignore[arg-type]
    assert r.to_bytes() == before


def test_ring_counts_follow_host_order_maglev_does_not() -> None:
    """docs/agreeing-with-envoy.md: fractional entry counts are rounded by the running sum
    over the hosts in order, so the order of the endpoints matters to ring_hash (weights
    1, 1, 1, 1, 2 on 7 entries: 2, 1, 1, 1, 2 listed one way, 1, 1, 1, 1, 3 the other);
    Maglev sorts by hash key first.  (Equal hosts can also get one entry more than
    maximum_ring_size: 5 on 7 entries get 2, 1, 2, 1, 2, as the sum 1.4 + ... + 1.4 is
    7.000000000000001 in doubles.)"""
    hosts = ports(90, 91, 92, 93, 94)
    ws = [1, 1, 1, 1, 2]
    a = EnvoyRingHash(dict(zip(hosts, ws, strict=True)), minimum_ring_size=7,
                      maximum_ring_size=7)
    b = EnvoyRingHash(dict(zip(hosts[::-1], ws[::-1], strict=True)), minimum_ring_size=7,
                      maximum_ring_size=7)
    assert [a.hashes_per_host[h] for h in hosts] == [2, 1, 1, 1, 2]
    assert [b.hashes_per_host[h] for h in hosts] == [1, 1, 1, 1, 3]
    eq = EnvoyRingHash(hosts, minimum_ring_size=7, maximum_ring_size=7)
    assert list(eq.hashes_per_host.values()) == [2, 1, 2, 1, 2] and eq.ring_size == 8
    ring, _, gauge = ref.ring_build([(h, 1, None) for h in hosts], None, 7, 7, "XX_HASH")
    assert len(ring) == 8 and gauge == 7
    ma, mb = EnvoyMaglev(hosts, table_size=17), EnvoyMaglev(hosts[::-1], table_size=17)
    assert [ma.nodes[i] for i in ma.table] == [mb.nodes[i] for i in mb.table]

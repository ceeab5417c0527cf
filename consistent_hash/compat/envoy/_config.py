"""Reading an Envoy cluster config (YAML, JSON, a bootstrap or a /config_dump) into a router."""


from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping
from typing import Any

from consistent_hash.compat.config import NameNeeded
from consistent_hash.compat.envoy._hosts import (
    DEFAULT_MAX_RING_SIZE,
    DEFAULT_MIN_RING_SIZE,
    DEFAULT_TABLE_SIZE,
    Locality,
    _locality_name,
)
from consistent_hash.compat.envoy._routers import (
    EnvoyMaglev,
    EnvoyRingHash,
)

# -- from an Envoy cluster config ---------------------------------------------------------------

_RING_TYPE = "envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash"
_MAGLEV_TYPE = "envoy.extensions.load_balancing_policies.maglev.v3.Maglev"
_HEALTHY = (None, "UNKNOWN", "HEALTHY", 0, 1)


def _parse(text: Any) -> Any:
    if isinstance(text, (Mapping, list)):
        return text
    if isinstance(text, os.PathLike):
        with open(text, encoding="utf-8") as f:
            text = f.read()
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    if not isinstance(text, str):
        raise TypeError("text must be the config as a str (YAML or JSON), bytes, a path, or "
                        f"an already parsed dict, got {type(text).__name__!r}")
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass  # YAML flow style, perhaps
    try:
        import yaml  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        raise ImportError("reading a YAML Envoy config needs pyyaml: pip install "
                          "'consistent-hash-ring[yaml]' (JSON needs nothing)") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ValueError(f"text is neither JSON nor YAML Envoy can read: {e}") from None


# A mapping with one of these is a cluster (snake_case, as _snake leaves the keys).
_CLUSTER_FIELDS = ("name", "lb_policy", "load_balancing_policy", "load_assignment",
                   "eds_cluster_config", "ring_hash_lb_config", "maglev_lb_config",
                   "common_lb_config")
_NO_CLUSTER = ("the config holds no Envoy cluster (expected a cluster, a list of clusters, a "
               "CDS response's resources, a bootstrap's static_resources.clusters or an admin "
               "/config_dump)")


def _clusters(doc: Any) -> tuple[list[dict[str, Any]], dict[str, str], dict[str, str]]:
    """The clusters of a document; the ones it names but cannot give (an admin /config_dump's
    EDS clusters without their endpoints) and the ones that serve no traffic (its warming
    clusters), each with why."""
    if isinstance(doc, list):
        return _entries(doc, "the list of clusters"), {}, {}
    if not isinstance(doc, Mapping):
        raise ValueError(_NO_CLUSTER)
    if "configs" in doc:
        return _dump_clusters(doc["configs"])
    if "static_resources" in doc:
        return _entries(_section(doc["static_resources"], "static_resources").get("clusters"),
                        "static_resources.clusters"), {}, {}
    for key in ("clusters", "resources"):
        if key in doc and isinstance(doc[key], list):
            return _entries(doc[key], key), {}, {}
    if not any(k in doc for k in _CLUSTER_FIELDS):
        raise ValueError(_NO_CLUSTER)
    return [dict(doc)], {}, {}


def _dump_clusters(configs: Any
                   ) -> tuple[list[dict[str, Any]], dict[str, str], dict[str, str]]:
    """An admin /config_dump (envoy.admin.v3.ConfigDump): the clusters serving traffic, static
    and dynamic active (ClustersConfigDump; the bootstrap's static clusters without one), an
    EDS cluster's endpoints taken from the EndpointsConfigDump (``?include_eds``)."""
    clusters: list[dict[str, Any]] = []
    boot: list[dict[str, Any]] = []
    no_endpoints: dict[str, str] = {}
    warming: dict[str, str] = {}
    assignments: dict[str, dict[str, Any]] = {}
    dumped = False
    for entry in _entries(configs, "configs"):
        kind = str(entry.get("@type", "")).rsplit(".", 1)[-1]
        if kind == "ClustersConfigDump":
            dumped = True
            for key in ("static_clusters", "dynamic_active_clusters", "dynamic_warming_clusters"):
                for e in _entries(entry.get(key), key):
                    c = _section(e.get("cluster"), f"an entry of {key}: cluster")
                    if key == "dynamic_warming_clusters":
                        warming[str(c.get("name", ""))] = (
                            "is still warming in this /config_dump: it serves no traffic yet")
                    else:
                        clusters.append(c)
        elif kind == "EndpointsConfigDump":
            for key in ("static_endpoint_configs", "dynamic_endpoint_configs"):
                for e in _entries(entry.get(key), key):
                    la = _section(e.get("endpoint_config"), f"an entry of {key}: endpoint_config")
                    assignments[str(la.get("cluster_name", ""))] = la
        elif kind == "BootstrapConfigDump":
            static = _section(_section(entry.get("bootstrap"), "bootstrap").get(
                "static_resources"), "bootstrap.static_resources")
            boot = _entries(static.get("clusters"), "bootstrap.static_resources.clusters")
    out = []
    for c in clusters if dumped else boot:
        c = {k: v for k, v in c.items() if k != "@type"}
        if "load_assignment" not in c:
            eds = _section(c.get("eds_cluster_config"), "eds_cluster_config")
            service = str(eds.get("service_name") or c.get("name", ""))
            if service in assignments:
                c["load_assignment"] = assignments[service]
            elif eds or c.get("type") == "EDS":
                no_endpoints[str(c.get("name", ""))] = (
                    f"takes its endpoints from EDS (service {service!r}) and this /config_dump "
                    "holds none for it: fetch /config_dump?include_eds")
                continue
        out.append(c)
    return out, no_endpoints, warming


def _snake(doc: Any) -> Any:
    """Protobuf JSON's lowerCamelCase field names (``lbPolicy``) as the snake_case ones
    (``lb_policy``) Envoy equally accepts; metadata keys are left as written."""
    if isinstance(doc, list):
        return [_snake(x) for x in doc]
    if not isinstance(doc, Mapping):
        return doc
    out: dict[str, Any] = {}
    for k, v in doc.items():
        key = k if not isinstance(k, str) or k.startswith("@") else "".join(
            "_" + ch.lower() if ch.isupper() else ch for ch in k)
        out[key] = v if key in ("filter_metadata", "typed_filter_metadata") else _snake(v)
    return out


def _uint(value: Any, what: str) -> int:
    """A protobuf wrapped integer as YAML / JSON give it (int, or a decimal str)."""
    if isinstance(value, Mapping) and "value" in value:
        value = value["value"]
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an unsigned integer, got {value!r}")
    return value


def _address_name(address: Mapping[str, Any], cluster: str) -> str:
    """The address as Envoy's Address::asString() writes it."""
    if "pipe" in address:
        return str(address["pipe"]["path"])
    sa = address.get("socket_address")
    if not isinstance(sa, Mapping):
        raise ValueError(f"cluster {cluster!r}: an endpoint address needs socket_address or pipe")
    host = str(sa.get("address", ""))
    if "named_port" in sa:
        raise ValueError(f"cluster {cluster!r}: named_port endpoints are not supported")
    port = _uint(sa.get("port_value", 0), "port_value")
    for fam in (socket.AF_INET, socket.AF_INET6):
        try:
            canon = socket.inet_ntop(fam, socket.inet_pton(fam, host))
        except OSError:
            continue
        return f"{canon}:{port}" if fam == socket.AF_INET else f"[{canon}]:{port}"
    raise ValueError(
        f"cluster {cluster!r}: endpoint address {host!r} is not an IP address; Envoy hashes "
        "the address it resolves, which cannot be known here: set use_hostname_for_hashing "
        "and give each endpoint a hostname, or list IP addresses")


def _section(value: Any, what: str, cname: str | None = None) -> dict[str, Any]:
    """A nested mapping of the config (None: empty); anything else is a ValueError naming it
    (and its cluster, ``cname``, inside one)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        where = "" if cname is None else f"cluster {cname!r}: "
        raise ValueError(f"{where}{what} must be a mapping, got {type(value).__name__!r}")
    return dict(value)


def _entries(value: Any, what: str, cname: str | None = None) -> list[dict[str, Any]]:
    """A nested list of mappings of the config (None: empty)."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        where = "" if cname is None else f"cluster {cname!r}: "
        raise ValueError(f"{where}{what} must be a list, got {type(value).__name__!r}")
    return [_section(v, f"an entry of {what}", cname) for v in value]


def _policy(c: Mapping[str, Any], cname: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(kind, the ring hash / maglev options, the consistent hashing + locality options)."""
    common = _section(c.get("common_lb_config"), "common_lb_config", cname)
    lbp = _section(c.get("load_balancing_policy"), "load_balancing_policy", cname)
    if lbp:
        policies = _entries(lbp.get("policies"), "load_balancing_policy.policies", cname)
        if not policies:
            raise ValueError(f"cluster {cname!r}: load_balancing_policy has no policies")
        tec = _section(policies[0].get("typed_extension_config"), "typed_extension_config", cname)
        typed = _section(tec.get("typed_config"), "typed_config", cname)
        t = str(typed.pop("@type", "")).rsplit("/", 1)[-1]
        if t not in (_RING_TYPE, _MAGLEV_TYPE):
            raise ValueError(f"cluster {cname!r}: its first load balancing policy is "
                             f"{t or tec.get('name')!r}, not ring hash or maglev")
        if "consistent_hashing_lb_config" in typed or t != _RING_TYPE:
            chc = _section(typed.get("consistent_hashing_lb_config"),
                           "consistent_hashing_lb_config", cname)
        else:  # RingHash's deprecated fields count only without consistent_hashing_lb_config
            chc = {"use_hostname_for_hashing": typed.get("use_hostname_for_hashing"),
                   "hash_balance_factor": typed.get("hash_balance_factor")}
        extra = {"locality_weighted": "locality_weighted_lb_config" in typed, **chc}
        return ("ring_hash" if t == _RING_TYPE else "maglev"), typed, extra
    policy = c.get("lb_policy", "ROUND_ROBIN")
    extra = {"locality_weighted": "locality_weighted_lb_config" in common,
             **_section(common.get("consistent_hashing_lb_config"),
                         "consistent_hashing_lb_config", cname)}
    if policy == "RING_HASH":
        return ("ring_hash", _section(c.get("ring_hash_lb_config"), "ring_hash_lb_config", cname),
                extra)
    if policy == "MAGLEV":
        return "maglev", _section(c.get("maglev_lb_config"), "maglev_lb_config", cname), extra
    raise ValueError(f"cluster {cname!r} has lb_policy {policy!r}: only RING_HASH and MAGLEV "
                     "(or a ring_hash / maglev load_balancing_policy) are reproduced")


def from_config(text: Any, name: str | None = None) -> EnvoyRingHash | EnvoyMaglev:
    """The router of an Envoy cluster with ring hash or Maglev load balancing.

    ``text``: one cluster, a list of clusters, a CDS response (``resources``), a whole
    bootstrap (``static_resources.clusters``) or an admin ``/config_dump`` (its static and
    dynamic active clusters, an EDS cluster's endpoints from its ``EndpointsConfigDump``:
    fetch it with ``?include_eds``), as YAML (needs pyyaml), JSON, or a parsed dict; with
    several clusters, ``name`` picks one (``config.NameNeeded``, a ValueError, lists them
    otherwise).

    Read: ``lb_policy: RING_HASH | MAGLEV`` with ``ring_hash_lb_config`` /
    ``maglev_lb_config`` and ``common_lb_config`` (``locality_weighted_lb_config``,
    ``consistent_hashing_lb_config.use_hostname_for_hashing``), or the newer
    ``load_balancing_policy`` whose first policy is the RingHash / Maglev extension;
    endpoints from ``load_assignment``: address, ``hostname``, ``load_balancing_weight``,
    locality and its weight, the ``envoy.lb`` ``hash_key`` metadata, and the lowest priority
    present (the one a fully healthy cluster routes to).  Refused with a ValueError, because
    the choice would then depend on live state: ``hash_balance_factor`` (bounded loads),
    endpoints whose ``health_status`` is not HEALTHY / UNKNOWN, non-IP addresses without
    ``use_hostname_for_hashing``."""
    found, no_endpoints, warming = _clusters(_snake(_parse(text)))
    clusters = [_snake(c) for c in found]
    names = [str(c.get("name", "")) for c in clusters]
    if name is None and len(names) + len(no_endpoints) == 1:
        name = (names or list(no_endpoints))[0]
    if name is not None:
        why = {**warming, **no_endpoints}
        if name in why and name not in names:
            raise ValueError(f"cluster {name!r} {why[name]}")
        if name not in names:
            raise ValueError(f"no cluster named {name!r}; the config has: "
                             + (", ".join(map(repr, names)) or "no clusters"))
        c = clusters[names.index(name)]
    elif not names and not no_endpoints:
        raise ValueError("the config has no clusters" + "".join(
            f"; cluster {n!r} {why}" for n, why in warming.items()))
    else:
        raise NameNeeded("clusters", names + list(no_endpoints))
    cname = str(c.get("name", ""))
    kind, opts, extra = _policy(c, cname)
    if extra.get("hash_balance_factor") not in (None, 0, "0"):
        raise ValueError(f"cluster {cname!r} sets hash_balance_factor: with bounded loads Envoy "
                         "moves requests off busy hosts by their live load, which no config "
                         "can predict")
    use_hostname = bool(extra.get("use_hostname_for_hashing"))
    groups = _entries(_section(c.get("load_assignment"), "load_assignment", cname)
                      .get("endpoints"), "load_assignment.endpoints", cname)
    prios = [_uint(g.get("priority", 0), "priority") for g in groups]
    low = min((p for p, g in zip(prios, groups, strict=True) if g.get("lb_endpoints")),
              default=0)
    hosts: dict[str, int] = {}
    keys: dict[str, str] = {}
    locs: dict[str, Locality] = {}
    lw: dict[Locality, int] = {}
    for g, p in zip(groups, prios, strict=True):
        if p != low:
            continue
        lo = _section(g.get("locality"), "locality", cname)
        loc = (str(lo.get("region", "")), str(lo.get("zone", "")), str(lo.get("sub_zone", "")))
        weight = _uint(g["load_balancing_weight"], "locality load_balancing_weight") if (
            g.get("load_balancing_weight") is not None) else 0
        if loc in lw:
            raise ValueError(f"cluster {cname!r}: locality {_locality_name(loc)!r} is listed "
                             "twice at one priority")
        lw[loc] = weight
        for e in _entries(g.get("lb_endpoints"), "lb_endpoints", cname):
            if e.get("health_status") not in _HEALTHY:
                raise ValueError(
                    f"cluster {cname!r}: an endpoint has health_status "
                    f"{e.get('health_status')!r}; Envoy's choice then depends on its panic "
                    "threshold and priority spill-over: drop the endpoint from the config to "
                    "see the cluster without it")
            ep = _section(e.get("endpoint"), "endpoint", cname)
            if use_hostname:
                node = str(ep.get("hostname") or "")
                if not node:
                    raise ValueError(f"cluster {cname!r}: use_hostname_for_hashing is set but "
                                     "an endpoint has no hostname")
            else:
                node = _address_name(_section(ep.get("address"), "address", cname), cname)
            if node in hosts:
                raise ValueError(f"cluster {cname!r}: endpoint {node!r} is listed twice")
            hosts[node] = _uint(e.get("load_balancing_weight", 1), "load_balancing_weight")
            md = _section(_section(_section(e.get("metadata"), "metadata", cname).get(
                "filter_metadata"), "filter_metadata", cname).get("envoy.lb"), "envoy.lb", cname)
            if isinstance(md.get("hash_key"), str) and md["hash_key"]:
                keys[node] = md["hash_key"]
            locs[node] = loc
    loc_weights = lw if extra.get("locality_weighted") else None
    if kind == "ring_hash":
        hf = opts.get("hash_function", "XX_HASH")
        hf = {0: "XX_HASH", 1: "MURMUR_HASH_2"}.get(hf, hf)
        return EnvoyRingHash(
            hosts, hash_keys=keys, localities=locs, locality_weights=loc_weights,
            minimum_ring_size=_uint(opts.get("minimum_ring_size", DEFAULT_MIN_RING_SIZE),
                                    "minimum_ring_size"),
            maximum_ring_size=_uint(opts.get("maximum_ring_size", DEFAULT_MAX_RING_SIZE),
                                    "maximum_ring_size"),
            hash_function=hf)
    return EnvoyMaglev(hosts, hash_keys=keys, localities=locs, locality_weights=loc_weights,
                       table_size=_uint(opts.get("table_size", DEFAULT_TABLE_SIZE),
                                        "table_size"))

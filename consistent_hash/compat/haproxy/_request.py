"""The request keys HAProxy hashes: hdr() (with use_domain_only), uri and url_param."""

from __future__ import annotations

# -- the hdr() extraction -----------------------------------------------------------------------

_LWS = b" \t\r\n"


def header_value(raw: bytes | str, *, use_domain_only: bool = False) -> bytes | None:
    """The bytes ``balance hdr(name)`` hashes for a header whose value is ``raw``: HAProxy
    takes the first occurrence of the header, drops leading spaces and tabs, stops at the
    first comma outside a double-quoted string (a backslash escapes the next character inside
    one), and drops trailing spaces and tabs.  None when that leaves nothing (HAProxy then
    balances the request round robin instead).

    ``use_domain_only`` (``balance hdr(Host) use_domain_only``): of that value, only the
    label before the last dot (``example`` of ``www.example.com``); a value without a dot is
    kept whole."""
    b = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
    i, n = 0, len(b)
    while i < n and b[i] in _LWS:
        i += 1
    j = i
    quoted = pair = False
    while j < n:
        c = b[j]
        if pair:
            pair = False
        elif quoted:
            if c == 0x5C:
                pair = True
            elif c == 0x22:
                quoted = False
        elif c == 0x22:
            quoted = True
        elif c == 0x2C:
            break
        j += 1
    while j > i and b[j - 1] in _LWS:
        j -= 1
    v = b[i:j]
    if not v:
        return None
    return _domain_only(v) if use_domain_only else v


def _domain_only(v: bytes) -> bytes:
    """HAProxy walks back from the end: at the first dot met it marks the end of the part to
    hash, then it stops where the byte before the cursor is a dot (or at the start)."""
    end = len(v)
    marked = False
    p = len(v) - 1  # HAProxy's first look is one past the value; that byte is never a dot
    n = len(v) - 1
    while n > 0:
        if marked:
            if v[p - 1] == 0x2E:
                break
        elif v[p] == 0x2E:
            end = p
            marked = True
        p -= 1
        n -= 1
    return v[p:end] if marked else v


def uri_key(uri: bytes | str, *, whole: bool = False, length: int = 0,
            depth: int | None = None) -> bytes:
    """The bytes ``balance uri [whole] [len N] [depth N]`` hashes of a request target as sent
    (``/path?query``): its first ``length`` bytes (all when 0), ending before the ``?`` unless
    ``whole``, and before the ``depth + 1``-th ``/`` when ``depth`` is given (``depth 0``
    hashes nothing: the empty string).  ``path-only`` (absolute URIs) is not modelled."""
    b = uri.encode("utf-8") if isinstance(uri, str) else bytes(uri)
    if length:
        b = b[:length]
    stop_at = None if depth is None else depth + 1
    slashes = 0
    for i, c in enumerate(b):
        if c == 0x2F:
            slashes += 1
            if slashes == stop_at:
                return b[:i]
        elif c == 0x3F and not whole:
            return b[:i]
    return b


def url_param_value(uri: bytes | str, name: bytes | str) -> bytes | None:
    """The bytes ``balance url_param NAME`` hashes of a request target: the value of the
    first ``NAME=`` parameter of the query string (case-sensitive, not URL-decoded, up to the
    next ``&``; possibly empty).  None when there is none (HAProxy then balances the request
    round robin; a POST body's parameters, ``check_post``, are not modelled)."""
    b = uri.encode("utf-8") if isinstance(uri, str) else bytes(uri)
    n = name.encode("utf-8") if isinstance(name, str) else bytes(name)
    q = b.find(b"?")
    if q < 0:
        return None
    params = b[q + 1:]
    while len(params) > len(n):
        if params[len(n)] == 0x3D and params.startswith(n):
            return params[len(n) + 1:].split(b"&", 1)[0]
        amp = params.find(b"&")
        if amp < 0:
            return None
        params = params[amp + 1:]
    return None

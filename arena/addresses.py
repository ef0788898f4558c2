"""The one rule for "the same visitor" by network address, for every per-address cap and
limit: the referee's TCP gate, the web server's connection caps, sign-in and upload limits.

An IPv4 address counts as itself (also when mapped into IPv6); an IPv6 address counts by its
/64 — one customer's network, inside which a host picks any of 2^64 addresses at will, so
counting single IPv6 addresses would count nothing.  A zone (``fe80::1%eth0``) is dropped;
text that is no address counts as itself."""

from __future__ import annotations

import functools
import ipaddress


@functools.lru_cache(maxsize=4096)  # a flood repeats its addresses; parsing one costs
def peer_key(address: str) -> str:
    """What a per-address cap counts ``address`` under (see the module's docstring)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)

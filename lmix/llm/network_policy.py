"""Which addresses model endpoints may reach: the LMIX_LLM_ALLOWED_NETWORKS policy.

An entry of the setting is a word (`public`, `private`, `loopback`), a network or address
(`192.168.1.0/24`, `fd12::7`) or a host name (`ollama.lan`). Some addresses are never
reachable: cloud metadata services, unspecified and multicast addresses. Link-local ones
(169.254.0.0/16, fe80::/10) only when an entry itself lies inside link-local space, so a
broad `0.0.0.0/0` never opens them. docs/security.md ("Endpoint policy") explains it.

The functions here are pure: they answer with a reason to refuse (safe to show a user:
it names the host as written and a kind of address, never a resolved address or a key),
or None. `endpoint_refusal` judges a URL as written (on save); `address_refusal` judges
what a host resolved to (on connect, lmix/llm/pinning.py).
"""

import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

SETTING = "LMIX_LLM_ALLOWED_NETWORKS"
WORDS = ("public", "private", "loopback")
SCHEMES = ("http", "https")

# Instance metadata services and host agents of the clouds (AWS IMDS, ECS and EKS agents,
# Alibaba, Azure's wireserver, Oracle): never reachable, whatever the setting lists.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",
        "169.254.170.2",
        "169.254.170.23",
        "fd00:ec2::254",
        "fd00:ec2::23",
        "100.100.100.200",
        "168.63.129.16",
        "192.0.0.192",
    )
)
METADATA_NAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.com",
        "metadata.tencentyun.com",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
LINK_LOCAL = (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("fe80::/10"))
PRIVATE = tuple(
    ipaddress.ip_network(network)
    for network in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",  # carrier-grade NAT, also Tailscale's
        "fc00::/7",
        "fec0::/10",  # IPv6 site-local: deprecated, and not in Python's private list
    )
)
NAT64 = ipaddress.ip_network("64:ff9b::/96")
UNUSABLE = (ipaddress.ip_network("0.0.0.0/8"), ipaddress.ip_network("255.255.255.255/32"))
NEVER = ("metadata", "unusable")  # kinds no entry of the setting can allow
_NAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*")
_NUMBER = re.compile(r"(0x[0-9a-f]*|[0-9]+)")


class InvalidHost(ValueError):
    """A host that is neither an address (in any notation) nor a valid domain name."""


def _ipv4_part(text: str) -> int:
    if text.startswith("0x"):
        return int(text[2:] or "0", 16)
    if len(text) > 1 and text.startswith("0"):
        if not set(text) <= set("01234567"):
            raise InvalidHost(text)
        return int(text, 8)
    return int(text)


def _ipv4_any_notation(host: str) -> ipaddress.IPv4Address | None:
    """Parse an IPv4 address the way URL parsers and inet_aton do (WHATWG URL standard):
    `2130706433`, `0177.0.0.1`, `0x7f.1` and `127.1` all mean 127.0.0.1. A host whose last
    label is a number is an address or invalid, never a name."""
    parts = host.split(".")
    if not _NUMBER.fullmatch(parts[-1]):
        return None
    if len(parts) > 4 or not all(_NUMBER.fullmatch(part) for part in parts):
        raise InvalidHost(host)
    numbers = [_ipv4_part(part) for part in parts]
    *leading, last = numbers
    if any(number > 255 for number in leading) or last >= 256 ** (5 - len(numbers)):
        raise InvalidHost(host)
    value = last
    for index, number in enumerate(leading):
        value += number << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def host_address(host: str) -> IPAddress | None:
    """The address a host names, or None for a domain name. IPv4 in decimal, octal, hex or
    shortened notation is read as such, an IPv6 address that embeds an IPv4 one as that.

    Raises:
        InvalidHost: a number-like host that is no valid address.
    """
    host = host.strip().lower().removeprefix("[").removesuffix("]").removesuffix(".")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        if ":" in host:
            raise InvalidHost(host) from None
        return _ipv4_any_notation(host)
    return _as_routed(address)


def domain_name(host: str) -> str:
    """A domain name as compared with the setting's: lower case, IDNA, no trailing dot.

    Raises:
        InvalidHost: not a valid name (spaces, empty labels, other odd characters).
    """
    name = host.strip().lower().removesuffix(".")
    try:
        name = name.encode("idna").decode("ascii")
    except UnicodeError:
        raise InvalidHost(host) from None
    if not _NAME.fullmatch(name):
        raise InvalidHost(host)
    return name


def _within(address: IPAddress, networks: tuple[IPNetwork, ...]) -> bool:
    return any(address.version == network.version and address in network for network in networks)


def _as_routed(address: IPAddress) -> IPAddress:
    """An IPv6 address that embeds an IPv4 one (mapped `::ffff:a.b.c.d`, NAT64
    `64:ff9b::a.b.c.d`, 6to4) as that IPv4 address, since that is where its packets go."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address in NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if address.sixtofour is not None:
            return address.sixtofour
    return address


def address_kind(address: IPAddress) -> str:
    """One of: metadata, unusable, link-local, loopback, private, public, special."""
    address = _as_routed(address)
    if address in METADATA_ADDRESSES:
        return "metadata"
    if address.is_unspecified or address.is_multicast or _within(address, UNUSABLE):
        return "unusable"  # 0.0.0.0 reaches this host on Linux; multicast is no server
    if address.is_link_local:
        return "link-local"
    if address.is_loopback:
        return "loopback"
    if _within(address, PRIVATE):
        return "private"
    if address.is_global:
        return "public"
    return "special"  # documentation, benchmarking, reserved: only when listed explicitly


def _is_link_local_network(network: IPNetwork) -> bool:
    return any(
        network.version == space.version and network.subnet_of(space)  # type: ignore[arg-type]
        for space in LINK_LOCAL
    )


@dataclass(frozen=True)
class Policy:
    words: frozenset[str]
    networks: tuple[IPNetwork, ...]
    names: frozenset[str]

    def allows(self, address: IPAddress, *, named: bool = False) -> bool:
        """Whether a connection may go to `address`; `named`: the host was listed by name."""
        kind = address_kind(address)
        if kind in NEVER:
            return False
        address = _as_routed(address)
        if kind == "link-local":
            explicit = tuple(n for n in self.networks if _is_link_local_network(n))
            return _within(address, explicit)
        return named or kind in self.words or _within(address, self.networks)

    def describe(self) -> str:
        """What the policy allows, for refusal messages: the words only, since listed
        networks and names are the operator's inventory, not the user's business."""
        allowed = [f"{word} addresses" for word in WORDS if word in self.words]
        if self.networks or self.names:
            allowed.append("the networks and hosts the operator listed")
        return ", ".join(allowed) or "nothing (only the offline narrator)"


def _entry_error(entry: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(
        f"{SETTING}: {entry!r} is neither {', '.join(WORDS)}, a network (10.0.0.0/8), "
        "an address nor a host name."
    )


@lru_cache(maxsize=8)
def _parse(entries: tuple[str, ...]) -> Policy:
    words: set[str] = set()
    networks: list[IPNetwork] = []
    names: set[str] = set()
    for raw in entries:
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry in WORDS:
            words.add(entry)
            continue
        try:
            networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            continue
        except ValueError:
            pass
        try:
            if "/" in entry or ":" in entry or host_address(entry) is not None:
                raise InvalidHost(entry)  # an address in odd notation: write it plainly
            name = domain_name(entry)
        except InvalidHost:
            raise _entry_error(raw) from None
        names.add(name)
    return Policy(frozenset(words), tuple(networks), frozenset(names))


def current_policy() -> Policy:
    """The policy of settings.LMIX_LLM_ALLOWED_NETWORKS (a list, or a comma-separated string).

    Raises:
        ImproperlyConfigured: an entry is no word, network, address or host name.
    """
    value = getattr(settings, SETTING, ("public",))
    entries = value.split(",") if isinstance(value, str) else value
    return _parse(tuple(entries))


@checks.register(checks.Tags.security)
def check_setting(**kwargs: object) -> list[checks.CheckMessage]:
    """A malformed setting stops `manage.py serve`/`migrate` at start, not a user's save."""
    try:
        current_policy()
    except ImproperlyConfigured as error:
        return [checks.Error(str(error), id="lmix.llm.E001")]
    return []


def _refused(host: str, kind: str, policy: Policy, *, verb: str = "is") -> str:
    if kind == "metadata":
        return f"{host} {verb} a cloud metadata service; model endpoints may never reach it."
    if kind == "unusable":
        return f"{host} {verb} an address no model server can have (unspecified or multicast)."
    if kind == "link-local":
        return (
            f"{host} {verb} a link-local address; model endpoints reach those only when the "
            f"operator lists them in {SETTING}."
        )
    what = "a reserved or documentation" if kind == "special" else f"a {kind}"
    return (
        f"{host} {verb} {what} address; model endpoints on this server may reach only "
        f"{policy.describe()} ({SETTING})."
    )


def endpoint_refusal(url: str, policy: Policy | None = None) -> str | None:
    """Why a model endpoint URL, as written, is refused; None when it may be used.

    A host name passes unless it is a metadata name or `localhost`: what it resolves to is
    judged when connecting (`address_refusal`). The offline narrator is always allowed.
    """
    url = url.strip()
    if url.startswith("offline://"):
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return "The endpoint is not a valid URL."
    if parts.scheme.lower() not in SCHEMES or not host:
        return "Model endpoints must be http:// or https:// URLs."
    return host_refusal(host, policy)


def host_refusal(host: str, policy: Policy | None = None) -> str | None:
    """Why a host, as written in a URL, is refused; None when it may be used (so far)."""
    policy = policy or current_policy()
    try:
        address = host_address(host)
        name = domain_name(host) if address is None else ""
    except InvalidHost:
        return "The endpoint's host is not a valid address or name."
    if address is not None:
        if policy.allows(address):
            return None
        shown = host if host.strip("[]").lower() == str(address) else f"{host} ({address})"
        return _refused(shown, address_kind(address), policy)
    if name in METADATA_NAMES:
        return _refused(host, "metadata", policy)
    if name in policy.names:
        return None
    if name == "localhost" or name.endswith(".localhost"):  # RFC 6761: always loopback
        loopback = ipaddress.ip_address("127.0.0.1")
        return None if policy.allows(loopback) else _refused(host, "loopback", policy)
    return None


def address_refusal(host: str, addresses: list[str], policy: Policy | None = None) -> str | None:
    """Why a connection to `host`, which resolved to `addresses`, is refused; None if every
    address may be reached. The message names the host, never the addresses it resolved
    to (that would make this a resolver of internal names)."""
    policy = policy or current_policy()
    refusal = host_refusal(host, policy)
    if refusal:
        return refusal
    named = host_address(host) is None and domain_name(host) in policy.names
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])  # drop an IPv6 zone
        if not policy.allows(address, named=named):
            return _refused(host, address_kind(address), policy, verb="resolves to")
    return None

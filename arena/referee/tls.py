"""TLS for remote seats: the arena's own certificate authority and server certificate.

A remote seat's token and cards cross a classroom network; plain TCP would show both to
anyone on it.  ``arena match --listen`` therefore serves TLS unless told ``--insecure``.
On first use the arena makes a small CA of its own (an EC P-256 key, ten years) and keeps
it in a folder (:func:`default_folder`, or ``--tls-dir``); each listen makes sure a server
certificate signed by that CA names every address a bot may dial (:func:`ensure`), and
makes a new one when a name is missing or the old one nears its end.  Students are given
the CA's certificate (``ca.pem``, public) and check its SHA-256 fingerprint, which the
arena prints; their SDK then verifies the referee with it.  Private keys are written mode
0600 in a folder of mode 0700, never readable by anyone else, and never leave it.

Several arenas may share the folder (two matches started at once): the files are made
under a lock and replaced atomically, so each arena reads a whole, matching pair.

TLS itself is terminated by the referee's TCP gate (:mod:`.gate`), which keeps its caps,
deadlines and eviction in front of the handshake; :func:`server_context` is what it uses.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import ipaddress
import os
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CA_DAYS = 3650
"""The CA lives long: students keep its certificate from one lesson to the next."""
SERVER_DAYS = 397
RENEW_DAYS = 30
"""A server certificate this close to its end is replaced."""
CA_FILE = "ca.pem"
CA_KEY = "ca-key.pem"
CERT_FILE = "server.pem"
KEY_FILE = "server-key.pem"


class TlsError(RuntimeError):
    """The TLS folder or its files cannot be used; the message says which and why."""


@dataclass(frozen=True)
class TlsFiles:
    """The files of a listen's TLS, and what a student needs: the CA's certificate and its
    fingerprint."""

    folder: Path
    ca: Path
    cert: Path
    key: Path
    fingerprint: str
    """SHA-256 of the CA certificate (DER), as colon-separated hex."""
    names: tuple[str, ...]
    """The names and addresses the server certificate covers."""


def default_folder() -> Path:
    """Where the CA is kept when no database folder says otherwise: the user's state folder
    (``$XDG_STATE_HOME/arena/tls``, by default ``~/.local/state/arena/tls``)."""
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state) if state and os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "arena" / "tls"


def server_names(host: str, extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The names a certificate for a listen on ``host`` must cover: the host itself, or for
    a wildcard listen (0.0.0.0, ::) the machine's loopback and its host name; then every
    ``--tls-name``.  No name is looked up (no DNS): what a student dials is what they give."""
    host = host.strip("[]")
    names: list[str] = []
    if host in ("0.0.0.0", "::", ""):
        names += ["localhost", "127.0.0.1", "::1"]
        with contextlib.suppress(OSError):
            own = socket.gethostname()
            if own:
                names.append(own)
    else:
        names.append(host)
    for name in extra:
        name = name.strip().strip("[]")
        if not name:
            continue
        _check_name(name)
        names.append(name)
    out: list[str] = []
    for name in names:
        if name.lower() not in (n.lower() for n in out):
            out.append(name)
    return out


def _check_name(name: str) -> None:
    with contextlib.suppress(ValueError):
        ipaddress.ip_address(name)
        return
    labels = name.rstrip(".").split(".")
    ok = len(name) <= 253 and all(
        0 < len(label) <= 63 and label.replace("-", "").isalnum() and label.isascii()
        for label in labels
    )
    if not ok:
        raise TlsError(f"--tls-name {name!r}: not a host name or an IP address")


def ensure(folder: Path, names: list[str]) -> TlsFiles:
    """The CA in ``folder`` (made on first use) and a server certificate it signed that
    covers ``names`` (made or replaced when needed)."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise TlsError(f"cannot make the TLS folder {folder}: {exc}") from None
    try:
        st = folder.stat()
    except OSError as exc:
        raise TlsError(f"cannot use the TLS folder {folder}: {exc}") from None
    if st.st_uid != os.getuid():
        raise TlsError(f"the TLS folder {folder} belongs to another user")
    if st.st_mode & 0o077:
        with contextlib.suppress(OSError):
            folder.chmod(0o700)
    try:
        with _locked(folder):
            ca_cert, ca_key = _ca(folder)
            _server(folder, ca_cert, ca_key, names)
    except OSError as exc:
        raise TlsError(f"cannot write the arena's certificates in {folder}: {exc}") from None
    from cryptography.hazmat.primitives import hashes

    fp = ca_cert.fingerprint(hashes.SHA256()).hex().upper()
    return TlsFiles(
        folder=folder,
        ca=folder / CA_FILE,
        cert=folder / CERT_FILE,
        key=folder / KEY_FILE,
        fingerprint=":".join(fp[i : i + 2] for i in range(0, len(fp), 2)),
        names=tuple(names),
    )


def server_context(files: TlsFiles) -> ssl.SSLContext:
    """The gate's TLS: 1.2 or later, HTTP/2 by ALPN (gRPC clients require it), no session
    tickets (a connection is one seat's whole match)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_alpn_protocols(["h2"])
    ctx.options |= ssl.OP_NO_TICKET | ssl.OP_NO_RENEGOTIATION | ssl.OP_NO_COMPRESSION
    with contextlib.suppress(AttributeError, ValueError):
        ctx.num_tickets = 0
    try:
        with _locked(files.folder):  # never a pair half replaced by another arena
            ctx.load_cert_chain(files.cert, files.key)
    except (OSError, ssl.SSLError) as exc:
        raise TlsError(f"cannot load the server certificate in {files.folder}: {exc}") from None
    return ctx


# ----- making the files -------------------------------------------------------------------


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _write(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` to ``path`` atomically, created with ``mode`` (a key: 0600 from the
    first byte)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _ca(folder: Path):  # type: ignore[no-untyped-def]
    """The CA's certificate and key, made when absent (or unreadable as a pair)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    cert_path, key_path = folder / CA_FILE, folder / CA_KEY
    if cert_path.exists() and key_path.exists():
        try:
            cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
            key = serialization.load_pem_private_key(key_path.read_bytes(), None)
        except (ValueError, TypeError) as exc:
            raise TlsError(
                f"the arena's CA in {folder} cannot be read ({exc}): move the folder away "
                "to make a new one (students then need the new ca.pem)"
            ) from None
        if cert.not_valid_after_utc > _now() + dt.timedelta(days=RENEW_DAYS):
            return cert, key
    key = ec.generate_private_key(ec.SECP256R1())
    host = ""
    with contextlib.suppress(OSError):
        host = socket.gethostname()[:40]
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Big Two Arena"),
            x509.NameAttribute(NameOID.COMMON_NAME, f"Big Two Arena CA {host}".strip()[:64]),
        ]
    )
    now = _now()
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(ski, critical=False)
        .sign(key, hashes.SHA256())
    )
    _write(key_path, _key_pem(key), 0o600)
    _write(cert_path, cert.public_bytes(serialization.Encoding.PEM), 0o644)
    with contextlib.suppress(FileNotFoundError):  # signed by the old CA: useless now
        (folder / CERT_FILE).unlink()
    return cert, key


def _key_pem(key) -> bytes:  # type: ignore[no-untyped-def]
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(  # type: ignore[no-any-return]
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _general_names(names: list[str]) -> list:  # type: ignore[type-arg]
    from cryptography import x509

    out: list[x509.GeneralName] = []
    for name in names:
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            out.append(x509.DNSName(name.rstrip(".").lower()))
    return out


def _server(folder: Path, ca_cert, ca_key, names: list[str]) -> None:  # type: ignore[no-untyped-def]
    """A server certificate covering ``names``, signed by the CA, unless one is there."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    cert_path, key_path = folder / CERT_FILE, folder / KEY_FILE
    wanted = _general_names(names)
    if cert_path.exists() and key_path.exists():
        with contextlib.suppress(ValueError, TypeError, x509.ExtensionNotFound):
            cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
            key = serialization.load_pem_private_key(key_path.read_bytes(), None)
            has = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            if (
                cert.issuer == ca_cert.subject
                and cert.not_valid_after_utc > _now() + dt.timedelta(days=RENEW_DAYS)
                and all(g in has for g in wanted)
                and key.public_key() == cert.public_key()
            ):
                with contextlib.suppress(Exception):  # InvalidSignature: made anew
                    cert.verify_directly_issued_by(ca_cert)
                    return
    key = ec.generate_private_key(ec.SECP256R1())
    now = _now()
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0][:64])]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=SERVER_DAYS))
        .add_extension(x509.SubjectAlternativeName(wanted), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    _write(key_path, _key_pem(key), 0o600)
    _write(cert_path, cert.public_bytes(serialization.Encoding.PEM), 0o644)

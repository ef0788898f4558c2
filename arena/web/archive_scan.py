"""An archive's metadata walked and bounded before the standard library's parsers see it.

``tarfile`` and ``zipfile`` trust their input's metadata in ways a hostile upload exploits
for time and memory rather than for files: CPython before 3.11.10 parses a tar extended
(pax) header with a regular expression that is quadratic in a run of digits
(CVE-2024-6232: 285 bytes gzip'd, minutes of CPU), a negative size in a header sends its
reader into an endless loop (CVE-2025-8194), a chain of extension headers recurses once per
header, and ``zipfile`` builds an object for every central-directory entry before anyone
can count them.  Upgrading Python closes the known tricks, not the class; so the archive is
walked here first, with arithmetic only, exactly as the parser will walk it, and refused
when any piece of metadata is larger or stranger than an honest bot needs:

- tar: every header's checksum and numeric fields as ``tarfile`` reads them, but no
  negative or base-256 numbers; pax headers at most :data:`PAX_CAP` bytes, made of
  well-formed records only, no run of more than :data:`DIGIT_RUN_CAP` digits, no sparse
  keywords, a ``size`` keyword only as plain digits (and only in a per-file header);
  GNU long-name/long-link blocks at most :data:`LONGNAME_CAP` bytes; no sparse entries;
  at most one extension header of each kind per entry; at most ``max_entries`` entries;
- zip: the end record found as ``zipfile`` finds it (zip64 too); an archive comment at
  most :data:`ZIP_COMMENT_CAP` bytes; at most ``max_entries`` entries, declared or walked;
  each entry's name, extra field and comment within their caps; the directory within the
  file.

Everything here is standard library and arithmetic on bytes already in memory; it runs in
the checking child process (:mod:`arena.web.archive_check`), before the parsers do.
"""

from __future__ import annotations

import re
import struct

BLOCK = 512
PAX_CAP = 64 << 10
"""Bytes an extended (pax) header may hold: paths, times and a few attributes need far
less; a macOS tar's extended attributes fit."""
LONGNAME_CAP = 4 << 10
"""Bytes a GNU long-name or long-link block may hold (a bot's paths are far shorter)."""
DIGIT_RUN_CAP = 64
"""The longest run of digits a pax header may hold (a time with nanoseconds has 20): the
old parser's cost is the header's length times its longest run of digits."""
ZIP_COMMENT_CAP = 4 << 10
ZIP_NAME_CAP = 1 << 10
ZIP_EXTRA_CAP = 4 << 10
ZIP_ENTRY_COMMENT_CAP = 1 << 10

_REGULAR = (b"0", b"\0", b"7")
"""Entry kinds whose data follows their header (GNU sparse, ``S``, is refused)."""
_KNOWN = (*_REGULAR, b"1", b"2", b"3", b"4", b"5", b"6")
"""Kinds ``tarfile`` knows that are not extension headers; of these it skips no data for
links, devices, fifos and folders, whatever their size says (and neither does this walk)."""
_PAX = (b"x", b"g", b"X")
_LONG = (b"L", b"K")
_DIGITS = re.compile(rb"[0-9]{%d}" % (DIGIT_RUN_CAP + 1))


class ArchiveRefused(Exception):
    """The archive's metadata is beyond what is accepted; the message says what, in one
    line, for the participant."""


class ArchiveDamaged(ValueError):
    """The archive's metadata is malformed; the message is the detail (the gate words it
    as a damaged archive, as it does for the parsers' own errors)."""


def _blocks(size: int) -> int:
    return -(-size // BLOCK) * BLOCK


def _number(field: bytes, what: str) -> int:
    """A header's numeric field as ``tarfile`` reads it (octal, up to the first NUL,
    spaces stripped), refused when it is base-256 or negative."""
    if field[:1] in (b"\x80", b"\xff"):
        raise ArchiveRefused(f"the tar archive stores a {what} in base-256 (over 8 GiB?)")
    try:
        value = int(field.split(b"\0", 1)[0].decode("ascii").strip() or "0", 8)
    except (UnicodeDecodeError, ValueError):
        raise ArchiveDamaged(f"a header's {what} is not a number") from None
    if value < 0:
        raise ArchiveDamaged(f"a header's {what} is negative")
    return value


def _checksum_ok(block: bytes) -> bool:
    stored = _number(block[148:156], "checksum")
    unsigned = 256 + sum(struct.unpack_from("148B8x356B", block))
    signed = 256 + sum(struct.unpack_from("148b8x356b", block))
    return stored in (unsigned, signed)


def pax_records(buf: bytes) -> dict[bytes, bytes]:
    """The keyword → value records of a pax header's (padded) data, every byte accounted
    for: ``"%d %s=%s\\n"`` records, then only NULs.  Refuses digit runs over
    :data:`DIGIT_RUN_CAP` and keywords the walk cannot follow."""
    if _DIGITS.search(buf):
        raise ArchiveRefused(
            f"the tar archive's extended header holds a run of over {DIGIT_RUN_CAP} digits"
        )
    records: dict[bytes, bytes] = {}
    pos = 0
    while pos < len(buf) and buf[pos] != 0:
        space = buf.find(b" ", pos, pos + 12)
        if space <= pos or not buf[pos:space].isdigit():
            raise ArchiveDamaged("a malformed extended header record")
        end = pos + int(buf[pos:space])
        equals = buf.find(b"=", space + 1, max(space + 1, end - 1))
        if end > len(buf) or equals <= space + 1 or buf[end - 1 : end] != b"\n":
            raise ArchiveDamaged("a malformed extended header record")
        keyword, value = buf[space + 1 : equals], buf[equals + 1 : end - 1]
        if keyword.startswith(b"GNU.sparse"):
            raise ArchiveRefused("the tar archive holds a sparse file")
        if keyword == b"size" and not (value.isdigit() and len(value) <= 18):
            raise ArchiveDamaged("an extended header's size is not a plain number")
        records[keyword] = value
        pos = end
    if buf.count(0, pos) != len(buf) - pos:
        raise ArchiveDamaged("bytes after an extended header's records")
    return records


def scan_tar(tar: bytes, max_entries: int) -> int:
    """Walk the (decompressed) tar's headers as ``tarfile`` will; the number of entries.

    The walk stops where ``tarfile`` stops: at an all-zero block or where fewer than 512
    bytes are left (a truncated member is then ``tarfile``'s to report)."""
    pos = entries = 0
    extensions: set[bytes] = set()
    pax_size: int | None = None
    while pos + BLOCK <= len(tar):
        block = tar[pos : pos + BLOCK]
        if block.count(0) == BLOCK:
            break
        if not _checksum_ok(block):
            raise ArchiveDamaged("bad checksum")
        kind = block[156:157]
        size = _number(block[124:136], "size")
        if kind in _PAX or kind in _LONG:
            family = b"x" if kind == b"X" else kind
            if family in extensions:
                raise ArchiveRefused("the tar archive gives one entry two extension headers")
            extensions.add(family)
            if kind in _PAX:
                if size > PAX_CAP:
                    raise ArchiveRefused(
                        f"the tar archive holds an extended header of {size} bytes "
                        f"(the limit is {PAX_CAP})"
                    )
                records = pax_records(tar[pos + BLOCK : pos + BLOCK + _blocks(size)])
                if b"size" in records:
                    if kind == b"g":
                        raise ArchiveRefused("the tar archive sets a size for every file")
                    pax_size = int(records[b"size"])
            elif size > LONGNAME_CAP:
                raise ArchiveRefused(
                    f"the tar archive holds a long-name header of {size} bytes "
                    f"(the limit is {LONGNAME_CAP})"
                )
            pos += BLOCK + _blocks(size)
            continue
        if kind == b"S":
            raise ArchiveRefused("the tar archive holds a sparse file")
        entries += 1
        if entries > max_entries:
            raise ArchiveRefused(f"the archive holds over {max_entries} entries")
        size = size if pax_size is None else pax_size
        old_style_folder = kind == b"\0" and block[:100].split(b"\0", 1)[0].endswith(b"/")
        has_data = (kind in _REGULAR and not old_style_folder) or kind not in _KNOWN
        pos += BLOCK + (_blocks(size) if has_data else 0)
        extensions.clear()
        pax_size = None
    return entries


_END = struct.Struct("<4s4H2LH")
_END64_LOCATOR = struct.Struct("<4sLQL")
_END64 = struct.Struct("<4sQ2H2L4Q")
_ENTRY = struct.Struct("<4s4B4HL2L5H2L")


def scan_zip(data: bytes, max_entries: int) -> int:
    """Find the zip's central directory as ``zipfile`` will and walk it; the number of
    entries."""
    if len(data) < _END.size:
        raise ArchiveDamaged("File is not a zip file")
    if data[-_END.size : -_END.size + 4] == b"PK\x05\x06" and data[-2:] == b"\0\0":
        at = len(data) - _END.size
    else:  # behind a comment: zipfile takes the last end record in the last 64 KiB
        first = max(len(data) - (0xFFFF + _END.size), 0)
        found = data.rfind(b"PK\x05\x06", first)
        if found < 0 or found + _END.size > len(data):
            raise ArchiveDamaged("File is not a zip file")
        at = found
    _, _, _, _, declared, cd_size, _, comment = _END.unpack_from(data, at)
    if comment > ZIP_COMMENT_CAP:
        raise ArchiveRefused(
            f"the zip's comment is {comment} bytes (the limit is {ZIP_COMMENT_CAP})"
        )
    cd_end = at
    locator = at - _END64_LOCATOR.size
    if locator >= 0 and data[locator : locator + 4] == b"PK\x06\x07":
        _, disk, _, disks = _END64_LOCATOR.unpack_from(data, locator)
        if disk != 0 or disks > 1:
            raise ArchiveDamaged("zipfiles that span multiple disks are not supported")
        record = locator - _END64.size
        if record >= 0 and data[record : record + 4] == b"PK\x06\x06":
            fields = _END64.unpack_from(data, record)
            declared, cd_size, cd_end = fields[7], fields[8], record
    if declared > max_entries:
        raise ArchiveRefused(f"the archive holds over {max_entries} entries")
    start = cd_end - cd_size
    if start < 0:
        raise ArchiveDamaged("Bad offset for central directory")
    walked = entries = 0
    while walked < cd_size:
        here = start + walked
        if here + _ENTRY.size > cd_end:
            raise ArchiveDamaged("Truncated central directory")
        fields = _ENTRY.unpack_from(data, here)
        if fields[0] != b"PK\x01\x02":
            raise ArchiveDamaged("Bad magic number for central directory")
        name, extra, note = fields[12], fields[13], fields[14]
        entries += 1
        if entries > max_entries:
            raise ArchiveRefused(f"the archive holds over {max_entries} entries")
        if name > ZIP_NAME_CAP or extra > ZIP_EXTRA_CAP or note > ZIP_ENTRY_COMMENT_CAP:
            raise ArchiveRefused(
                f"a zip entry's name, extra field or comment is too long ({name}, {extra}, "
                f"{note} bytes; the limits are {ZIP_NAME_CAP}, {ZIP_EXTRA_CAP}, "
                f"{ZIP_ENTRY_COMMENT_CAP})"
            )
        walked += _ENTRY.size + name + extra + note
    return entries

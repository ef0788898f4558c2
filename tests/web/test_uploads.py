"""The upload gate (issue 11, "Bot upload"): real hostile archives built here with zipfile
and tarfile, each refused with its own reason and nothing written; the accepted ones become
a folder the ladder reads with the same digest."""

from __future__ import annotations

import gzip
import io
import os
import stat
import struct
import tarfile
import warnings
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.bots import bot_digest, bot_files, resolve
from arena.web.uploads import (
    UploadedBot,
    UploadLimits,
    UploadRefused,
    check_upload,
    write_bot_folder,
)

BOT = b"""from bigtwo import Bot


class Mine(Bot):
    def act(self, obs):
        return obs.legal_moves[0]
"""


def make_zip(entries: list[tuple[str | zipfile.ZipInfo, bytes]], method: int = 8) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names, on purpose
        with zipfile.ZipFile(buf, "w", compression=method) as zf:
            for name, data in entries:
                zf.writestr(name, data)
    return buf.getvalue()


def member(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, **kw: object) -> tuple:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    for key, value in kw.items():
        setattr(info, key, value)
    return info, data


def make_tar(members: list[tuple], fmt: int = tarfile.PAX_FORMAT) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tf:
        for info, data in members:
            tf.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return buf.getvalue()


def make_tgz(members: list[tuple]) -> bytes:
    return gzip.compress(make_tar(members))


@pytest.fixture
def nothing_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Refusals run in an empty working folder, which must stay empty."""
    monkeypatch.chdir(tmp_path)
    yield
    assert list(tmp_path.iterdir()) == []


def refused(filename: str, data: bytes, reason: str, limits: UploadLimits | None = None) -> str:
    with pytest.raises(UploadRefused) as exc:
        check_upload(filename, data, limits)
    message = str(exc.value)
    assert reason in message, message
    assert message.isprintable() and len(message) < 300, message  # one escaped line
    return message


# --- accepted ---------------------------------------------------------------------------


def test_a_plain_py_file_becomes_bot_py():
    bot = check_upload("whatever.py", BOT)
    assert bot.files == {"bot.py": BOT} and bot.kind == "py"
    assert bot.digest == bot_digest({"bot.py": BOT})


@pytest.mark.parametrize("suffix", [".zip", ".tar.gz", ".tgz"])
def test_a_zipped_folder_is_unwrapped_and_junk_dropped(suffix: str):
    files = {
        "My Bot/bot.py": BOT,  # the wrapper's name is dropped, so a space is fine there
        "My Bot/requirements.txt": b"numpy>=1.20\n",
        "My Bot/data/table.bin": bytes(range(256)),
        "My Bot/data/inner.zip": make_zip([("x.txt", b"x")]),  # just bytes
        "My Bot/.DS_Store": b"junk",
        "My Bot/__pycache__/bot.cpython-311.pyc": b"junk",
        "__MACOSX/My Bot/._bot.py": b"junk",
    }
    if suffix == ".zip":
        data = make_zip([("My Bot/", b""), *files.items()])
    else:
        data = make_tgz(
            [member("./My Bot", kind=tarfile.DIRTYPE)] + [member(n, d) for n, d in files.items()]
        )
    bot = check_upload("mine" + suffix, data)
    assert sorted(bot.files) == ["bot.py", "data/inner.zip", "data/table.bin", "requirements.txt"]
    assert bot.kind == ("zip" if suffix == ".zip" else "tar.gz")


def test_files_at_the_top_are_not_unwrapped():
    bot = check_upload("b.zip", make_zip([("bot.py", BOT), ("lib/helper.py", b"X = 1\n")]))
    assert sorted(bot.files) == ["bot.py", "lib/helper.py"]


# --- refused: sizes and bombs ------------------------------------------------------------


def test_size_caps(nothing_written):
    refused("b.py", BOT, "the limit is 10 bytes", UploadLimits(max_packed=10))
    stored = make_zip([("bot.py", BOT), ("big.bin", os.urandom(2000))], method=0)
    refused("b.zip", stored, "unpacks to over 1000 bytes", UploadLimits(max_unpacked=1000))
    tgz = make_tgz([member("bot.py", BOT), member("big.bin", os.urandom(2000))])
    refused("b.tgz", tgz, "unpacks to over 1000 bytes", UploadLimits(max_unpacked=1000))
    # refused while inflating the tar itself (content cap + each entry's tar overhead)
    tgz = make_tgz([member("bot.py", BOT), member("big.bin", os.urandom(40_000))])
    small = UploadLimits(max_unpacked=1000, max_entries=2)
    refused("b.tgz", tgz, "unpacks to over 31720 bytes", small)


def test_the_arenas_own_per_bot_cap_bounds_a_larger_setting(nothing_written):
    zeros = make_zip([("bot.py", BOT), ("zeros.bin", bytes(51 << 20))])
    limits = UploadLimits(max_ratio=1e5, max_unpacked=200 << 20)
    refused("b.zip", zeros, "unpacks to over 50.0 MiB", limits)


def test_a_zip_bomb_is_refused_for_its_ratio(nothing_written):
    bomb = make_zip([("bot.py", BOT), ("zeros.bin", bytes(60 << 20))])
    assert len(bomb) < 100_000
    refused("b.zip", bomb, "'zeros.bin' has a compression ratio over 100")
    tar_bomb = make_tgz([member("bot.py", BOT), member("zeros.bin", bytes(60 << 20))])
    refused("b.tar.gz", tar_bomb, "compression ratio is over 100")


def test_many_small_members_are_judged_together(nothing_written):
    """Each member is under the floor where a ratio is judged; the archive is not."""
    parts = [("bot.py", BOT)] + [(f"z{i}.bin", bytes(600 << 10)) for i in range(3)]
    refused("b.zip", make_zip(parts), "the archive's compression ratio is over 100")


def test_a_declared_size_is_not_trusted(nothing_written):
    """The central directory says 10 bytes; inflating stops there and the CRC fails."""
    data = bytearray(make_zip([("bot.py", BOT), ("zeros.bin", bytes(60 << 20))]))
    cd = data.index(b"PK\x01\x02", data.index(b"PK\x01\x02") + 4)  # zeros.bin's entry
    struct.pack_into("<I", data, cd + 24, 10)  # uncompressed size
    refused("b.zip", bytes(data), "damaged")


def test_too_many_entries_or_files(nothing_written):
    tiny = [("bot.py", BOT)] + [(f"f{i}", b"") for i in range(10_000)]
    refused("b.zip", make_zip(tiny), "over 1000 entries")
    refused("b.tgz", make_tgz([member(n, d) for n, d in tiny]), "over 1000 entries")
    refused("b.zip", make_zip(tiny[:300]), "over 200 files")


# --- refused: names ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../evil.py", "climbs out of the folder"),
        ("a/../../evil.py", "climbs out of the folder"),
        ("/etc/x", "absolute path"),
        ("..\\evil", "backslash"),
        ("C:/evil.py", "drive letter"),
        ("bot\n.py", "control or invisible character"),
        ("\x1b[31mred.py", "control or invisible character"),
        ("evil\u202egnp.py", "control or invisible character"),
        ("my file.py", "is not allowed"),
        ("-rf", "is not allowed"),
        ("x" * 101, "is not allowed"),
        ("/".join("d" * 9) + "/f", "too deep or too long"),
    ],
)
def test_hostile_names(nothing_written, name: str, reason: str):
    message = refused("b.zip", make_zip([("bot.py", BOT), (name, b"x")]), reason)
    assert "\x1b" not in message and "\n" not in message
    refused("b.tgz", make_tgz([member("bot.py", BOT), member(name, b"x")]), reason)


def test_a_nul_in_a_zip_name(nothing_written):
    """zipfile cuts a name at its NUL ("bot.py\\0x" would read as bot.py); the original is
    judged."""
    data = make_zip([("evilZZ.py", b"x"), ("bot.py", BOT)]).replace(b"evilZZ.py", b"evil\0Z.py")
    refused("b.zip", data, r"'evil\x00Z.py' holds a control")


def test_an_empty_name(nothing_written):
    refused("b.tgz", make_tgz([member("", b"x"), member("bot.py", BOT)]), "an empty name")
    refused("b.zip", make_zip([(".", b"x"), ("bot.py", BOT)]), "'.' names no file")
    refused("b.tgz", make_tgz([member("./", b"x"), member("bot.py", BOT)]), "names no file")


@pytest.mark.parametrize(
    ("names", "reason"),
    [
        (["data.txt", "data.txt"], "is there twice"),
        (["data.txt", "DATA.txt"], "differs only in case"),
        (["lib", "lib/x.py"], "both a file and a folder"),
        (["Lib", "lib/x.py"], "both a file and a folder"),
        (["./data.txt", "data.txt"], "is there twice"),
    ],
)
def test_duplicates(nothing_written, names: list[str], reason: str):
    refused("b.zip", make_zip([("bot.py", BOT)] + [(n, b"x") for n in names]), reason)


# --- refused: kinds ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("info", "reason"),
    [
        (member("link.py", kind=tarfile.SYMTYPE, linkname="/etc/passwd"), "is a symlink"),
        (member("hard.py", kind=tarfile.LNKTYPE, linkname="bot.py"), "is a hard link"),
        (member("dev", kind=tarfile.CHRTYPE, devmajor=1, devminor=3), "special file"),
        (member("blk", kind=tarfile.BLKTYPE), "special file"),
        (member("fifo", kind=tarfile.FIFOTYPE), "special file"),
        (member(".hidden-link", kind=tarfile.SYMTYPE, linkname="/"), "is a symlink"),
    ],
)
def test_tar_links_and_special_files(nothing_written, info: tuple, reason: str):
    refused("b.tgz", make_tgz([member("bot.py", BOT), info]), reason)


def test_zip_symlinks_and_devices(nothing_written):
    for mode, reason in [(stat.S_IFLNK, "is a symlink"), (stat.S_IFCHR, "special file")]:
        info = zipfile.ZipInfo("x")
        info.external_attr = (mode | 0o777) << 16
        refused("b.zip", make_zip([("bot.py", BOT), (info, b"/etc/passwd")]), reason)


def test_an_encrypted_member(nothing_written):
    """zipfile cannot encrypt: the flag bit is set in both headers by hand."""
    data = bytearray(make_zip([("bot.py", BOT)]))
    data[6] |= 1  # local header
    data[data.index(b"PK\x01\x02") + 8] |= 1  # central directory
    refused("b.zip", bytes(data), "'bot.py' is encrypted")


def test_bzip2_is_refused(nothing_written):
    data = make_zip([("bot.py", BOT)], method=zipfile.ZIP_BZIP2)
    refused("b.zip", data, "compression method 12")


# --- refused: content and form -----------------------------------------------------------


def test_content(nothing_written):
    refused("b.py", b"\xff\xfebot", "not UTF-8")
    refused("b.py", b"  \n", "bot.py is empty")
    refused("b.zip", make_zip([("bot.py", b"caf\xe9 = 1")]), "not UTF-8")
    refused("b.zip", make_zip([("main.py", BOT)]), "no bot.py")
    refused("b.zip", make_zip([("a/bot.py", BOT), ("b/x.py", b"")]), "no bot.py")
    refused("b.zip", make_zip([("src/bot.py", BOT), ("README", b"")]), "no bot.py")
    req = [("bot.py", BOT), ("requirements.txt", b"numpy\n-e git+https://x/y\n")]
    refused("b.zip", make_zip(req), "requirements.txt line 2: options")


def test_form(nothing_written):
    tgz = make_tgz([member("bot.py", BOT)])
    zipped = make_zip([("bot.py", BOT)])
    refused("b.zip", tgz, "named .zip but is not a zip archive (it looks like a tar.gz")
    refused("b.zip", make_tar([member("bot.py", BOT)]), "looks like a tar archive")
    refused("b.tar.gz", zipped, "not a tar.gz archive (it looks like a zip")
    refused("b.py", zipped, "named .py but is a zip archive")
    refused("b.exe", BOT, "upload a .py file")
    refused("b.tar", BOT, "upload a .py file")
    refused("b.zip", zipped[: len(zipped) // 2], "damaged")
    refused("b.tgz", tgz[: len(tgz) // 2], "damaged")
    refused("b.tgz", gzip.compress(b"not a tar at all" * 100), "damaged")
    cut = gzip.compress(make_tar([member("bot.py", BOT)])[:600])  # inside bot.py's data
    refused("b.tgz", cut, "damaged or unreadable ('unexpected end of data')")


# --- fuzz --------------------------------------------------------------------------------

NAMES = ["bot.py", "bot.zip", "bot.tar.gz"]
SEEDS = [
    make_zip([("mine/bot.py", BOT), ("mine/data.bin", bytes(3000))]),
    make_tar([member("bot.py", BOT), member("lib/x.py", b"X = 1\n" * 50)]),
]


def outcome(name: str, data: bytes) -> None:
    try:
        bot = check_upload(name, data)
    except UploadRefused as exc:
        assert str(exc).isprintable()
    else:
        assert "bot.py" in bot.files


@given(
    st.sampled_from(NAMES),
    st.binary(max_size=2000),
    st.sampled_from([b"", b"PK\x03\x04", b"\x1f\x8b"]),
)
def test_random_bytes_are_only_ever_refused(name: str, data: bytes, magic: bytes):
    outcome(name, magic + data)


@given(
    st.sampled_from([0, 1]),
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=8),
)
def test_damaged_archives_are_only_ever_refused(seed: int, edits: list[tuple[int, int]]):
    data = bytearray(SEEDS[seed])
    for at, value in edits:
        data[at % len(data)] = value
    if seed == 0:
        outcome("bot.zip", bytes(data))
    else:  # the tar is damaged inside an intact gzip stream, so tarfile meets the damage
        outcome("bot.tar.gz", gzip.compress(bytes(data)))


# --- limits ------------------------------------------------------------------------------


def test_limits_round_trip_and_validation():
    limits = UploadLimits(max_files=10, max_ratio=50)
    assert UploadLimits.from_dict(limits.to_dict()) == limits
    assert UploadLimits.from_dict({}) == UploadLimits()
    for bad, reason in [
        ({"max_files": 0}, "positive whole number"),
        ({"max_files": "10"}, "positive whole number"),
        ({"max_packed": True}, "positive whole number"),
        ({"max_unpacked": 1.5}, "positive whole number"),
        ({"max_ratio": float("nan")}, "number >= 1"),
        ({"max_ratio": 0.5}, "number >= 1"),
        ({"max_size": 1}, "unknown upload limit 'max_size'"),
    ]:
        with pytest.raises(ValueError, match=reason):
            UploadLimits.from_dict(bad)


# --- writing -----------------------------------------------------------------------------


def test_the_written_folder_is_the_bot_the_ladder_reads(tmp_path: Path):
    data = make_zip(
        [("mybot/bot.py", BOT), ("mybot/requirements.txt", b"numpy\n"), ("mybot/lib/h.py", b"")]
    )
    bot = check_upload("mybot.zip", data)
    folder = write_bot_folder(bot, tmp_path / "store" / "mybot")
    spec = resolve(str(folder))
    assert spec.path == (folder / "bot.py").resolve()
    assert bot_files(spec) == bot.files
    assert bot_digest(bot_files(spec)) == bot.digest
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    assert stat.S_IMODE((folder / "lib").stat().st_mode) == 0o755
    assert stat.S_IMODE((folder / "lib" / "h.py").stat().st_mode) == 0o644
    # the same code uploaded another way is the same version
    assert (
        check_upload("b.tgz", make_tgz([member(n, d) for n, d in bot.files.items()])).digest
        == bot.digest
    )


def test_writing_refuses_an_existing_folder_or_a_link(tmp_path: Path):
    bot = check_upload("b.py", BOT)
    (tmp_path / "there").mkdir()
    with pytest.raises(FileExistsError):
        write_bot_folder(bot, tmp_path / "there")
    assert list((tmp_path / "there").iterdir()) == []
    (tmp_path / "target").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "target")
    with pytest.raises(FileExistsError):
        write_bot_folder(bot, tmp_path / "link")
    assert list((tmp_path / "target").iterdir()) == []


def test_writing_rechecks_hand_made_files(tmp_path: Path):
    for files in [{"bot.py": BOT, "../x.py": b""}, {"main.py": BOT}, {"bot.py": BOT, "a//b": b""}]:
        with pytest.raises(UploadRefused):
            write_bot_folder(UploadedBot(files, "py", ""), tmp_path / "out")
        assert not (tmp_path / "out").exists()


# --- the metadata walk before the parsers (issue 21) ---------------------------------------


def _block(name: str, kind: bytes, size: int = 0, size_field: bytes | None = None) -> bytes:
    """A ustar header block; ``size_field`` (12 bytes) written as given, checksum redone."""
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = size
    block = bytearray(info.tobuf(format=tarfile.USTAR_FORMAT))
    if size_field is not None:
        block[124:136] = size_field
        block[148:156] = b" " * 8
        block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


def _padded(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 512)


def _ext(kind: bytes, body: bytes) -> bytes:
    return _block("././@PaxHeader", kind, len(body)) + _padded(body)


def _pax(*records: tuple[str, str]) -> bytes:
    out = b""
    for key, value in records:
        rest = f" {key}={value}\n".encode()
        n = len(rest) + len(str(len(rest)))
        n = len(rest) + len(str(n))  # the length counts its own digits
        out += str(n).encode() + rest
    return out


BOT_ENTRY = _block("bot.py", tarfile.REGTYPE, len(BOT)) + _padded(BOT)
END = b"\0" * 1024


def scanned(tar: bytes, max_entries: int = 1000) -> int:
    from arena.web.archive_scan import scan_tar

    return scan_tar(tar, max_entries)


@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_the_walk_counts_honest_tars_as_tarfile_does(fmt: int):
    deep = "/".join(["d" * 30] * 5) + "/x.py"  # over ustar's 100 characters
    members = [member("bot.py", BOT), member("lib", kind=tarfile.DIRTYPE), member(deep, b"1")]
    if fmt == tarfile.USTAR_FORMAT:
        members.pop()
    tar = make_tar(members, fmt)
    assert scanned(tar) == len(members)
    assert sorted(check_upload("b.tgz", gzip.compress(tar)).files)[0] == "bot.py"


def test_a_git_archive_global_header_is_accepted():
    tar = _ext(b"g", _pax(("comment", "0123456789abcdef" * 2 + "01234567"))) + BOT_ENTRY + END
    assert check_upload("b.tgz", gzip.compress(tar)).files == {"bot.py": BOT}


def test_the_finding_and_its_variants_are_refused_before_tarfile_parses():
    from arena.web.archive_scan import ArchiveRefused

    for body, words in [
        (b"9" * 60_000, "run of over 64 digits"),  # CVE-2024-6232's quadratic regex
        (_pax(("path", "bot.py" + "1" * 65)), "run of over 64 digits"),
        (_pax(("comment", "x" * 70_000)), "extended header of 70"),
        (_pax(("GNU.sparse.map", "0,1")), "sparse file"),
    ]:
        with pytest.raises(ArchiveRefused, match=words):
            scanned(_ext(b"x", body) + BOT_ENTRY + END)
        refused("b.tgz", gzip.compress(_ext(b"x", body) + BOT_ENTRY + END), words)
    refused("b.tgz", gzip.compress(_ext(b"L", b"a" * 5000) + BOT_ENTRY + END), "long-name header")
    two = _ext(b"x", _pax(("mtime", "1"))) + _ext(b"x", _pax(("mtime", "2"))) + BOT_ENTRY + END
    refused("b.tgz", gzip.compress(two), "two extension headers")
    size_for_all = _ext(b"g", _pax(("size", "10"))) + BOT_ENTRY + END
    refused("b.tgz", gzip.compress(size_for_all), "sets a size for every file")
    sparse = _block("s.bin", b"S") + BOT_ENTRY + END
    refused("b.tgz", gzip.compress(sparse), "sparse file")
    base256 = _block("x.bin", tarfile.REGTYPE, size_field=b"\xff" * 12) + BOT_ENTRY + END
    refused("b.tgz", gzip.compress(base256), "base-256")


@pytest.mark.parametrize(
    ("tar", "detail"),
    [
        (_block("x", tarfile.REGTYPE, size_field=b"-0000002000\0") + BOT_ENTRY, "negative"),
        (_ext(b"x", _pax(("size", "-5"))) + BOT_ENTRY, "not a plain number"),
        (_ext(b"x", b"30 path=bot.py\n"), "malformed"),  # the length is wrong
        (_ext(b"x", b"11 path=b.py"), "malformed"),  # no newline
        (_ext(b"x", _pax(("path", "b.py")) + b"junk"), "malformed"),
        (_ext(b"x", _pax(("path", "b.py")) + b"\0junk"), "bytes after"),
        (_ext(b"x", b"0 =\n"), "malformed"),
        (bytes(_block("bot.py", tarfile.REGTYPE))[:148] + b"0000000\0" + bytes(356), "checksum"),
    ],
    ids=["negative-size", "pax-size", "length", "newline", "junk", "trailing", "zero", "checksum"],
)
def test_malformed_tar_metadata_is_damaged(tar: bytes, detail: str):
    message = refused("b.tgz", gzip.compress(tar + END), "damaged or unreadable")
    assert detail in message, message


def test_the_walk_follows_tarfile_where_sizes_are_special():
    """A pax ``size`` replaces the header's; an old-style folder (a plain entry named with
    a slash) and a link skip no data whatever their size says: as tarfile reads them."""
    data = b"0123456789"
    sized = _ext(b"x", _pax(("size", "10"))) + _block("d.bin", tarfile.REGTYPE) + _padded(data)
    assert check_upload("b.tgz", gzip.compress(sized + BOT_ENTRY + END)).files["d.bin"] == data
    old_folder = _block("lib/", tarfile.AREGTYPE, size_field=b"00000001000\0")
    tar = old_folder + BOT_ENTRY + END
    with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
        assert scanned(tar) == 2 == len(tf.getmembers())
    assert check_upload("b.tgz", gzip.compress(tar)).files == {"bot.py": BOT}


@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=6))
def test_whatever_the_walk_lets_through_tarfile_reads_the_same_entries(edits):
    from arena.web.archive_scan import ArchiveDamaged, ArchiveRefused

    seed = (
        make_tar(
            [member("bot.py", BOT), member("lib", kind=tarfile.DIRTYPE), member("l" * 120, b"x")],
            tarfile.PAX_FORMAT,
        )
        + _ext(b"g", _pax(("comment", "abc")))
        + BOT_ENTRY
    )
    data = bytearray(seed)
    for at, value in edits:
        data[at % len(data)] = value
    try:
        count = scanned(bytes(data))
    except (ArchiveRefused, ArchiveDamaged):
        return
    try:
        with tarfile.open(fileobj=io.BytesIO(bytes(data)), mode="r:") as tf:
            listed = len(tf.getmembers())
    except tarfile.TarError:
        return
    assert listed <= count  # tarfile never reads past where the walk went


def scanned_zip(data: bytes, max_entries: int = 1000) -> int:
    from arena.web.archive_scan import scan_zip

    return scan_zip(data, max_entries)


def _zip64(data: bytes) -> bytes:
    """The zip with a zip64 end record and locator, its classic end record saying 'see
    zip64' (as a zip64 writer leaves it)."""
    end = data.rindex(b"PK\x05\x06")
    _, _, _, n, total, size, offset, _ = struct.unpack_from("<4s4H2LH", data, end)
    record = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, n, total, size, offset)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, end, 1)
    classic = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                          0xFFFFFFFF, 0)  # fmt: skip
    return data[:end] + record + locator + classic


def test_the_zip_walk_counts_honest_zips_as_zipfile_does():
    plain = make_zip([("bot.py", BOT), ("lib/", b""), ("lib/x.py", b"1")])
    commented = io.BytesIO()
    with zipfile.ZipFile(commented, "w") as zf:
        zf.writestr("bot.py", BOT)
        zf.comment = b"made by hand"
    for data in (plain, _zip64(plain), commented.getvalue(), b"junk before" + plain):
        count = scanned_zip(data)
        assert count == len(zipfile.ZipFile(io.BytesIO(data)).infolist())
        if data.startswith(b"PK"):  # (the gate wants the zip's own first bytes)
            assert "bot.py" in check_upload("b.zip", data).files


def test_oversized_zip_metadata_is_refused_before_zipfile_reads_it():
    one = make_zip([("bot.py", BOT)])
    with_comment = io.BytesIO()
    with zipfile.ZipFile(with_comment, "w") as zf:
        zf.writestr("bot.py", BOT)
        zf.comment = b"c" * 65_000
    refused("b.zip", with_comment.getvalue(), "comment is 65000 bytes")
    lie = bytearray(one)
    struct.pack_into("<HH", lie, lie.rindex(b"PK\x05\x06") + 8, 5000, 5000)
    refused("b.zip", bytes(lie), "over 1000 entries")
    info = zipfile.ZipInfo("data.bin")
    info.extra = struct.pack("<HH", 0xCAFE, 5000) + bytes(5000)
    refused("b.zip", make_zip([("bot.py", BOT), (info, b"x")]), "extra field or comment")
    # 60,000 directory entries: refused at the 1,001st, long before zipfile would list them
    cd, end = one.index(b"PK\x01\x02"), one.rindex(b"PK\x05\x06")
    directory = one[cd:end] * 60_000
    huge = (
        one[:cd]
        + directory
        + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1000, 1000, len(directory), cd, 0)
    )
    refused("b.zip", huge, "over 1000 entries")
    refused("b.zip", one[:-30] + one[-22:], "damaged")  # the directory cut short


@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=6))
def test_whatever_the_zip_walk_lets_through_zipfile_lists_alike(edits):
    from arena.web.archive_scan import ArchiveDamaged, ArchiveRefused

    data = bytearray(_zip64(make_zip([("bot.py", BOT), ("lib/x.py", b"1" * 300)])))
    for at, value in edits:
        data[at % len(data)] = value
    try:
        count = scanned_zip(bytes(data))
    except (ArchiveRefused, ArchiveDamaged):
        return
    from arena.web.uploads import _DAMAGED

    try:
        listed = len(zipfile.ZipFile(io.BytesIO(bytes(data))).infolist())
    except _DAMAGED:  # the gate's "damaged" (zipfile's NotImplementedError "version 6.4" too)
        return
    assert listed == count

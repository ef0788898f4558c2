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

"""Hostile bots at image-build time (issue 8, classes 1 and 2).

Building a bot's image must never run contestant code on the host, and no name a
contestant chose may be read as syntax (Dockerfile, entrypoint, path).  Each refusal is
paired with a control that shows the attack is live: the same requirements line, given to
pip the way the builder used to, does run the planted ``setup.py`` (its marker appears), and
the hostile file names really are on disk.  So a refusal that passes proves a closed door,
not a probe that never fired.  pip here never leaves loopback: no config files, a
file-only index, a private cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from arena.bots import BotSpec, BotSpecError, bot_files, resolve
from arena.sandbox.containers import docker_client
from arena.sandbox.images import ImageBuilder, ImageBuildError, dockerfile, parse_requirements
from bigtwo.loader import split_spec

from testkit import need_docker

EVIL = "arena-probe-evil"
GOOD_BOT = (Path(__file__).parent / "bots" / "good.py").read_text()
PYTHON_ENTRY = ["/opt/bot/bin/python", "-m", "bigtwo.run"]


@pytest.fixture
def engine():
    """The real Docker engine with the base image: skip without, fail under CI."""
    need_docker()
    return docker_client(timeout=120)


@pytest.fixture
def evil(tmp_path, monkeypatch):
    """A source distribution whose ``setup.py`` writes a marker file when anything builds
    it, published every way a requirements file can reach it (path, folder, find-links
    folder, file index), and a pip that stays on this machine."""
    marker = tmp_path / "MARKER"
    setup = (
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('setup.py ran')\n"
        f"from setuptools import setup\nsetup(name={EVIL!r}, version='1.0')\n"
    )
    src = tmp_path / "evil-src"
    src.mkdir()
    (src / "setup.py").write_text(setup)
    links = tmp_path / "links"
    links.mkdir()
    sdist = links / "arena_probe_evil-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        tar.add(src / "setup.py", "arena_probe_evil-1.0/setup.py")
        pkg_info = tmp_path / "PKG-INFO"
        pkg_info.write_text(f"Metadata-Version: 2.1\nName: {EVIL}\nVersion: 1.0\n")
        tar.add(pkg_info, "arena_probe_evil-1.0/PKG-INFO")
    index = tmp_path / "index"
    (index / EVIL).mkdir(parents=True)
    (index / EVIL / "index.html").write_text(f'<a href="{sdist.as_uri()}">{sdist.name}</a>')
    empty_index = tmp_path / "empty-index"
    empty_index.mkdir()
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "PIP_CONSTRAINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", empty_index.as_uri())
    monkeypatch.setenv("PIP_CACHE_DIR", str(tmp_path / "pip-cache"))
    monkeypatch.setenv("PIP_NO_BUILD_ISOLATION", "0")  # build with this setuptools: offline
    monkeypatch.setenv("EVIL_PATH", str(sdist))
    return {"marker": marker, "src": src, "links": links, "sdist": sdist, "index": index}


def old_style_pip(requirements: Path, cwd: Path) -> None:
    """The control: pip over the file as the builder used to run it (``pip wheel -r``)."""
    out = cwd / "control-wheels"
    cmd = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out)]
    subprocess.run([*cmd, "-r", str(requirements)], cwd=cwd, capture_output=True, timeout=300)


def folder_bot(root: Path, name: str, extra: dict[str, str]) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "bot.py").write_text(GOOD_BOT)
    for rel, text in extra.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def refused(builder: ImageBuilder, target: str, *fragments: str) -> str:
    """Building ``target`` fails with one line holding every fragment."""
    with pytest.raises(ImageBuildError) as info:
        builder.ensure(resolve(target))
    message = str(info.value)
    assert "\n" not in message and all(f in message for f in fragments), message
    return message


# -- class 1: requirements.txt never makes the host build anything ----------------------

HOSTILE_REQUIREMENTS = {
    "sdist path": ("{sdist}\n", 1, True),
    "source folder": ("{src}\n", 1, True),
    "file URL": ("file://{sdist}\n", 1, True),
    "direct reference": (EVIL + " @ file://{sdist}\n", 1, True),
    "editable": ("-e {src}\n", 1, True),
    "find-links": ("# more wheels\n--find-links {links}\n" + EVIL + "\n", 2, True),
    "index-url": ("--index-url file://{index}\n" + EVIL + "\n", 1, True),
    "nested file": ("\n-r {nested}\n", 2, True),
    "line continuation": (EVIL + " \\\n @ file://{sdist}\n", 1, True),
    "archive name": ("arena_probe_evil-1.0.tar.gz\n", 1, True),
    "environment variable": ("${{EVIL_PATH}}\n", 1, True),
    "VCS link": ("git+https://example.invalid/evil.git\n", 1, False),
    "VCS reference": (EVIL + " @ git+https://example.invalid/evil.git\n", 1, False),
    "hash option": (EVIL + " --hash=sha256:" + "0" * 64 + "\n", 1, False),
}


@pytest.mark.parametrize("case", HOSTILE_REQUIREMENTS)
def test_requirements_that_would_build_on_the_host_are_refused(case, evil, tmp_path):
    text, line, live = HOSTILE_REQUIREMENTS[case]
    nested = tmp_path / "nested.txt"
    nested.write_text(f"{evil['sdist']}\n")
    folder = folder_bot(tmp_path, "evilbot", {})
    requirements = folder / "requirements.txt"
    requirements.write_text(text.format(nested=nested, **evil))
    # no engine needed: the file is refused before anything runs or is asked
    builder = ImageBuilder(docker_client(timeout=60), cache=tmp_path / "cache")
    refused(builder, str(folder), "'evilbot'", f"requirements.txt line {line}:")
    assert not evil["marker"].exists(), "a build backend ran on the host"
    if live:  # the control: the door was open
        old_style_pip(requirements, cwd=evil["links"])
        assert evil["marker"].exists(), f"control for {case!r} did not run setup.py"


@pytest.mark.docker
def test_a_plain_name_takes_binary_wheels_only(engine, evil, tmp_path, monkeypatch):
    """A bare package name is allowed, but pip's own configuration (here PIP_FIND_LINKS)
    may offer only a source distribution of it: the builder must not build it."""
    monkeypatch.setenv("PIP_FIND_LINKS", str(evil["links"]))
    folder = folder_bot(tmp_path, "namebot", {"requirements.txt": EVIL + "\n"})
    builder = ImageBuilder(engine, cache=tmp_path / "cache")
    refused(builder, str(folder), "'namebot'", "binary wheels only", EVIL)
    assert not evil["marker"].exists(), "a build backend ran on the host"
    old_style_pip(folder / "requirements.txt", cwd=tmp_path)
    assert evil["marker"].exists(), "control: the sdist was not reachable, the probe proved nothing"


def test_plain_requirements_are_accepted_and_normalised():
    text = (
        b"# comment\n\nnumpy>=1.26  # trailing comment\n"
        b'Requests[socks] ==2.*; python_version >= "3.8"\nzope.interface\n'
    )
    assert parse_requirements(text, "b") == [
        "numpy>=1.26",
        'Requests[socks]==2.*; python_version >= "3.8"',
        "zope.interface",
    ]


# -- class 2: names never reach the Dockerfile, a shell or a path ------------------------

HOSTILE_FILE_NAMES = [
    "x\nRUN touch /arena-build-marker",
    "y\nUSER root",
    'q"uote.py',
    "sp ace.py",
    "-rf.py",
    "d\nUSER root/m.py",
    "caf\u00e9.py",
]


@pytest.mark.parametrize("name", HOSTILE_FILE_NAMES)
def test_hostile_file_names_in_a_bot_folder_are_refused(name, tmp_path):
    folder = folder_bot(tmp_path, "namebot", {name: "print('hi')\n"})
    assert (folder / name).is_file()  # the probe is planted
    with pytest.raises(BotSpecError) as info:
        bot_files(resolve(str(folder)))  # what the ladder hashes
    assert "\n" not in str(info.value) and repr(name.split("/")[0]) in str(info.value)
    builder = ImageBuilder(docker_client(timeout=60), cache=tmp_path / "cache")
    refused(builder, str(folder), "'namebot'", "is not allowed")


@pytest.mark.parametrize("name", ["evil\nUSER root", 'quo"te', "sp ace", ".hidden"])
def test_hostile_bot_names_are_refused(name, tmp_path):
    folder = folder_bot(tmp_path, name, {})
    (tmp_path / f"{name}.py").write_text(GOOD_BOT)
    for target in (folder, tmp_path / f"{name}.py"):
        assert target.exists()
        with pytest.raises(BotSpecError) as info:
            resolve(str(target))
        assert "\n" not in str(info.value) and "is not allowed" in str(info.value)


def test_a_bot_py_that_links_elsewhere_is_refused(tmp_path):
    folder = tmp_path / "linkbot"
    folder.mkdir()
    (folder / "bot.py").symlink_to("/etc/passwd")
    with pytest.raises(BotSpecError, match="is a link"):
        resolve(str(folder))


@pytest.mark.parametrize("cls", ["\u0108lass", "_\u00e9t\u00e9"])
def test_a_unicode_class_name_is_refused(cls, tmp_path):
    bot = tmp_path / "uni.py"
    bot.write_text(GOOD_BOT)
    assert split_spec(f"{bot}:{cls}")[1] == cls  # the loader would take it
    with pytest.raises(BotSpecError, match="not an ASCII Python identifier"):
        resolve(f"{bot}:{cls}")


@pytest.mark.parametrize("cls", ['A"]\nUSER root', "A B", "A:B", "1A", "A\\"])
def test_a_class_name_with_odd_characters_never_reaches_the_dockerfile(cls, tmp_path):
    bot = tmp_path / "odd.py"
    bot.write_text(GOOD_BOT)
    with pytest.raises(BotSpecError):  # from the command line: never a class
        resolve(f"{bot}:{cls}")
    spec = BotSpec("odd", bot.resolve(), cls)  # made by hand, past resolve
    builder = ImageBuilder(docker_client(timeout=60), cache=tmp_path / "cache")
    with pytest.raises(ImageBuildError, match="not an ASCII Python identifier"):
        builder.ensure(spec)
    with pytest.raises(ImageBuildError, match="not an ASCII Python identifier"):
        dockerfile("sha256:" + "0" * 64, cls)


def test_the_dockerfile_holds_no_text_from_the_bot():
    recipe = dockerfile("sha256:" + "a" * 64, "MyBot")
    entry = [ln for ln in recipe.splitlines() if ln.startswith("ENTRYPOINT ")]
    assert json.loads(entry[0].removeprefix("ENTRYPOINT ")) == [*PYTHON_ENTRY, "/bot/bot.py:MyBot"]
    with pytest.raises(ImageBuildError):
        dockerfile("python:3.11-slim\nUSER root", None)


def _image_facts(engine, tag: str) -> tuple[dict, list[str]]:
    """The image's config, and the files under /bot as its own user sees them."""
    config = engine.images.get(tag).attrs["Config"]
    listing = engine.containers.run(
        tag,
        entrypoint=[
            "/opt/bot/bin/python",
            "-c",
            "import os; print('\\n'.join(sorted(os.path.relpath(os.path.join(d, f), '/bot') "
            "for d, _, fs in os.walk('/bot') for f in fs)))",
        ],
        network_mode="none",
        remove=True,
    )
    return config, listing.decode().split()


@pytest.mark.docker
def test_accepted_names_build_a_locked_image(engine, tmp_path):
    """Safe names pass, and the image runs as 65534 with exactly the intended entrypoint;
    a file bot is copied under the fixed name bot.py, dotfiles and caches stay out."""
    folder = folder_bot(
        tmp_path,
        "ok-bot_1.0",
        {"helper_mod.py": "X = 1\n", "data/table-1.txt": "t\n", ".secret": "s\n"},
    )
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"\0")
    single = tmp_path / "my-bot.py"
    single.write_text(GOOD_BOT)
    builder = ImageBuilder(engine)  # the shared wheel cache: no pip run when it is warm
    cases = [
        (str(folder), "/bot/bot.py", ["bot.py", "data/table-1.txt", "helper_mod.py"]),
        (f"{single}:Good", "/bot/bot.py:Good", ["bot.py"]),
    ]
    for target, entry, files in cases:
        tag = builder.ensure(resolve(target)).tag
        try:
            config, listing = _image_facts(engine, tag)
            assert config["User"] == "65534:65534"
            assert config["Entrypoint"] == [*PYTHON_ENTRY, entry]
            assert listing == files
        finally:
            engine.images.remove(tag, force=True)

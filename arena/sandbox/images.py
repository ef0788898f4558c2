"""Bot images: one Docker image per bot version, built on a base image with everything
prepared on the host, so the build itself needs no network.

The arena builds, on the host, a wheelhouse holding the SDK wheel, its dependencies and the
bot's own ``requirements.txt`` (pip, with the host's network); the image build copies it in
and installs with ``--no-index`` under ``network_mode=none``.  Images are tagged and labelled
with the bot's name, version and a content hash (bot files + SDK + base image), so an
unchanged bot is a cache hit.

Nothing a contestant wrote runs on the host, and nothing a contestant named is read as
syntax: the host's pip takes binary wheels only (a source distribution would run its build
backend here, as the arena's user, with the network), ``requirements.txt`` may hold only
``name[extras] specifier ; marker`` lines, and the Dockerfile is made of constants, the base
image's id and a checked class name, with the bot copied in under a fixed name."""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

import bigtwo

from ..bots import CLASS_NAME, BotSpec, BotSpecError, bot_digest, bot_files

# what a person waits for ("building …", "built … in 12 s"): the commands show it on stderr
progress = logging.getLogger("arena.progress")

BUILDER_VERSION = "2"
DEFAULT_BASE = "python:3.11-slim"
SDK_DIR = Path(bigtwo.__file__).resolve().parents[1]
LABEL = "org.bigtwo-arena"
ENTRY = "/bot/bot.py"
"""Where the bot's entry file is in its image, whatever it was called on the host."""
BUILD_LIMITS = {"memory": 1 << 30, "memswap": 1 << 30, "cpushares": 512}
"""The build container's limits (installing wheels needs little)."""
BINARY_ONLY = ["wheel", "--quiet", "--only-binary=:all:"]
"""How the host's pip takes the bot's requirements: wheels only, never a build."""
MAX_REQUIREMENTS = 100
ARCHIVE_SUFFIXES: tuple[str, ...] = (".whl", ".zip", ".tar", ".gz", ".tgz", ".bz2", ".tbz")
ARCHIVE_SUFFIXES += (".xz", ".txz", ".lz", ".tlz", ".lzma")
"""pip reads a requirement named like an archive as a path to that file."""
REQUIREMENT_CHARS = re.compile(r"[A-Za-z0-9 \t._\-\[\],;<>=!~*()'\"]*")
"""What a ``name[extras] specifier ; marker`` line needs: no ``$`` (pip expands
``${VAR}`` in requirement files), no ``/``, ``:``, ``@`` or ``\\`` (paths, URLs, direct
references, line continuations)."""
IMAGE_ID = re.compile(r"sha256:[0-9a-f]{64}")


class ImageBuildError(RuntimeError):
    """A bot image could not be built; the message names the bot and the step."""


@dataclass(frozen=True)
class BotImage:
    tag: str
    cached: bool


def _sdk_digest() -> str:
    """What the SDK wheel is made of: its package sources and its pyproject."""
    h = hashlib.sha256()
    sources = [SDK_DIR / "pyproject.toml", *sorted((SDK_DIR / "bigtwo").rglob("*.py"))]
    for p in sources:
        h.update(str(p.relative_to(SDK_DIR)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def parse_requirements(data: bytes, bot: str) -> list[str]:
    """The bot's ``requirements.txt`` as normalised PEP 508 lines, or a one-line error
    naming the bot, the line and why.  Options (``-r``, ``-e``, ``--index-url``,
    ``--find-links``, ``--hash``…), paths, URLs, VCS links and ``name @ url`` direct
    references are refused: each lets the file choose code that pip would build on the
    host, or an index the organizer did not choose."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ImageBuildError(f"bot {bot!r}: requirements.txt is not UTF-8") from None
    out: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r"(^|\s)#.*", "", raw).strip()
        if not line:
            continue
        req = _requirement(line, f"bot {bot!r}: requirements.txt line {number}")
        out.append(req)
        if len(out) > MAX_REQUIREMENTS:
            raise ImageBuildError(
                f"bot {bot!r}: requirements.txt names over {MAX_REQUIREMENTS} packages"
            )
    return out


def _requirement(line: str, where: str) -> str:
    """One requirement line, checked and normalised (see :func:`parse_requirements`)."""
    if line.startswith("-"):
        raise ImageBuildError(f"{where}: options such as {line.split()[0]!r} are not accepted")
    if not REQUIREMENT_CHARS.fullmatch(line):
        raise ImageBuildError(
            f"{where}: only 'name[extras] specifier ; marker' lines are accepted "
            "(no paths, URLs, VCS links, '@' references or line continuations)"
        )
    try:
        req = Requirement(line)
    except InvalidRequirement as exc:
        reason = str(exc).splitlines()[0]
        raise ImageBuildError(f"{where}: not a requirement ({reason})") from None
    if req.url:
        raise ImageBuildError(f"{where}: direct references (name @ URL) are not accepted")
    if req.name.lower().endswith(ARCHIVE_SUFFIXES):
        raise ImageBuildError(f"{where}: {req.name!r} names a file, not a package")
    return str(req)


def _pip(args: list[str], cwd: Path, what: str) -> None:
    """Run the host's pip (from an empty folder, so no name can be read as a local path)."""
    cmd = [sys.executable, "-m", "pip", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=cwd)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()] or ["pip failed"]
        raise ImageBuildError(f"{what}: {lines[-1].strip()}")


def image_tag(name: str, digest: str) -> str:
    """A Docker repository name from a bot's name: lower case, letters and digits joined by
    the separators Docker allows ('.', '_', '__' or dashes; any other run becomes '-'),
    bounded; the digest is the tag."""
    parts = re.split(r"([^a-z0-9]+)", name.lower())
    for i in range(1, len(parts), 2):
        if not re.fullmatch(r"\.|_|__|-+", parts[i]):
            parts[i] = "-"
    safe = "".join(parts)[:64]
    safe = re.sub(r"^[^a-z0-9]+|[^a-z0-9]+$", "", safe)
    return f"bigtwo-bot/{safe or 'bot'}:{digest}"


def dockerfile(base_id: str, cls: str | None) -> str:
    """The image's recipe: constants, the base image's id and a checked class name only.
    The entrypoint is JSON (``json.dumps``), so even the class name is data, not syntax."""
    if not IMAGE_ID.fullmatch(base_id):
        raise ImageBuildError(f"base image id {base_id!r} is not a sha256 id")
    if cls is not None and not CLASS_NAME.fullmatch(cls):
        raise ImageBuildError(f"class name {cls!r} is not an ASCII Python identifier")
    entry = ENTRY + (f":{cls}" if cls else "")
    entrypoint = json.dumps(["/opt/bot/bin/python", "-m", "bigtwo.run", entry])
    return (
        f"FROM {base_id}\n"
        "COPY wheels /tmp/wheels\n"
        "RUN python3 -m venv /opt/bot \\\n"
        " && /opt/bot/bin/pip install --no-index --no-cache-dir --disable-pip-version-check"
        " --only-binary=:all: --find-links /tmp/wheels -r /tmp/wheels/bot-requirements.txt \\\n"
        " && rm -rf /tmp/wheels\n"
        "COPY bot /bot\n"
        "USER 65534:65534\n"
        "WORKDIR /tmp\n"
        "ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1\n"
        f"ENTRYPOINT {entrypoint}\n"
    )


class ImageBuilder:
    """Builds (or finds) the image of a bot."""

    def __init__(self, client: Any, base: str = DEFAULT_BASE, cache: Path | None = None):
        self.client = client
        self.base = base
        self.cache = cache or Path.home() / ".cache" / "bigtwo-arena"

    def _base_id(self) -> str:
        import docker.errors

        try:
            return self.client.images.get(self.base).id
        except docker.errors.ImageNotFound:
            raise ImageBuildError(
                f"base image {self.base!r} is not on this engine; build it offline with "
                "docker/make-base-image.sh (or docker pull it where a registry is reachable)"
            ) from None

    def _wheelhouse(self, requirements: list[str], key: str, bot: str) -> Path:
        """Host-side wheels for the SDK and the bot's requirements (cached by content).

        The SDK (the arena's own code) is built first; the bot's requirements are then
        resolved together with it as binary wheels only, so no contestant-chosen build
        backend ever runs here."""
        out = self.cache / "wheels" / key
        if (out / ".complete").exists():
            return out
        tmp = Path(tempfile.mkdtemp(prefix="wheels-", dir=self.cache))
        try:
            wheels = tmp / "wheels"
            empty = tmp / "cwd"
            empty.mkdir()
            _pip(
                ["wheel", "--quiet", "--no-deps", "--wheel-dir", str(wheels), str(SDK_DIR)],
                empty,
                f"bot {bot!r}: building the SDK wheel failed",
            )
            sdk_wheel = next(wheels.glob("bigtwo_sdk-*.whl"))
            _pip(
                [*BINARY_ONLY, "--wheel-dir", str(wheels), "--", *requirements, str(sdk_wheel)],
                empty,
                f"bot {bot!r}: preparing wheels failed (binary wheels only)",
            )
            (wheels / ".complete").write_text("ok")
            if out.exists():
                shutil.rmtree(out)
            out.parent.mkdir(parents=True, exist_ok=True)
            wheels.rename(out)
            return out
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def ensure(self, spec: BotSpec, version: str = "1") -> BotImage:
        """The bot's image, built unless an image of the same content exists.  Every check
        on what the contestant wrote comes before anything runs."""
        import docker.errors

        if spec.path is None:
            raise ImageBuildError(f"bot {spec.name!r} has no files to build")
        try:
            files = bot_files(spec)
        except BotSpecError as exc:
            raise ImageBuildError(str(exc)) from None
        folder_bot = spec.path.name == "bot.py"
        requirements = parse_requirements(
            files.get("requirements.txt", b"") if folder_bot else b"", spec.name
        )
        self.cache.mkdir(parents=True, exist_ok=True)
        base_id = self._base_id()
        recipe = dockerfile(base_id, spec.cls)
        sdk = _sdk_digest()
        h = hashlib.sha256(bot_digest(files).encode())
        h.update(f"{sdk}/{base_id}/{BUILDER_VERSION}".encode() + recipe.encode())
        digest = h.hexdigest()[:16]
        tag = image_tag(spec.name, digest)
        try:
            self.client.images.get(tag)
            return BotImage(tag, cached=True)
        except docker.errors.ImageNotFound:
            pass
        started = time.monotonic()
        progress.info(
            "building the image of %s (its code is new to this engine%s)…",
            spec.name,
            f"; {len(requirements)} requirement(s) to install" if requirements else "",
        )
        key = hashlib.sha256(sdk.encode() + "\n".join(requirements).encode()).hexdigest()[:16]
        wheels = self._wheelhouse(requirements, key, spec.name)
        if not folder_bot:
            files = {"bot.py": files[spec.path.name]}
        with tempfile.TemporaryDirectory(prefix="botimg-") as ctx:
            _write_context(Path(ctx), wheels, files, requirements, recipe)
            self._build(spec, ctx, tag, digest, version)
        progress.info("built the image of %s in %.1f s", spec.name, time.monotonic() - started)
        return BotImage(tag, cached=False)

    def _build(self, spec: BotSpec, ctx: str, tag: str, digest: str, version: str) -> None:
        """Build under no network and the build container's limits; a failure is one
        line naming the bot with the log's last lines."""
        import docker.errors

        labels = {
            f"{LABEL}.managed": "1",
            f"{LABEL}.bot": spec.name,
            f"{LABEL}.version": version,
            f"{LABEL}.hash": digest,
        }
        try:
            self.client.images.build(
                path=ctx,
                tag=tag,
                labels=labels,
                network_mode="none",
                container_limits=BUILD_LIMITS,
                rm=True,
                forcerm=True,
                pull=False,
            )
        except docker.errors.BuildError as exc:
            log = io.StringIO()
            for chunk in exc.build_log:
                log.write(str(chunk.get("stream", "") or chunk.get("error", "")))
            tail = [ln for ln in log.getvalue().splitlines() if ln.strip()][-3:]
            raise ImageBuildError(
                f"bot {spec.name!r}: image build failed: {' | '.join(tail)}"
            ) from None
        except docker.errors.APIError as exc:
            raise ImageBuildError(f"bot {spec.name!r}: image build failed: {exc}") from None


def _write_context(
    root: Path, wheels: Path, files: dict[str, bytes], requirements: list[str], recipe: str
) -> None:
    """The build context: the wheelhouse with the normalised requirements (never the
    bot's own file), the bot's files under ``bot/`` (names already checked by
    :func:`~arena.bots.bot_files`), and the recipe."""
    shutil.copytree(wheels, root / "wheels")
    lines = ["bigtwo-sdk", *requirements]
    (root / "wheels" / "bot-requirements.txt").write_text("\n".join(lines) + "\n")
    for name, data in files.items():
        target = root / "bot" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (root / "Dockerfile").write_text(recipe)

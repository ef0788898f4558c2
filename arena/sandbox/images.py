"""Bot images: one Docker image per bot version, built on a base image with everything
prepared on the host, so the build itself needs no network.

The arena builds, on the host, a wheelhouse holding the SDK wheel, its dependencies and the
bot's own ``requirements.txt`` (pip, with the host's network); the image build copies it in
and installs with ``--no-index`` under ``network_mode=none``.  Images are tagged and labelled
with the bot's name, version and a content hash (bot files + SDK + base image), so an
unchanged bot is a cache hit."""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bigtwo

from ..bots import BotSpec, BotSpecError, bot_digest, bot_files

BUILDER_VERSION = "1"
DEFAULT_BASE = "python:3.11-slim"
SDK_DIR = Path(bigtwo.__file__).resolve().parents[1]
LABEL = "org.bigtwo-arena"


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

    def _wheelhouse(self, requirements: bytes, key: str) -> Path:
        """Host-side wheels for the SDK and the bot's requirements (cached by content)."""
        out = self.cache / "wheels" / key
        if (out / ".complete").exists():
            return out
        tmp = Path(tempfile.mkdtemp(prefix="wheels-", dir=self.cache))
        try:
            cmd = [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--wheel-dir",
                str(tmp),
                str(SDK_DIR),
            ]
            if requirements.strip():
                req = tmp / "requirements.txt"
                req.write_bytes(requirements)
                cmd += ["-r", str(req)]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            if proc.returncode != 0:
                tail = (proc.stderr.strip().splitlines() or ["pip failed"])[-1]
                raise ImageBuildError(f"preparing wheels failed: {tail}")
            (tmp / ".complete").write_text("ok")
            if out.exists():
                shutil.rmtree(out)
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp.rename(out)
            return out
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def ensure(self, spec: BotSpec, version: str = "1") -> BotImage:
        import docker.errors

        if spec.path is None:
            raise ImageBuildError(f"bot {spec.name!r} has no files to build")
        self.cache.mkdir(parents=True, exist_ok=True)
        try:
            files = bot_files(spec)
        except BotSpecError as exc:
            raise ImageBuildError(str(exc)) from None
        base_id = self._base_id()
        h = hashlib.sha256(bot_digest(files).encode())
        sdk = _sdk_digest()
        h.update(f"{sdk}/{base_id}/{BUILDER_VERSION}".encode())
        digest = h.hexdigest()[:16]
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in spec.name.lower())
        tag = f"bigtwo-bot/{safe.strip('-.') or 'bot'}:{digest}"
        try:
            self.client.images.get(tag)
            return BotImage(tag, cached=True)
        except docker.errors.ImageNotFound:
            pass
        requirements = files.get("requirements.txt", b"")
        wheels = self._wheelhouse(
            requirements, hashlib.sha256(sdk.encode() + requirements).hexdigest()[:16]
        )
        entry = f"/bot/{spec.path.name}" + (f":{spec.cls}" if spec.cls else "")
        with tempfile.TemporaryDirectory(prefix="botimg-") as ctx:
            root = Path(ctx)
            shutil.copytree(wheels, root / "wheels")
            for name, data in files.items():
                target = root / "bot" / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            reqs = "-r /tmp/bot-requirements.txt" if requirements.strip() else ""
            if reqs:
                (root / "wheels" / "bot-requirements.txt").write_bytes(requirements)
            (root / "Dockerfile").write_text(
                f"FROM {self.base}\n"
                "COPY wheels /tmp/wheels\n"
                "RUN python3 -m venv /opt/bot \\\n"
                " && /opt/bot/bin/pip install --no-index --no-cache-dir --disable-pip-version-check"
                " --find-links /tmp/wheels bigtwo-sdk"
                + (" -r /tmp/wheels/bot-requirements.txt" if reqs else "")
                + " \\\n && rm -rf /tmp/wheels\n"
                "COPY bot /bot\n"
                "USER 65534:65534\n"
                "WORKDIR /tmp\n"
                "ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1\n"
                f'ENTRYPOINT ["/opt/bot/bin/python", "-m", "bigtwo.run", "{entry}"]\n'
            )
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
        return BotImage(tag, cached=False)

"""MkDocs hooks: two pages of the site are the repository's READMEs, not copies of them.

The README (the site's home) and the SDK's guide for bot authors (sdk/README.md) are read
where they live, so the site cannot drift from what a visitor of the repository reads; only
their links are rewritten, from the repository's paths to the site's pages. A link this
does not know stays as written, and ``mkdocs build --strict`` then fails on it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]

# site page -> (its source in the repository, [(link prefix there, the same link here)])
PAGES: dict[str, tuple[Path, list[tuple[str, str]]]] = {
    "index.md": (
        ROOT / "README.md",
        [("docs/", ""), ("sdk/README.md", "bot-guide.md")],
    ),
    "bot-guide.md": (
        ROOT / "sdk" / "README.md",
        [("../docs/", ""), ("../README.md", "index.md")],
    ),
}


def _rewrite(text: str, links: list[tuple[str, str]]) -> str:
    for old, new in links:
        text = re.sub(r"(\]\(|src=\")" + re.escape(old), lambda m, n=new: m.group(1) + n, text)
    return text


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    for name, (source, links) in PAGES.items():
        content = _rewrite(source.read_text(encoding="utf-8"), links)
        files.append(File.generated(config, name, content=content))
    return files


def on_serve(server: Any, *, config: MkDocsConfig, builder: Any) -> Any:
    for source, _ in PAGES.values():
        server.watch(str(source))  # `mkdocs serve` rebuilds when a README changes
    return server

"""MkDocs hooks: the site's pages are the repository's Markdown files, links as written.

Two pages of the site are the repository's READMEs, read where they live rather than
copied: the README is the site's home and the SDK's guide for bot authors (sdk/README.md)
its bot guide, so the site cannot drift from what a visitor of the repository reads. Every
page links as it must for the repository (``docs/cli.md`` from the README,
``../sdk/README.md`` from docs/); each relative link is resolved from where its page lives
in the repository and, when it names a file the site holds, rewritten to that page. A link
to anything else stays as written, and ``mkdocs build --strict`` then fails on it.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# site page -> the repository file it is made from (the other pages are docs/ itself)
GENERATED = {
    "index.md": ROOT / "README.md",
    "bot-guide.md": ROOT / "sdk" / "README.md",
}
_LINK = re.compile(r"(\]\(|src=\")([^)\"\s#]+)(#[^)\"\s]*)?")


def _source(src_uri: str) -> Path:
    return GENERATED.get(src_uri, DOCS / src_uri)


def _site_page(path: Path) -> str | None:
    """The site's name for a repository file, or None when the site does not hold it."""
    for page, source in GENERATED.items():
        if path == source:
            return page
    if path.is_relative_to(DOCS):
        return path.relative_to(DOCS).as_posix()
    return None


def _rewrite(markdown: str, src_uri: str) -> str:
    here = _source(src_uri).parent

    def link(m: re.Match[str]) -> str:
        lead, target, anchor = m.group(1), m.group(2), m.group(3) or ""
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
            return m.group(0)  # a URL, or a path the site cannot resolve anyway
        page = _site_page((here / target).resolve())
        if page is None:
            return m.group(0)
        return lead + posixpath.relpath(page, posixpath.dirname(src_uri) or ".") + anchor

    return _LINK.sub(link, markdown)


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    for name, source in GENERATED.items():
        files.append(File.generated(config, name, content=source.read_text(encoding="utf-8")))
    return files


def on_page_markdown(markdown: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
    return _rewrite(markdown, page.file.src_uri)


def on_serve(server: Any, *, config: MkDocsConfig, builder: Any) -> Any:
    for source in GENERATED.values():
        server.watch(str(source))  # `mkdocs serve` rebuilds when a README changes
    return server

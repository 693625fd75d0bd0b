"""``WebFetch``: fetch a URL as readable text (0.3.0a5's ``web_fetch`` tool, on httpx).

HTML becomes plain text (headings as ``#``, list items as ``-``, links as
``text (href)``), JSON is re-indented, other text is kept; binary media types get a short
note instead of their bytes. The text is returned (clipped to ``MAX_CONTENT_LENGTH``) or,
with ``save_to_file``, written to that file with a summary and preview returned. The
request sends ``User-Agent: CLIver`` and follows redirects; results and error texts are
0.3.0a5's (``HTTP 404 - Not Found for URL: ...``, ``Could not reach URL: ... - ...``).
"""

from __future__ import annotations

import html
import json
import logging
import re
from pathlib import Path

from cliver_core._tools import compat_tool
from cliver_core.tools._common import schema, string

logger = logging.getLogger(__name__)

MAX_CONTENT_LENGTH = 20000  # ~5k tokens — keeps LLM context lean

USER_AGENT = "CLIver"
_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.7"
_BINARY = ("image/", "audio/", "video/", "application/octet-stream")
_FLAGS = re.DOTALL | re.IGNORECASE
_REWRITES = [
    (re.compile(r"<script[^>]*>.*?</script>", _FLAGS), ""),
    (re.compile(r"<style[^>]*>.*?</style>", _FLAGS), ""),
    (re.compile(r"<nav[^>]*>.*?</nav>", _FLAGS), ""),
    (re.compile(r"<h1[^>]*>(.*?)</h1>", _FLAGS), r"\n# \1\n"),
    (re.compile(r"<h2[^>]*>(.*?)</h2>", _FLAGS), r"\n## \1\n"),
    (re.compile(r"<h3[^>]*>(.*?)</h3>", _FLAGS), r"\n### \1\n"),
    (re.compile(r"<li[^>]*>(.*?)</li>", _FLAGS), r"\n- \1"),
    (re.compile(r"<br\s*/?>", re.IGNORECASE), "\n"),
    (re.compile(r"<p[^>]*>", re.IGNORECASE), "\n"),
    (re.compile(r"</p>", re.IGNORECASE), "\n"),
    (re.compile(r'<a[^>]*href="([^"]*)"[^>]*>(.*?)</a>', _FLAGS), r"\2 (\1)"),
    (re.compile(r"<[^>]+>"), ""),
]


def _html_to_text(page: str) -> str:
    """Readable text of an HTML page (scripts, styles and navigation dropped)."""
    for pattern, replacement in _REWRITES:
        page = pattern.sub(replacement, page)
    page = html.unescape(page)
    page = re.sub(r"\n{3,}", "\n\n", page)
    page = re.sub(r" {2,}", " ", page)
    return page.strip()


def _save_and_summarize(url: str, content: str, file_path: str) -> str:
    """Write ``content`` to ``file_path`` (parents created); a summary with 30 lines."""
    path = Path(file_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    lines = content.splitlines()
    preview = "\n".join(lines[:30])
    if len(lines) > 30:
        preview += f"\n... ({len(lines) - 30} more lines)"
    return (
        f"Saved to: {file_path} ({len(content):,} chars, {len(lines):,} lines)\n"
        f"Source: {url}\n\n"
        f"Preview (first 30 lines):\n{preview}\n\n"
        f"Use Grep(pattern='...', path='{file_path}') to search, "
        f"or Read(file_path='{file_path}', offset=..., limit=...) to read sections."
    )


def _readable(content: str, content_type: str) -> str:
    kind = content_type.lower()
    if "html" in kind:
        return _html_to_text(content)
    if "json" in kind:
        try:
            return json.dumps(json.loads(content), indent=2)
        except json.JSONDecodeError:
            pass
    return content


@compat_tool(
    name="WebFetch",
    description=(
        "Fetches content from a URL and returns it as readable text.\n\n"
        "For LARGE pages, prefer the save_to_file workflow to avoid flooding the context:\n"
        "  1. WebFetch(url=..., save_to_file='/tmp/page.md') — saves full content to a local file\n"
        "  2. Grep(pattern='...', path='/tmp/page.md') — search the saved file locally\n"
        "  3. Read(file_path='/tmp/page.md', offset=..., limit=...) — read specific sections\n\n"
        "This keeps large web content out of the conversation and avoids unnecessary "
        "round trips.\n\n"
        "Without save_to_file, content is returned directly (truncated to ~20k chars).\n\n"
        "Usage notes:\n"
        "- The URL must be a fully-formed valid URL\n"
        "- This tool is read-only (except when saving to a file)\n"
        "- Supports both public and localhost URLs"
    ),
    parameters=schema({"url": string(), "save_to_file": string()}, ["url"]),
)
def web_fetch(url: str, save_to_file: str | None = None) -> list[dict[str, str]]:
    """Fetches content from a URL and returns it as readable text.

    For large pages, use save_to_file to avoid flooding context.
    Returns content directly (truncated to ~20k chars) when save_to_file is not set.

    Args:
        url: The URL to fetch content from. Must be a fully-formed valid URL.
        save_to_file: Save the full fetched content to this local file path instead
            of returning it. Returns a short summary and the file path. Use Grep or
            Read on the saved file to search or read specific sections without
            loading it all into context.
    """
    try:
        if not url.startswith(("http://", "https://")):
            return [{"error": "URL must start with http:// or https://"}]
        import httpx  # not needed until a page is fetched

        headers = {"User-Agent": USER_AGENT, "Accept": _ACCEPT}
        try:
            with (
                httpx.Client(follow_redirects=True, max_redirects=10, timeout=30) as client,
                client.stream("GET", url, headers=headers) as response,
            ):
                if not 200 <= response.status_code < 300:
                    reason = response.reason_phrase
                    return [{"error": f"HTTP {response.status_code} - {reason} for URL: {url}"}]
                content_type = response.headers.get("Content-Type", "")
                media = content_type.lower().split(";")[0].strip()
                if media.startswith(_BINARY):
                    size = response.headers.get("Content-Length", "unknown")
                    return [
                        {
                            "text": (
                                f"This URL points to a binary file ({media}, {size} bytes), "
                                "not readable text. If you already have this image/media "
                                "embedded in the conversation, analyze it directly instead "
                                "of fetching it."
                            )
                        }
                    ]
                raw = response.read()
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.UnsupportedProtocol) as e:
            return [{"error": f"Could not reach URL: {url} - {e}"}]
        encoding = "utf-8"
        if "charset=" in content_type:
            encoding = content_type.split("charset=")[-1].split(";")[0].strip()
        content = _readable(raw.decode(encoding, errors="replace"), content_type)
        if save_to_file:
            return [{"text": _save_and_summarize(url, content, save_to_file)}]
        if len(content) > MAX_CONTENT_LENGTH:
            total = len(content)
            content = content[:MAX_CONTENT_LENGTH] + (
                f"\n\n... (truncated — showing {MAX_CONTENT_LENGTH:,} of {total:,} chars. "
                "Use save_to_file to get the full content for local search.)"
            )
        return [{"text": f"URL: {url}\n\nContent:\n{content}"}]
    except Exception as e:
        logger.error("Error fetching URL %s: %s", url, e)
        return [{"error": f"Error fetching URL: {e}"}]

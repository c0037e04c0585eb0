"""A minimal Markdown-to-HTML converter for the reports neuromark writes itself (headings,
paragraphs, bullet lists, pipe tables, images, ``code`` and **bold**); not a general
Markdown parser. Text is HTML-escaped."""

from __future__ import annotations

import html
import re
from pathlib import Path

_IMAGE = re.compile(r"^!\[([^\]]*)\]\(([^)]+)\)$")


def _inline(text: str) -> str:
    out = html.escape(text)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)


def markdown_to_html(markdown: str, title: str = "neuromark report") -> str:
    """HTML page of ``markdown`` (as written by :mod:`neuromark.report`)."""
    body: list[str] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if not line:
            i += 1
            continue
        if line.startswith("#"):
            level = min(len(line) - len(line.lstrip("#")), 6)
            body.append(f"<h{level}>{_inline(line[level:].strip())}</h{level}>")
        elif (match := _IMAGE.match(line)) is not None:
            src, alt = html.escape(match.group(2)), html.escape(match.group(1))
            body.append(f'<p><img src="{src}" alt="{alt}"></p>')
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            head, data = rows[0], [r for r in rows[1:] if not all(set(c) <= {"-", ":"} for c in r)]
            body.append("<table><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr>"
                        + "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>"
                                  for r in data) + "</table>")
            continue
        elif line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(f"<li>{_inline(lines[i][2:])}</li>")
                i += 1
            body.append("<ul>" + "".join(items) + "</ul>")
            continue
        else:
            body.append(f"<p>{_inline(line)}</p>")
        i += 1
    style = ("body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.4}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
             "img{max-width:100%}")
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def write_html(markdown_path: str | Path, title: str = "neuromark report") -> Path:
    """Write ``<name>.html`` beside a Markdown report; returns its path."""
    source = Path(markdown_path)
    target = source.with_suffix(".html")
    target.write_text(markdown_to_html(source.read_text(), title))
    return target

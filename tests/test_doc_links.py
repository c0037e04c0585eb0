"""Links between the README and docs pages name files that exist and headings those pages
have (GitHub's anchor rule: lower case, punctuation dropped, spaces to hyphens)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s#]*\.md)?(?:#([^)\s]+))?\)")


def anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.M | re.S)  # no code headings
    return {anchor(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}


def test_anchor_rule_by_hand():
    assert anchor("Adding a benchmark") == "adding-a-benchmark"
    assert anchor("Task `psth_predictivity` and `neuromark.ceilings`") == \
        "task-psth_predictivity-and-neuromarkceilings"


def test_every_link_between_pages_resolves():
    bad = []
    for page in PAGES:
        for number, line in enumerate(page.read_text().splitlines(), 1):
            for target, fragment in LINK.findall(line):
                if target.startswith(("http://", "https://")):
                    continue
                linked = (page.parent / target).resolve() if target else page
                if target and not linked.is_file():
                    bad.append(f"{page.relative_to(ROOT)}:{number}: no file {target}")
                elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
                    bad.append(f"{page.relative_to(ROOT)}:{number}: {target or page.name} has no "
                               f"heading #{fragment}")
    assert not bad, "\n".join(bad)

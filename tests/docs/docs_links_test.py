#!/usr/bin/env python3
"""Every relative link in README.md and docs/*.md resolves.

A link's file must exist (relative to the page that links it), and a
`#fragment`, on the same page or on another Markdown page, must be the anchor
of a heading there as GitHub makes it: the heading's text in lower case,
every character that is not a letter, digit, space, `-` or `_` dropped,
spaces turned into `-`; a repeated heading gets `-1`, `-2`, ... An explicit
`<a id="...">` or `<a name="...">` is an anchor too. Links to other sites
are not fetched. Usage: docs_links_test.py [SOURCE_DIR] (default: the
checkout this file is in).
"""

import pathlib
import re
import sys

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
INLINE_CODE = re.compile(r"`+[^`]*`+")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def prose_lines(text):
    """(line number, line) of every line outside fenced code blocks."""
    fenced = False
    for number, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def slug(heading):
    """GitHub's anchor for a heading's Markdown text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags
    text = text.lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path):
    """Every anchor a page defines."""
    found = set()
    seen = {}
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        found.update(HTML_ANCHOR.findall(line))
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path):
    """(line number, target) of every link on a page, outside code; a link's
    text may run over a line break."""
    prose = [""] * len(path.read_text(encoding="utf-8").split("\n"))
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        prose[number - 1] = line
    for number, line in enumerate(prose, 1):
        reference = REFERENCE.match(line)
        if reference:
            yield number, reference.group(1)
    # Code spans become blanks of the same length, so offsets keep their line.
    text = INLINE_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), "\n".join(prose))
    for match in LINK.finditer(text):
        yield text.count("\n", 0, match.start()) + 1, match.group(1)


def problems(root):
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    cache = {}
    for page in pages:
        for number, target in links(page):
            if not target or EXTERNAL.match(target):
                continue
            file_part, _, fragment = target.partition("#")
            where = f"{page.relative_to(root)}:{number}: {target}"
            linked = (page.parent / file_part).resolve() if file_part else page
            if not linked.exists():
                yield f"{where}: no such file"
                continue
            if not fragment:
                continue
            if linked.suffix != ".md" or linked.is_dir():
                yield f"{where}: an anchor into a file that is not Markdown"
                continue
            if linked not in cache:
                cache[linked] = anchors(linked)
            if fragment not in cache[linked]:
                yield f"{where}: no heading with the anchor #{fragment}"


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                        pathlib.Path(__file__).resolve().parents[2]).resolve()
    found = list(problems(root))
    for problem in found:
        print(problem, file=sys.stderr)
    pages = 1 + len(list((root / "docs").glob("*.md")))
    if found:
        print(f"{len(found)} broken links in {pages} pages", file=sys.stderr)
        return 1
    print(f"every relative link and anchor of {pages} pages resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())

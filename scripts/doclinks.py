#!/usr/bin/env python3
"""Checks the links between the project's Markdown files.

    scripts/doclinks.py [FILE.md...]     (default: every tracked *.md)

Every relative link, [text](path) or [text](path#anchor) or [text](#anchor),
must name a file that exists and, when it names a heading, a heading that
exists in that file under the anchor GitHub gives it. Links with a scheme
(https:, mailto:) are not followed. One line per broken link, then a count;
exit 1 when any is broken, 2 on bad use.
"""
import os
import re
import subprocess
import sys

# [text](target) outside code; a target ends at whitespace or ')'
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def slug(text):
    """The anchor GitHub makes of a heading: markup and punctuation dropped
    (hyphens and underscores kept), lower case, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link: its text
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def lines_outside_code(path):
    """(number, line) of each line not inside a fenced block, with inline
    code spans blanked so that a `[x](y)` shown as code is not a link."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced:
                yield n, re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), line)


def anchors(path, cache={}):
    """Every heading anchor of a Markdown file, numbered as GitHub numbers
    repeated ones (name, name-1, ...)."""
    if path not in cache:
        seen, found = {}, set()
        fenced = False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if FENCE.match(line):
                    fenced = not fenced
                    continue
                m = None if fenced else HEADING.match(line)
                if m:
                    s = slug(m.group(2))
                    k = seen.get(s, 0)
                    found.add(s if k == 0 else f"{s}-{k}")
                    seen[s] = k + 1
        cache[path] = found
    return cache[path]


def broken(path):
    """The number of relative links in the file at path, and one message
    per broken one."""
    out, count = [], 0
    for n, line in lines_outside_code(path):
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto:
            count += 1
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            where = f"{path}:{n}: {target}"
            if not os.path.exists(dest):
                out.append(f"{where}: no file {dest}")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                out.append(f"{where}: no heading with the anchor #{anchor} in {dest}")
    return count, out


def main(argv):
    if any(a.startswith("-") for a in argv):
        print("usage: scripts/doclinks.py [FILE.md...]", file=sys.stderr)
        return 2
    files = argv or subprocess.run(["git", "ls-files", "*.md"], capture_output=True, text=True,
                                   check=True).stdout.split()
    bad, links = [], 0
    for f in files:
        if not os.path.isfile(f):
            print(f"doclinks: no file {f}", file=sys.stderr)
            return 2
        n, b = broken(f)
        links, bad = links + n, bad + b
    for b in bad:
        print(b)
    print(f"doclinks: {links} relative link(s) in {len(files)} file(s), {len(bad)} broken")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

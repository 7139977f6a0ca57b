#!/usr/bin/env python3
"""Every link of README.md, docs/ and the other pages of the repository (results/SCHEMA.md,
configs/README.md, the backends' and benchmarks' READMEs) must resolve inside the repository:
the file or folder it names exists, and a #fragment names a heading of that page (GitHub's
heading anchors). Links to other sites are refused: the pages are read from a clone, and the
repository is what they describe. Usage: docs_links_test.py SOURCE_DIR"""
import pathlib
import re
import sys

LINK = re.compile(r"(?<!\!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")
# The folders whose Markdown pages a reader opens (build folders and run results are not pages).
PAGE_FOLDERS = ("docs", "backends", "benchmarks", "configs", "harness", "results", "tests",
                "workloads")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text):
    """The lines outside fenced code blocks, with inline code spans blanked."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, re.sub(r"`[^`]*`", lambda m: "`" + " " * (len(m.group(0)) - 2) + "`", line)


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = text.lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen = {}
        found = set()
        fenced = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if FENCE.match(line):
                fenced = not fenced
                continue
            match = None if fenced else HEADING.match(line)
            if match:
                base = slug(match.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
        cache[path] = found
    return cache[path]


def check(page, root):
    problems = []
    text = page.read_text(encoding="utf-8")
    for number, line in prose_lines(text):
        for match in LINK.finditer(line):
            target = match.group(1)
            where = f"{page.relative_to(root)}:{number}: link ({target})"
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                problems.append(f"{where} leaves the repository; name the project instead of linking it")
                continue
            path_part, _, fragment = target.partition("#")
            resolved = (page.parent / path_part).resolve() if path_part else page
            if root not in resolved.parents and resolved != root:
                problems.append(f"{where} points outside the repository")
            elif not resolved.exists():
                problems.append(f"{where}: {resolved.relative_to(root)} does not exist")
            elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
                problems.append(f"{where}: {resolved.relative_to(root)} has no heading with anchor #{fragment}")
    return problems


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    pages = [root / "README.md"] + sorted(
        page for folder in PAGE_FOLDERS if (root / folder).is_dir()
        for page in (root / folder).rglob("*.md") if "runs" not in page.relative_to(root).parts)
    problems = [problem for page in pages for problem in check(page, root)]
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} broken link(s) in the repository's pages")
        return 1
    print(f"every link of {len(pages)} pages resolves inside the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main())

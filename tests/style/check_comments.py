#!/usr/bin/env python3
"""Comments say why, for a reader of today's tree: no internal task numbers ("issue 13") and no
source path that does not exist (a file moved or renamed leaves its old name in comments).

    check_comments.py ROOT     exit 0 when clean; else one line per problem, exit 1
"""
import pathlib
import re
import sys

SOURCES = ("harness", "backends", "workloads", "tests", "benchmarks", "tools")
SUFFIXES = {".cpp", ".hpp", ".h", ".cu", ".cuh"}
TASK_NUMBER = re.compile(r"\b(issue|task|ticket)\s+#?\d+", re.IGNORECASE)
SOURCE_PATH = re.compile(r"\b((?:harness|backends|workloads|tests|benchmarks|ci)/[\w./-]+\.(?:cpp|hpp|h|cu|py|sh|toml|md))")


def comments(text):
    """Yield (line number, comment text) of every // comment."""
    for number, line in enumerate(text.splitlines(), 1):
        at = line.find("//")
        if at >= 0 and line[:at].count('"') % 2 == 0:
            yield number, line[at + 2:]


def problems(root):
    for folder in SOURCES:
        base = root / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.suffix not in SUFFIXES or "/build" in str(path.relative_to(root)):
                continue
            relative = path.relative_to(root)
            for number, comment in comments(path.read_text(errors="replace")):
                if TASK_NUMBER.search(comment):
                    yield f"{relative}:{number}: an internal task number in a comment: say why instead"
                for named in SOURCE_PATH.findall(comment):
                    if not (root / named.rstrip(".")).exists():
                        yield f"{relative}:{number}: the comment names {named}, which does not exist"


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    found = list(problems(pathlib.Path(sys.argv[1])))
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

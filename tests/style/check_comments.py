#!/usr/bin/env python3
"""Comments say why, for a reader of today's tree: no internal task numbers ("issue 13"), no C++
or CUDA source named by its path under harness/, backends/ or workloads/ or by its bare file name
("see manifest.hpp") (files move; the type or function a comment means is what a reader searches
for), and no other path that does not exist (a file moved or renamed leaves its old name in
comments). Paths of what a reader opens rather than searches (a config, a script, a doc page, a
test fixture) stay allowed while they exist, and so does a library's header written as an include
names it (<cufile.h>) when no file of the tree has its name.

    check_comments.py ROOT     exit 0 when clean; else one line per problem, exit 1
"""
import pathlib
import re
import sys

SOURCES = ("harness", "backends", "workloads", "tests", "benchmarks", "tools")
SUFFIXES = {".cpp", ".hpp", ".h", ".cu", ".cuh"}
TASK_NUMBER = re.compile(r"\b(issue|task|ticket)\s+#?\d+", re.IGNORECASE)
NAMED_PATH = re.compile(r"\b((?:harness|backends|workloads|tests|benchmarks|ci)/[\w./-]+"
                        r"\.(?:cpp|hpp|h|cuh|cu|py|sh|toml|md))(?!\w)")
CODE_PATH = re.compile(r"(?:harness|backends|workloads)/.+\.(?:cpp|hpp|h|cuh|cu)")
# A C++ or CUDA file name that is not the end of a path.
BARE_NAME = re.compile(r"(?<![\w/.-])[\w.-]+\.(?:cpp|hpp|h|cuh|cu)(?![\w/])")
# The tokens that can hold "//" or "/*" without starting a comment (string, character and raw
# string literals), the words and numbers that tell a character literal from a digit separator
# (u8'a' against 1'000), and the two kinds of comment.
TOKEN = re.compile(r"""
    (?P<raw>(?:u8|[uUL])?R"(?P<delim>[^()\\\s"]{0,16})\((?s:.*?)\)(?P=delim)")
  | (?P<word>[A-Za-z_]\w*)
  | (?P<number>\.?\d(?:[eEpP][+-]|[\w.'])*)
  | (?P<string>"(?:\\.|[^"\\\n])*")
  | (?P<char>'(?:\\.|[^'\\\n])*')
  | (?P<line>//[^\n]*)
  | (?P<block>/\*(?s:.*?)\*/)
""", re.VERBOSE)


def comments(text):
    """Yield (line number, text) of every line of every // and /* */ comment; literals and
    #include lines are code."""
    line, at = 1, 0
    for token in TOKEN.finditer(text):
        line += text.count("\n", at, token.start())
        at = token.start()
        if token.lastgroup == "line":
            yield line, token.group()[2:]
        elif token.lastgroup == "block":
            for offset, part in enumerate(token.group()[2:-2].split("\n")):
                yield line + offset, part


def source_named(relative, number, named):
    return (f"{relative}:{number}: the comment names the source file {named}: "
            "name the type or function it means instead")


def path_problem(relative, number, named, root):
    if CODE_PATH.fullmatch(named):
        return source_named(relative, number, named)
    if not (root / named).exists():
        return f"{relative}:{number}: the comment names {named}, which does not exist"
    return None


def bare_names(comment, own_names):
    """The bare source file names in a comment, less a library's header in angle brackets."""
    for match in BARE_NAME.finditer(comment):
        name, start, end = match.group(), match.start(), match.end()
        included = comment[start - 1:start] == "<" and comment[end:end + 1] == ">"
        if not included or name in own_names:
            yield name


def source_files(root):
    for folder in SOURCES:
        base = root / folder
        if base.is_dir():
            for path in sorted(base.rglob("*")):
                if path.suffix in SUFFIXES and "/build" not in str(path.relative_to(root)):
                    yield path


def problems(root):
    files = list(source_files(root))
    own_names = {path.name for path in files}
    for path in files:
        relative = path.relative_to(root)
        for number, comment in comments(path.read_text(errors="replace")):
            if TASK_NUMBER.search(comment):
                yield f"{relative}:{number}: an internal task number in a comment: say why instead"
            for named in NAMED_PATH.findall(comment):
                problem = path_problem(relative, number, named, root)
                if problem:
                    yield problem
            for name in bare_names(comment, own_names):
                yield source_named(relative, number, name)


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

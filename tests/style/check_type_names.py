#!/usr/bin/env python3
"""No two headers define a type of the same name in the same namespace. The linker keeps one
inline member function (a destructor, say) for both, and a program that links both layers then
runs the other type's code on its objects, which no compiler warning shows.

    check_type_names.py ROOT     exit 0 when every name is defined once; else one line per clash
"""
import collections
import pathlib
import re
import sys

FOLDERS = ("harness", "backends", "workloads")
NAMESPACE = re.compile(r"^namespace ([\w:]+) \{", re.MULTILINE)
DEFINITION = re.compile(r"^(?:struct|class) (\w+)(?: final)?\s*(?:\{|:(?!:)|$)", re.MULTILINE)


def definitions(root):
    """Yield (namespace, type name, header) for every type a header defines at namespace scope."""
    for folder in FOLDERS:
        for header in sorted((root / folder).rglob("*.hpp")):
            text = header.read_text(errors="replace")
            spaces = NAMESPACE.findall(text)
            namespace = spaces[0] if spaces else ""
            for name in DEFINITION.findall(text):
                yield namespace, name, header.relative_to(root)


def clashes(root):
    where = collections.defaultdict(list)
    for namespace, name, header in definitions(root):
        where[(namespace, name)].append(str(header))
    for (namespace, name), headers in sorted(where.items()):
        if len(headers) > 1:
            yield f"{namespace}::{name} is defined in {' and '.join(headers)}: rename one"


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    found = list(clashes(pathlib.Path(sys.argv[1])))
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

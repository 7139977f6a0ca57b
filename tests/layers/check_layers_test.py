#!/usr/bin/env python3
"""The layer checker on small trees: it passes a clean one and names each upward include, each
sideways include, each folder cycle and each file outside every layer of a broken one."""
import os
import subprocess
import sys
import tempfile

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_layers.py")
TABLE = """# lowest first
base   lib/base  :
mid    lib/mid   : base
side   lib/side  : base
top    lib/top   : mid
"""


def tree(root, files):
    for path, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
        with open(os.path.join(root, path), "w", encoding="utf-8") as out:
            out.write(text)


def check(files):
    with tempfile.TemporaryDirectory() as root:
        tree(root, {"cmake/layers.txt": TABLE, **files})
        run = subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True)
        return run.returncode, run.stdout.splitlines()


def expect(condition, message):
    if not condition:
        sys.exit(f"FAIL: {message}")


clean = {
    "lib/base/a.hpp": "#pragma once\n",
    "lib/mid/b.hpp": '#pragma once\n#include "lib/base/a.hpp"\n#include <vector>\n',
    "lib/top/c.cpp": '#include "lib/mid/b.hpp"\n#include "lib/base/a.hpp"\n#include "generated.hpp"\n',
}
code, lines = check(clean)
expect(code == 0 and lines == ["3 files in 4 layers: 0 problem(s)"], f"clean tree: {code} {lines}")

broken = dict(clean)
broken["lib/base/a.hpp"] = '#pragma once\n\n#include "lib/mid/b.hpp"\n'  # upward, and a cycle
broken["lib/side/d.hpp"] = '#include "lib/mid/b.hpp"\n'                  # sideways
broken["lib/other/e.hpp"] = "\n"                                         # in no layer: lib/other is not declared
code, lines = check(broken)
expected = [
    "lib/other/e.hpp: in no layer of cmake/layers.txt: add its folder to a layer",
    'lib/base/a.hpp:3: upward include base -> mid ("lib/mid/b.hpp"); base may use: nothing',
    'lib/side/d.hpp:1: not allowed include side -> mid ("lib/mid/b.hpp"); side may use: base',
    "folder cycle: lib/base <-> lib/mid (includes: lib/base/a.hpp:3, lib/mid/b.hpp:2)",
    "file include cycle: lib/base/a.hpp <-> lib/mid/b.hpp",
    "5 files in 4 layers: 5 problem(s)",
]
expect(code == 1, f"broken tree exits {code}")
expect(lines == expected, "broken tree:\n" + "\n".join(lines))
print("ok")

#!/usr/bin/env python3
"""check_comments.py on a sample tree: the exact problems it must report, and none in code."""
import pathlib
import subprocess
import sys
import tempfile

CHECKER = pathlib.Path(__file__).with_name("check_comments.py")

with tempfile.TemporaryDirectory() as root:
    folder = pathlib.Path(root, "harness", "x")
    folder.mkdir(parents=True)
    (folder / "a.cpp").write_text(
        "// Issue 12: why is missing\n"
        "// see harness/x/gone.hpp and harness/x/a.cpp\n"
        'const char* s = "issue 4 // harness/x/gone.hpp";\n'
        "int a;  // the task 7 left here\n")
    run = subprocess.run([sys.executable, str(CHECKER), root], capture_output=True, text=True)
    expected = ("harness/x/a.cpp:1: an internal task number in a comment: say why instead\n"
                "harness/x/a.cpp:2: the comment names harness/x/gone.hpp, which does not exist\n"
                "harness/x/a.cpp:4: an internal task number in a comment: say why instead\n")
    if run.returncode != 1 or run.stdout != expected:
        print(f"exit {run.returncode}, output:\n{run.stdout}{run.stderr}expected exit 1 and:\n{expected}")
        sys.exit(1)
print("check_comments.py reports exactly the sample's three problems")

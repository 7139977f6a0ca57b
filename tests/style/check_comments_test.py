#!/usr/bin/env python3
"""check_comments.py on a sample tree: the exact problems it must report, and none in code or in
a library's header named as an include names it."""
import pathlib
import subprocess
import sys
import tempfile

CHECKER = pathlib.Path(__file__).with_name("check_comments.py")

with tempfile.TemporaryDirectory() as root:
    folder = pathlib.Path(root, "harness", "x")
    folder.mkdir(parents=True)
    pathlib.Path(root, "tests", "x").mkdir(parents=True)
    pathlib.Path(root, "tests", "x", "t.py").write_text("")
    pathlib.Path(root, "ci").mkdir()
    pathlib.Path(root, "ci", "run.sh").write_text("")
    (folder / "a.cpp").write_text(
        "// Issue 12: why is missing\n"
        "// see harness/x/gone.hpp and harness/x/a.cpp\n"
        'const char* s = "issue 4 // harness/x/gone.hpp";\n'
        "int a;  // the task 7 left here\n"
        '#include "harness/x/b.hpp"  // ci/gone.sh and ci/run.sh run it\n'
        "int b = 1'000; char q = '\"';  // workloads/w.cuh, tests/x/t.py, tests/x/gone_test.cpp\n"
        'auto r = R"(\n'
        "// backends/y.cpp in a raw string\n"
        ')";\n'
        "/* a block naming backends/y/z.h\n"
        "   over two lines: workloads/m.hpp */\n"
        "void f(int /*harness/x/c.cpp*/, const char* = \"/* harness/x/d.cpp */\");\n"
        "// see load_phase.cpp and the manifest.hpp reader, typed by <cufile.h>, <fmt/format.h>\n"
        'const char* t = "gone.cpp";  // <a.cpp> is ours; io.cuh, k.cu, x.h are too (e.g. x.hh)\n'
        "/* <name>_registration.cpp, v1.2.h.\n"
        "   plain.cpp */\n")
    run = subprocess.run([sys.executable, str(CHECKER), root], capture_output=True, text=True)
    fix = ": name the type or function it means instead\n"
    expected = ("harness/x/a.cpp:1: an internal task number in a comment: say why instead\n"
                "harness/x/a.cpp:2: the comment names the source file harness/x/gone.hpp" + fix +
                "harness/x/a.cpp:2: the comment names the source file harness/x/a.cpp" + fix +
                "harness/x/a.cpp:4: an internal task number in a comment: say why instead\n"
                "harness/x/a.cpp:5: the comment names ci/gone.sh, which does not exist\n"
                "harness/x/a.cpp:6: the comment names the source file workloads/w.cuh" + fix +
                "harness/x/a.cpp:6: the comment names tests/x/gone_test.cpp, which does not exist\n"
                "harness/x/a.cpp:10: the comment names the source file backends/y/z.h" + fix +
                "harness/x/a.cpp:11: the comment names the source file workloads/m.hpp" + fix +
                "harness/x/a.cpp:12: the comment names the source file harness/x/c.cpp" + fix +
                "harness/x/a.cpp:13: the comment names the source file load_phase.cpp" + fix +
                "harness/x/a.cpp:13: the comment names the source file manifest.hpp" + fix +
                "harness/x/a.cpp:14: the comment names the source file a.cpp" + fix +
                "harness/x/a.cpp:14: the comment names the source file io.cuh" + fix +
                "harness/x/a.cpp:14: the comment names the source file k.cu" + fix +
                "harness/x/a.cpp:14: the comment names the source file x.h" + fix +
                "harness/x/a.cpp:15: the comment names the source file _registration.cpp" + fix +
                "harness/x/a.cpp:15: the comment names the source file v1.2.h" + fix +
                "harness/x/a.cpp:16: the comment names the source file plain.cpp" + fix)
    if run.returncode != 1 or run.stdout != expected:
        print(f"exit {run.returncode}, output:\n{run.stdout}{run.stderr}expected exit 1 and:\n{expected}")
        sys.exit(1)
print("check_comments.py reports exactly the sample's nineteen problems")

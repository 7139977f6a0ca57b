#!/usr/bin/env python3
"""check_type_names.py on a sample tree: a clash in one namespace is reported exactly; the same
name in another namespace, a forward declaration and a nested definition are not clashes."""
import pathlib
import subprocess
import sys
import tempfile

CHECKER = pathlib.Path(__file__).with_name("check_type_names.py")

with tempfile.TemporaryDirectory() as root:
    def header(path, text):
        file = pathlib.Path(root, path)
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text)

    header("harness/report/a.hpp", "namespace ckpt::harness {\nstruct CaseRecord {\n};\n}\n")
    header("harness/run/b.hpp", "namespace ckpt::harness {\nstruct CaseRecord : Base {\n};\n"
           "class Stream;\nclass Backend::Stream {\n};\n}\n")
    header("backends/s3/c.hpp", "namespace ckpt::backends::s3 {\nstruct CaseRecord {\n};\n}\n")
    run = subprocess.run([sys.executable, str(CHECKER), root], capture_output=True, text=True)
    expected = ("ckpt::harness::CaseRecord is defined in harness/report/a.hpp and "
                "harness/run/b.hpp: rename one\n")
    if run.returncode != 1 or run.stdout != expected:
        print(f"exit {run.returncode}, output:\n{run.stdout}{run.stderr}expected exit 1 and:\n{expected}")
        sys.exit(1)
print("check_type_names.py reports exactly the sample's one clash")

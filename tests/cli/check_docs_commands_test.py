#!/usr/bin/env python3
"""check_docs_commands.py against a stand-in binary that prints CLI11-style help, and a sample
tree: the exact gaps it must report (a command without a page, an option its page does not
name, a README too long or without the command's row), and none for an option named by any of
its names."""
import pathlib
import subprocess
import sys
import tempfile

CHECKER = pathlib.Path(__file__).with_name("check_docs_commands.py")
HELP = {
    "": "Options:\n  -h,--help  Print\n  -q,--quiet Excludes: --verbose\n      Print less\n"
        "  --version  Print the version\n\nSubcommands:\n  run  Run\n  tool  A tool\n"
        "  models  List\n\nExit status: 0 ok.\n",
    "run": "Usage: ckptbench run [OPTIONS] campaign\n\nPositionals:\n  campaign TEXT REQUIRED\n\n"
           "Options:\n  -h,--help  Print\n  --set TEXT ...  Override\n"
           "  --direct,--no-direct{false} O_DIRECT\n  --dry-run  Plan\n",
    "tool": "Options:\n  -h,--help  Print\n\nSubcommands:\n  sub  A nested one\n",
    "tool sub": "Options:\n  -h,--help  Print\n  --level INT=3  Level\n",
    "models": "Options:\n  -h,--help  Print\n  --json  JSON\n",
}

with tempfile.TemporaryDirectory() as root:
    binary = pathlib.Path(root, "fake-ckptbench")
    binary.write_text("#!" + sys.executable + "\nimport sys\nHELP = " + repr(HELP) +
                      "\nprint(HELP[' '.join(sys.argv[1:-1])], end='')\n")
    binary.chmod(0o755)
    pathlib.Path(root, "docs", "commands").mkdir(parents=True)
    pathlib.Path(root, "docs", "commands", "run.md").write_text(
        "`-q` is quiet; `--set K=V`; `--no-direct` reads through the cache; --dry-run-ish\n")
    pathlib.Path(root, "docs", "models.md").write_text("`ckptbench models --json`\n")
    pathlib.Path(root, "README.md").write_text(
        "| [`ckptbench run CAMPAIGN`](docs/commands/run.md) | runs |\n"
        "| [`ckptbench models`](docs/commands/models.md) | a row linking the wrong page |\n" +
        "more\n" * 249)
    run = subprocess.run([sys.executable, str(CHECKER), str(binary), root], capture_output=True,
                         text=True)
    expected = ("README.md has 251 lines, over 250: move reference to a page of docs/\n"
                "docs/commands/run.md: `ckptbench` option --version is not named on it\n"
                "docs/commands/run.md: `ckptbench run` option --dry-run is not named on it\n"
                "`ckptbench tool` has no page: write docs/commands/tool.md\n"
                "`ckptbench tool sub` has no page: write docs/commands/tool.md\n"
                "README.md: the command table has no row "
                "[`ckptbench models ...`](docs/models.md)\n")
    if run.returncode != 1 or run.stdout != expected:
        print(f"exit {run.returncode}, output:\n{run.stdout}{run.stderr}"
              f"expected exit 1 and:\n{expected}")
        sys.exit(1)
print("check_docs_commands.py reports exactly the sample's six gaps")

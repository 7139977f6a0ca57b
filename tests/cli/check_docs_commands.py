#!/usr/bin/env python3
"""Every command and option the binary offers has its page: `ckptbench --help` lists the
subcommands (and each subcommand's --help its own, e.g. `mlperf import`); each has a page, every
option of its --help is named on that page by one of its names (`--quiet` or `-q`), and
README.md's command table links every top-level command's page. A new subcommand or option
without docs fails here, and so does a README.md longer than a front page (README_LINES).

    check_docs_commands.py CKPTBENCH SOURCE_DIR   exit 0 when every one is documented; else one
                                                  line per gap, exit 1
"""
import pathlib
import re
import subprocess
import sys

# The commands documented on a page of their own topic; every other command's page is
# docs/commands/<first word>.md. The top-level options (-q, -v, --version) are run's.
PAGES = {"": "docs/commands/run.md", "models": "docs/models.md", "backends": "docs/backends.md",
         "keys": "docs/campaign-keys.md"}
# The README is the front page: the pitch, the two commands, the quickstart, the commands and a
# map of docs/; reference belongs in docs/.
README_LINES = 250
SECTION = re.compile(r"^(\w[\w ]*):\s*$")
ENTRY = re.compile(r"^  (\S+)")
NAME = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")


def help_of(binary, words):
    run = subprocess.run([binary, *words, "--help"], capture_output=True, text=True, timeout=30)
    if run.returncode != 0:
        sys.exit(f"`ckptbench {' '.join(words)} --help` exited {run.returncode}:\n{run.stderr}")
    return run.stdout


def sections(text):
    """The entries of each `Name:` section of CLI11's help: {section: [first word of a line]}."""
    found, current = {}, None
    for line in text.splitlines():
        heading = SECTION.match(line)
        if heading:
            current = found.setdefault(heading.group(1), [])
        elif current is not None and ENTRY.match(line):
            current.append(ENTRY.match(line).group(1))
        elif line and not line.startswith(" "):
            current = None
    return found


def options(entries):
    """The options of an Options section, each as its names (-q,--quiet; --direct,--no-direct),
    less --help."""
    groups = [NAME.findall(entry.split("{")[0]) for entry in entries if entry.startswith("-")]
    return [names for names in groups if "--help" not in names]


def long_name(names):
    return next(name for name in names if name.startswith("--"))


def commands(binary, words=()):
    """(words, options) of the command `words` and of every subcommand under it."""
    found = sections(help_of(binary, list(words)))
    yield tuple(words), options(found.get("Options", []))
    for sub in found.get("Subcommands", []):
        yield from commands(binary, (*words, sub))


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    binary, root = sys.argv[1], pathlib.Path(sys.argv[2])
    readme = (root / "README.md").read_text(encoding="utf-8")
    problems, count = [], 0
    if len(readme.splitlines()) > README_LINES:
        problems.append(f"README.md has {len(readme.splitlines())} lines, over {README_LINES}: "
                        "move reference to a page of docs/")
    for words, option_groups in commands(binary):
        count += 1
        command = " ".join(("ckptbench",) + words)
        first = words[0] if words else ""
        page = PAGES.get(first, f"docs/commands/{first}.md")
        if not (root / page).exists():
            problems.append(f"`{command}` has no page: write {page}")
            continue
        text = (root / page).read_text(encoding="utf-8")
        for names in option_groups:
            if not any(re.search(r"(?<![\w-])" + re.escape(n) + r"(?![\w-])", text) for n in names):
                problems.append(f"{page}: `{command}` option {long_name(names)} is not named on it")
        row = rf"^\| \[`{command}(?: [^`]*)?`\]\({re.escape(page)}\)"
        if len(words) == 1 and not re.search(row, readme, re.MULTILINE):
            problems.append(f"README.md: the command table has no row [`{command} ...`]({page})")
    for problem in problems:
        print(problem)
    if not problems:
        print(f"{count} commands: each has its page, which names every option of its --help")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

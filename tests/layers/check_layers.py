#!/usr/bin/env python3
"""Checks the include graph of the source tree against the layer table (cmake/layers.txt).

Every `#include "..."` of a file under a layer's folders may name a file of its own layer or of a
layer its table line allows (directly or through those layers' own allowances); anything else is
an upward (or sideways) edge. Folders must not include each other in a cycle, nor files. Each
problem is printed as FILE:LINE with both layers; the exit status is 1 when there is any.

Usage: check_layers.py SOURCE_DIR [--table FILE] [--graph]
  --graph  print the layer-to-layer include counts instead of checking (for docs/architecture.md)
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_SUFFIXES = (".hpp", ".cpp", ".h", ".cu", ".cuh")


def read_table(path):
    """Layers in declaration order (lowest first): name -> (folders, allowed layers)."""
    layers = {}
    for number, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if ":" not in line:
            sys.exit(f"{path}:{number}: expected `layer folder... : lower-layer...`, got `{raw.strip()}`")
        left, right = line.split(":", 1)
        name, *folders = left.split()
        allowed = right.split()
        if not folders:
            sys.exit(f"{path}:{number}: layer {name} names no folder")
        for lower in allowed:
            if lower not in layers:
                sys.exit(f"{path}:{number}: layer {name} may use `{lower}`, which is not declared above it "
                         "(declare layers lowest first)")
        if name in layers:
            sys.exit(f"{path}:{number}: layer {name} is declared twice")
        layers[name] = (folders, allowed)
    return layers


def reachable(layers):
    """Each layer's allowed layers, transitively."""
    closure = {}
    for name, (_, allowed) in layers.items():  # declaration order: lower layers are done first
        below = set(allowed)
        for lower in allowed:
            below |= closure[lower]
        closure[name] = below
    return closure


def layer_of(path, folder_layer):
    best = None
    for folder, name in folder_layer.items():
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best[0]):
                best = (folder, name)
    return best[1] if best else None


def source_files(root, folders):
    for top in sorted(set(f.split("/")[0] for f in folders)):
        for directory, subdirs, files in os.walk(os.path.join(root, top)):
            subdirs.sort()
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/")


def resolve(root, including, target):
    """The repository path an include names: from the root, else beside the including file."""
    for candidate in (target, os.path.normpath(os.path.join(os.path.dirname(including), target))):
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate.replace(os.sep, "/")
    return None  # a generated or system header: not ours to check


def include_edges(root, files):
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as text:
            for number, line in enumerate(text, 1):
                match = INCLUDE.match(line)
                if match:
                    target = resolve(root, path, match.group(1))
                    if target:
                        yield path, number, target


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter[0]
                    counter[0] += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, ())))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--table", default=None)
    parser.add_argument("--graph", action="store_true")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    table = args.table or os.path.join(root, "cmake", "layers.txt")
    layers = read_table(table)
    closure = reachable(layers)
    folder_layer = {folder.rstrip("/"): name for name, (folders, _) in layers.items() for folder in folders}

    problems, counts = [], {}
    files = list(source_files(root, folder_layer))
    folder_graph, file_graph, example = {}, {}, {}
    for path in files:
        if layer_of(path, folder_layer) is None:
            problems.append(f"{path}: in no layer of {os.path.relpath(table, root)}: add its folder to a layer")
    for path, number, target in include_edges(root, files):
        source, dest = layer_of(path, folder_layer), layer_of(target, folder_layer)
        if source is None or dest is None:
            continue
        file_graph.setdefault(path, set()).add(target)
        folders = (os.path.dirname(path), os.path.dirname(target))
        if folders[0] != folders[1]:
            folder_graph.setdefault(folders[0], set()).add(folders[1])
            example.setdefault(folders, f"{path}:{number}")
        if source != dest:
            counts[(source, dest)] = counts.get((source, dest), 0) + 1
            if dest not in closure[source]:
                direction = "upward" if source in closure[dest] else "not allowed"
                problems.append(f"{path}:{number}: {direction} include {source} -> {dest} (\"{target}\"); "
                                f"{source} may use: {' '.join(sorted(closure[source])) or 'nothing'}")
    if args.graph:
        for (source, dest), n in sorted(counts.items()):
            print(f"{source} -> {dest}: {n}")
        return 0
    for component in cycles(folder_graph):
        hops = [example[(a, b)] for a in component for b in component if (a, b) in example]
        problems.append(f"folder cycle: {' <-> '.join(component)} (includes: {', '.join(hops)})")
    for component in cycles(file_graph):
        problems.append(f"file include cycle: {' <-> '.join(component)}")
    for problem in problems:
        print(problem)
    print(f"{len(files)} files in {len(layers)} layers: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

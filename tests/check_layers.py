#!/usr/bin/env python3
"""Fails when the built objects of detrun's folders call each other in a cycle (make test).

tests/check_includes.py reads #include lines; this reads what the linker sees: `nm` on every
object the detrun libraries and the detrun executable are built from. A folder that leaves
a symbol undefined which another folder defines depends on that folder, whatever its
includes say (a declaration written by hand, a handler named in a table). The folders'
dependencies must form no cycle, so that each static library links with only the ones
below it, in layer order; on success the order is printed, bottom first.

It reads the libraries (or objects) named on its command line, FOLDER=FILE each, as
tests/CMakeLists.txt gives them. With --objects it reads every object of a build's detrun
targets instead, its folder the source folder it was compiled from (CMakeFiles/T.dir/
FOLDER/...): so it reads a build of any layout, one library for everything included, to
show the cycles that layout had.

Usage: check_layers.py FOLDER=LIBRARY_OR_OBJECT...
       check_layers.py --objects BUILD_DIR
"""
import collections
import pathlib
import subprocess
import sys

def named(args):
    """(folder, file) from FOLDER=FILE arguments; a file without a name is the previous
    folder's (a folder of several objects)."""
    folder = None
    for arg in args:
        if "=" in arg:
            folder, arg = arg.split("=", 1)
        yield folder, pathlib.Path(arg)


def objects(build, targets="detrun*.dir"):
    """(folder, object) of each object of the detrun targets, its folder the source folder
    it was compiled from: reads a build of any layout (one library for all, say)."""
    for obj in sorted(pathlib.Path(build, "CMakeFiles").glob(f"{targets}/**/*.o")):
        rel = obj.relative_to(build, "CMakeFiles")
        yield rel.parts[1], obj


def symbols(obj):
    """The global symbols an object defines, and the ones it leaves undefined."""
    out = subprocess.run(["nm", "--extern-only", str(obj)], check=True, capture_output=True,
                         text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0] in ("U", "w"):
            undefined.add(fields[1])
        elif len(fields) == 3 and fields[1] not in ("U", "w", "v"):
            defined.add(fields[2])
    return defined, undefined


def folder_graph(files):
    """{folder: {folder it calls: sorted example symbols}}."""
    owner, wants = {}, collections.defaultdict(set)
    for folder, obj in files:
        defined, undefined = symbols(obj)
        for sym in defined:
            owner[sym] = folder
        wants[folder] |= undefined
    graph = {folder: collections.defaultdict(list) for folder in wants}
    for folder, undefined in wants.items():
        for sym in sorted(undefined):
            dep = owner.get(sym)
            if dep and dep != folder:
                graph[folder][dep].append(sym)
    return graph


def cycles(graph):
    """The strongly connected components of more than one folder (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def layer_order(graph):
    """Folders bottom first: each after every folder it calls."""
    order, done = [], set()

    def place(v):
        if v in done:
            return
        done.add(v)
        for w in sorted(graph.get(v, ())):
            place(w)
        order.append(v)

    for v in sorted(graph):
        place(v)
    return order


def main(args):
    if args[:1] == ["--objects"]:
        files = objects(args[1] if len(args) > 1 else "build")
    else:
        files = named(args)
    graph = folder_graph(files)
    if not graph:
        print("no objects: build first")
        return 1
    bad = []
    for component in cycles(graph):
        members = set(component)
        bad.append("cycle between " + ", ".join(component) + ":")
        for a in component:
            for b, syms in sorted(graph[a].items()):
                if b in members:
                    more = f" (+{len(syms) - 3} more)" if len(syms) > 3 else ""
                    bad.append(f"  {a} -> {b}: {', '.join(syms[:3])}{more}")
    for b in bad:
        print(b)
    if bad:
        print("the folders' objects break the layer order (tests/check_layers.py)")
        return 1
    print("layers, bottom first: " + " < ".join(layer_order(graph)))
    for folder in layer_order(graph):
        deps = sorted(graph[folder])
        print(f"  {folder} -> {', '.join(deps) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

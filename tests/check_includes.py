#!/usr/bin/env python3
"""Fails when a folder of detrun includes a folder it must not (make test runs it).

The allowed graph, written down once: each folder may include itself and the folders listed
for it, nothing else. It has no cycles — a folder lower in the list never reaches one higher
— so each can be built, read and tested without the ones above it:

    supervisor -> shim -> recorder -> syscalls, common, proto
               \\-> scheduler (depends on nothing)

A new folder (say debugger/) gets its own line here, and is added to the sets of the folders
that may include it; until then an include of it fails the check, on purpose.

Usage: check_includes.py SOURCE_DIR
"""
import pathlib
import re
import sys

ALLOWED = {
    "common": set(),
    "syscalls": set(),
    "scheduler": set(),
    "recorder": {"common", "syscalls", "proto"},
    "shim": {"common", "syscalls", "recorder", "scheduler", "proto"},
    "supervisor": {"common", "syscalls", "recorder", "scheduler", "shim", "proto"},
    # The supervisor declares the table of hooks a debugger registers (supervisor/debugger_hooks.h).
    # `detrun replicate` (supervisor/commands.h declares its command): a sink and a source
    # of outside input for the record and replay shims.
    "replicate": {"common", "syscalls", "recorder", "scheduler", "shim", "proto", "supervisor"},
    "debugger": {"common", "syscalls", "recorder", "scheduler", "shim", "proto", "supervisor"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/[^"]+"', re.M)


def cycles():
    """Names a cycle in ALLOWED, if the graph itself has one."""
    def reach(start, seen):
        for dep in ALLOWED.get(start, ()):
            if dep not in seen:
                seen.add(dep)
                reach(dep, seen)
        return seen
    return [f for f in ALLOWED if f in reach(f, set())]


def main(root):
    root = pathlib.Path(root)
    bad = [f"the allowed graph itself has a cycle through {f}" for f in cycles()]
    for folder, allowed in ALLOWED.items():
        for path in sorted((root / folder).glob("**/*")):
            if path.suffix not in (".c", ".h", ".def"):
                continue
            for m in INCLUDE.finditer(path.read_text(errors="replace")):
                dep = m.group(1)
                if dep != folder and dep not in allowed:
                    line = path.read_text(errors="replace").count("\n", 0, m.start()) + 1
                    bad.append(f"{path.relative_to(root)}:{line}: {folder}/ must not include "
                               f"{dep}/ (allowed: {', '.join(sorted(allowed)) or 'none'})")
    for b in bad:
        print(b)
    if bad:
        print(f"{len(bad)} include(s) break the folder graph in tests/check_includes.py")
        return 1
    print("folder includes follow the graph: " +
          "; ".join(f"{f} -> {', '.join(sorted(a)) or '-'}" for f, a in ALLOWED.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))

#!/usr/bin/env python3
"""Fails when a function of detrun's own code is over 60 lines or a file over 800 (issue 10's
limits; tests, bench and examples are not held to them). A function is counted from its
first signature line to its closing brace at column 0, as the tree's style writes them."""
import pathlib
import re
import sys

FOLDERS = ["common", "syscalls", "scheduler", "recorder", "shim", "vkernel", "engine",
           "handlers", "debugger", "replicate", "cli"]
MAX_FUNCTION, MAX_FILE = 60, 800


def long_functions(lines):
    for i, line in enumerate(lines):
        if line != "{" or i == 0 or not lines[i - 1].rstrip().endswith(")"):
            continue
        start = i - 1
        while start > 0 and not re.match(r"[A-Za-z_]", lines[start]):
            start -= 1
        end = i + 1
        while end < len(lines) and lines[end] != "}":
            end += 1
        if end - start + 1 > MAX_FUNCTION:
            yield start + 1, end - start + 1, lines[start].strip()


def main(root):
    bad = []
    for folder in FOLDERS:
        for path in sorted((pathlib.Path(root) / folder).glob("*.[ch]")):
            lines = path.read_text(errors="replace").split("\n")
            name = path.relative_to(root)
            if len(lines) - 1 > MAX_FILE:
                bad.append(f"{name}: {len(lines) - 1} lines (at most {MAX_FILE})")
            for line, n, sig in long_functions(lines):
                bad.append(f"{name}:{line}: {sig[:60]} is {n} lines (at most {MAX_FUNCTION})")
    for b in bad:
        print(b)
    print(f"{len(bad)} over the limits" if bad else
          f"every function within {MAX_FUNCTION} lines, every file within {MAX_FILE}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))

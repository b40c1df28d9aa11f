#!/usr/bin/env python3
"""Checks that every test SPEC.md's Traceability table cites exists in the repository.

Reads the "checked by" column (the last) of the table under "## Traceability" and checks each
backticked citation there:

* `path/to/file.rs` or `path/to/script.py`: the file (or directory) exists;
* `path/to/file.rs::name` and `path/to/file.rs::{a, b}`: each `fn name` is in that file
  (`def name` in a Python file, `path/to/test_file.py::name`);
* `crate::module` and `crate::module::name` (crates storage, txlog, expr, datafile, mvcc,
  compaction, iceberg, alluvium_state, alluvium for the facade, alluvium_cli and alluvium_bench): the module file
  exists, and `fn name` is in it or its directory;
* after "fuzz target": `fuzz/fuzz_targets/<name>.rs` exists;
* after "conformance" (with shell globs such as `v2-*`): a table of that name is in
  `tests/data/conformance/tables`;
* after "case" (interop cases): `def case_<name>` is in a Python file of `tests/interop`;
* a bare `name` (a test function or loom model): some `fn name` is in the repository;
  a bare `CONSTANT`: the name occurs in some Rust file; a bare crate name: the crate exists.

Prints the missing citations and exits non-zero if there are any.

    .ci/check_traceability.py [SPEC.md]
"""

import fnmatch
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRATES = {
    "storage": "storage/src",
    "txlog": "txlog/src",
    "expr": "expr/src",
    "datafile": "datafile/src",
    "mvcc": "mvcc/src",
    "compaction": "compaction/src",
    "iceberg": "iceberg/src",
    "alluvium_state": "state/src",
    "alluvium": "src",
    "alluvium_cli": "cli/src",
    "alluvium_bench": "bench/src",
}
CONFORMANCE = "tests/data/conformance/tables"
INTEROP = "tests/interop"
SKIP_DIRS = {"target", ".git", "data", "corpus", "artifacts"}
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def rust_files(base):
    """Every .rs file under `base` (a file or directory relative to ROOT)."""
    path = os.path.join(ROOT, base)
    if os.path.isfile(path):
        yield path
        return
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for name in filenames:
            if name.endswith(".rs"):
                yield os.path.join(dirpath, name)


_TEXT = {}


def text(path):
    if path not in _TEXT:
        with open(path, encoding="utf-8", errors="replace") as f:
            _TEXT[path] = f.read()
    return _TEXT[path]


def defines_fn(paths, name):
    rust = re.compile(r"\bfn\s+" + re.escape(name) + r"\b")
    python = re.compile(r"^\s*(?:async\s+)?def\s+" + re.escape(name) + r"\b", re.M)
    return any((python if p.endswith(".py") else rust).search(text(p)) for p in paths)


def names_in(tail):
    """`a` or `{a, b}` -> [a] or [a, b]."""
    tail = tail.strip()
    if tail.startswith("{") and tail.endswith("}"):
        return [n.strip() for n in tail[1:-1].split(",") if n.strip()]
    return [tail]


def module_files(segments):
    """The files of module `crate::a::b` (`segments` = [crate, a, b]), or None."""
    src = CRATES.get(segments[0])
    if src is None:
        return None
    rel = os.path.join(src, *segments[1:])
    if len(segments) == 1:
        return list(rust_files(src))
    files = []
    if os.path.isfile(os.path.join(ROOT, rel + ".rs")):
        files.append(os.path.join(ROOT, rel + ".rs"))
    if os.path.isdir(os.path.join(ROOT, rel)):
        files.extend(rust_files(rel))
    return files or None


def check_path_citation(cite):
    """`file::names`, `file`: a list of problems."""
    head, _, tail = cite.partition("::")
    if not os.path.exists(os.path.join(ROOT, head)):
        return [f"{cite}: no file {head}"]
    if not tail:
        return []
    files = list(rust_files(head))
    kind = "def" if head.endswith(".py") else "fn"
    return [f"{cite}: no {kind} {n} in {head}" for n in names_in(tail) if not defines_fn(files, n)]


def check_module_citation(cite):
    """`crate::module[::name | ::{a, b}]`: a list of problems."""
    # An inline test module (`mod tests`, `mod write_tests`) lives in its module's file:
    # `m::tests::f` is checked as `m::f`.
    parts = [p for p in cite.split("::") if p != "tests" and not p.endswith("_tests")]
    if parts[-1].startswith("{"):
        files = module_files(parts[:-1])
        if files is None:
            return [f"{cite}: no module {'::'.join(parts[:-1])}"]
        return [f"{cite}: no fn {n}" for n in names_in(parts[-1]) if not defines_fn(files, n)]
    if module_files(parts) is not None:
        return []
    files = module_files(parts[:-1]) if len(parts) > 1 else None
    if files is None:
        return [f"{cite}: no module {'::'.join(parts[:-1]) or cite}"]
    return [] if defines_fn(files, parts[-1]) else [f"{cite}: no module or fn {parts[-1]}"]


def check_citation(cite, context):
    cite = cite.strip()
    head = cite.partition("::")[0]
    if "/" in head or head.endswith((".rs", ".py")):
        return check_path_citation(cite)
    if "::" in cite:
        return check_module_citation(cite)
    if context == "fuzz":
        path = f"fuzz/fuzz_targets/{cite}.rs"
        return [] if os.path.isfile(os.path.join(ROOT, path)) else [f"{cite}: no {path}"]
    if context == "case":
        pattern = re.compile(r"\bdef\s+case_" + re.escape(cite) + r"\b")
        scripts = os.path.join(ROOT, INTEROP)
        if any(
            pattern.search(text(os.path.join(scripts, f)))
            for f in os.listdir(scripts)
            if f.endswith(".py")
        ):
            return []
        return [f"{cite}: no def case_{cite} in {INTEROP}"]
    if cite in CRATES:
        return []
    if context == "conformance" and os.path.isdir(os.path.join(ROOT, CONFORMANCE, cite)):
        return []
    if (context == "conformance" and not IDENT.match(cite)) or "*" in cite:
        if fnmatch.filter(os.listdir(os.path.join(ROOT, CONFORMANCE)), cite):
            return []
        return [f"{cite}: no conformance table matches in {CONFORMANCE}"]
    if IDENT.match(cite):
        everything = list(rust_files("."))
        if cite.isupper():
            found = any(re.search(r"\b" + cite + r"\b", text(p)) for p in everything)
        else:
            found = defines_fn(everything, cite)
        return [] if found else [f"{cite}: no such fn or name in the repository"]
    return [f"{cite}: not a citation this script understands"]


def citations(cell):
    """The backticked spans of a cell, each with the kind named just before it ("fuzz",
    "conformance", "case" or None). A kind carries over a list: "conformance `a`, `b`"."""
    context, pos = None, 0
    for m in re.finditer(r"`([^`]+)`", cell):
        before = cell[pos : m.start()].lower()
        pos = m.end()
        if "fuzz target" in before:
            context = "fuzz"
        elif "conformance" in before:
            context = "conformance"
        elif re.search(r"\bcase\b", before):
            context = "case"
        elif before.strip() not in ("", ","):
            context = None
        yield m.group(1), context


def rows(spec):
    """The "checked by" cells of the Traceability table."""
    in_section = False
    for line in spec.splitlines():
        if line.startswith("## "):
            in_section = line.strip() == "## Traceability"
            continue
        if not in_section or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if set(cells[-1]) <= set("-: ") or cells[-1] == "checked by":
            continue
        yield cells[-1]


def main():
    spec_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "SPEC.md")
    with open(spec_path, encoding="utf-8") as f:
        spec = f.read()
    problems, checked = [], 0
    for cell in rows(spec):
        for cite, context in citations(cell):
            checked += 1
            problems.extend(check_citation(cite, context))
    if checked == 0:
        print(f"no citations found in the Traceability table of {spec_path}", file=sys.stderr)
        return 1
    if problems:
        print(f"SPEC.md Traceability table cites {len(problems)} missing test(s):", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    print(f"SPEC.md Traceability table: all {checked} citations found")
    return 0


if __name__ == "__main__":
    sys.exit(main())

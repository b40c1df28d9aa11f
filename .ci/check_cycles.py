#!/usr/bin/env python3
"""Checks that the root crate's modules import each other in layers, without cycles.

The nodes are the modules of `src/` one level down: `src/<m>.rs` or `src/<m>/` is node `m`;
under `src/ops/`, each operation (`src/ops/<op>.rs` or `src/ops/<op>/`) is its own node
`ops::<op>`, and `src/ops/mod.rs` itself is node `ops`. An edge `a -> b` is an import by a file
of `a` of a path into `b`:

* `crate::b::..` anywhere in code (`use` trees with braces are expanded);
* `super::..` and `self::..`, resolved against the importing file's module;
* `crate::Name` where `Name` is re-exported by `src/lib.rs` (`pub use b::..::Name`): the
  edge goes to the module that defines it, so the facade's re-exports hide no edge.

Comments and each file's trailing `#[cfg(test)] mod tests` are ignored (unit tests may use
anything they test).

What is allowed:

* The facade, `lib.rs`, `table.rs` (the `Table` handle) and `error.rs` (`Error`, `Result`),
  may be imported by every module: they are the shared types, not layers. Their own imports
  are checked: they must not import `commit`, `rows`, `read` or any `ops` module.
* The layers are, from the bottom: `read` and `commit` (rank 0), `rows` (rank 1), `ops` and
  every `ops::<op>` (rank 2). An edge from a layer to a higher one fails.
* No module may be on an import cycle with another, in any layer (operations may share
  code with each other, in one direction only). The other modules (`verify`,
  `snapshot`, `report`, ...) have no rank, but take part in the cycle check.

Prints every cycle and every upward edge, with the files and lines that make them, and
exits 1 if there is any.

    .ci/check_cycles.py [--graph]   (--graph also prints every edge)
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
FACADE = {"lib", "table", "error"}
# Imports the facade files may make of the layered modules (file node -> allowed targets).
FACADE_ALLOWED = {}
RANK = {"read": 0, "commit": 0, "rows": 1, "ops": 2}
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def module_path(path):
    """The module path of a source file: src/a/b.rs -> [a, b]; src/a/mod.rs -> [a]."""
    rel = os.path.relpath(path, SRC)[: -len(".rs")].split(os.sep)
    if rel[-1] == "mod" or rel == ["lib"]:
        rel = rel[:-1]
    return rel


def node_of(path_segments):
    """The graph node a module path (or an item path) belongs to, or None for lib.rs."""
    if not path_segments:
        return "lib"
    top = path_segments[0]
    if top == "ops" and len(path_segments) > 1 and path_segments[1] in OPS_MODULES:
        return "ops::" + path_segments[1]
    return top


def strip_code(text):
    """The code of a file without comments, string contents and its trailing unit tests."""
    m = re.search(r"^#\[cfg\(test\)\]\s*\n\s*mod tests\b", text, re.M)
    if m:
        text = text[: m.start()]
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif re.match(r'b?r#*"', text[i : i + 8]) and (i == 0 or not re.match(r"\w", text[i - 1])):
            # A raw string: it ends at the quote followed by as many hashes as it opened with.
            m = re.match(r'b?r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i : i + 4]):
            # A char literal (a lifetime has no closing quote right after one character).
            j = text.find("'", i + 1 + (1 if text[i + 1] == "\\" else 0) + 1)
            out.append("' '")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand_tree(tree):
    """The paths of a `use` tree (`a::{b, c::{d, e}}` -> a::b, a::c::d, a::c::e)."""
    tree = re.sub(r"\s+", "", tree)
    m = re.match(r"^(.*?)\{(.*)\}$", tree)
    if not m:
        return [re.sub(r"as" + IDENT + "$", "", tree.split(" as ")[0])]
    prefix, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p:
            out.extend(expand_tree(prefix + p))
    return out


def paths_in(code):
    """(line, path) for every crate/super/self path the code names."""
    found = []
    for m in re.finditer(r"\buse\s+([^;]*);", code):
        line = code.count("\n", 0, m.start()) + 1
        for p in expand_tree(m.group(1)):
            found.append((line, p))
    without_uses = re.sub(r"\buse\s+[^;]*;", lambda m: "\n" * m.group(0).count("\n"), code)
    for m in re.finditer(r"\b((?:crate|super|self)(?:::" + IDENT + r")+)", without_uses):
        found.append((without_uses.count("\n", 0, m.start()) + 1, m.group(1)))
    return found


def resolve(path, here):
    """The absolute module/item path of `path` as written in module `here`, or None."""
    segs = [s for s in path.split("::") if s and s != "*"]
    if not segs:
        return None
    if segs[0] == "crate":
        return segs[1:]
    if segs[0] in ("super", "self"):
        base = list(here)
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
        return base + segs
    return None


def top_modules():
    """The names of src's top-level modules and of src/ops's modules."""
    def names(d):
        out = set()
        if not os.path.isdir(d):
            return out
        for e in os.listdir(d):
            if e.endswith(".rs") and e not in ("mod.rs", "lib.rs"):
                out.add(e[:-3])
            elif os.path.isdir(os.path.join(d, e)):
                out.add(e)
        return out
    return names(SRC), names(os.path.join(SRC, "ops"))


TOP_MODULES, OPS_MODULES = top_modules()


def reexports():
    """Names `src/lib.rs` re-exports from the crate's own modules -> their module path."""
    code = strip_code(open(os.path.join(SRC, "lib.rs"), encoding="utf-8").read())
    paths = []
    for m in re.finditer(r"\bpub\s+use\s+([^;]*);", code):
        for p in expand_tree(m.group(1)):
            segs = p.split("::")
            paths.append(segs[1:] if segs[0] == "crate" else segs)
    out = {}
    # Twice, so that a name re-exported through a re-exported module
    # (`pub use read::{changes}; pub use changes::ChangesBuilder;`) resolves too.
    for _ in range(2):
        for segs in paths:
            if segs and segs[0] not in TOP_MODULES and segs[0] in out:
                segs = out[segs[0]] + segs
            if segs and segs[0] in TOP_MODULES:
                out[segs[-1]] = segs[:-1]
    return out


def build_graph():
    """{(a, b): [(file, line), ..]} for every edge a -> b between distinct nodes."""
    names = reexports()
    edges = {}
    for dirpath, _, files in os.walk(SRC):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            full = os.path.join(dirpath, f)
            here = module_path(full)
            src_node = node_of(here)
            code = strip_code(open(full, encoding="utf-8").read())
            for line, p in paths_in(code):
                target = resolve(p, here)
                if target is None:
                    continue
                if target and target[0] not in TOP_MODULES:
                    if target[0] in names:
                        target = names[target[0]]
                    else:
                        continue
                dst = node_of(target)
                if dst != src_node and dst != "lib":
                    rel = os.path.relpath(full, ROOT)
                    edges.setdefault((src_node, dst), []).append((rel, line))
    return edges


def rank(node):
    return RANK.get(node.split("::")[0])


def cycles(edges):
    """The strongly connected components of more than one node (Tarjan), sorted."""
    graph = {}
    for a, b in edges:
        if a in FACADE or b in FACADE:
            continue
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def where(edges, a, b):
    return ", ".join(f"{f}:{l}" for f, l in sorted(set(edges[(a, b)]))[:3])


def main():
    edges = build_graph()
    if "--graph" in sys.argv:
        for a, b in sorted(edges):
            print(f"{a} -> {b}   ({where(edges, a, b)})")
    failures = []
    for comp in cycles(edges):
        members = set(comp)
        inner = sorted((a, b) for a, b in edges if a in members and b in members)
        failures.append("import cycle among " + ", ".join(comp) + ":")
        failures.extend(f"  {a} -> {b}   ({where(edges, a, b)})" for a, b in inner)
    for (a, b) in sorted(edges):
        ra, rb = rank(a), rank(b)
        if ra is not None and rb is not None and rb > ra:
            failures.append(f"upward import {a} -> {b}   ({where(edges, a, b)})")
        if a in FACADE and rb is not None and b not in FACADE_ALLOWED.get(a, set()):
            failures.append(f"the facade imports a layer: {a} -> {b}   ({where(edges, a, b)})")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"no import cycle and no upward import among {len({n for e in edges for n in e})} "
          f"modules of src/ ({len(edges)} edges)")


if __name__ == "__main__":
    main()

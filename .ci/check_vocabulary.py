#!/usr/bin/env python3
"""Checks that the Delta protocol's vocabulary is spelled only in its vocabulary modules.

A table property, a column-metadata key or a table-feature name written as a string
literal anywhere else is a second home for it, which can drift from the first. Outside the
vocabulary modules (VOCABULARY below), this fails on a Rust string literal whose whole text

* starts with `delta.` and holds no whitespace (a table property such as
  `"delta.enableDeletionVectors"`, a key prefix such as `"delta.constraints."` or a
  format string building one, a column-metadata key such as `"delta.generationExpression"`);
* is a column-metadata key of `ColumnMetadataKey` that does not start with `delta.`
  (`"CURRENT_DEFAULT"`);
* is a table-feature name of `TableFeature` (`"deletionVectors"`, `"typeWidening-preview"`).

The names are read from the vocabulary modules themselves (the `=> "name"` arms of
`TableFeature::as_str` and `ColumnMetadataKey::as_str`), so a new variant is checked as soon
as it exists. Literals inside messages (with spaces) and inside comments are not names.

Exempt, so tests and fixtures can spell what they test:

* files under a `tests/`, `examples/`, `benches/` or `fuzz/` directory (integration tests,
  and programs that use the library as an embedder does, where spelling a property as a
  user types it is the point);
* items under `#[cfg(test)]` (the brace-delimited item the attribute applies to), and the
  files of modules declared as `#[cfg(test)] mod name;`;
* a literal on a line that, or whose previous line, has a comment containing
  `vocabulary:` followed by the reason (for a string that only looks like a name: a domain
  name such as `"delta.rowTracking"`, a `commitInfo` field `"inCommitTimestamp"`, the
  `clusteringProvider` value `"liquid"`).

Prints each stray literal as `path:line: "text" (what it looks like)` and exits 1 if there
are any.

    .ci/check_vocabulary.py [ROOT]
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The modules that spell the vocabulary (paths relative to the repository root).
FEATURE_MODULE = "txlog/src/table/table_feature.rs"
COLUMN_METADATA_MODULE = "txlog/src/schema/column_metadata.rs"
VOCABULARY = {
    FEATURE_MODULE,
    COLUMN_METADATA_MODULE,
    "txlog/src/table/properties.rs",
    "txlog/src/cdf.rs",
}
SKIP_DIRS = {"target", ".git", "tests", "examples", "benches", "fuzz", "node_modules"}
MARKER = "vocabulary:"


def rust_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(".rs"):
                yield os.path.join(dirpath, name)


def lex(text):
    """The string literals of Rust source `text`, and its comments.

    Returns (literals, comments, test_lines): literals as (line, content, in_test), comments
    as {line: comment text}, and the names of modules declared `#[cfg(test)] mod name;`.
    A literal is in_test when it lies inside the item a `#[cfg(test)]` attribute applies to.
    """
    literals = []
    comments = {}
    test_mods = []
    i, n, line = 0, len(text), 1
    depth = 0
    pending_test = False  # saw #[cfg(test)], its item has not started yet
    test_depth = None  # brace depth at which the current test item ends
    cfg_test = re.compile(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]")
    test_mod = re.compile(r"(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(\w+)\s*;")

    def add_comment(at, body):
        comments[at] = comments.get(at, "") + body

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            add_comment(line, text[i:end])
            i = end
        elif text.startswith("/*", i):
            nest, j = 1, i + 2
            while j < n and nest:
                if text.startswith("/*", j):
                    nest, j = nest + 1, j + 2
                elif text.startswith("*/", j):
                    nest, j = nest - 1, j + 2
                else:
                    j += 1
            body = text[i:j]
            add_comment(line, body)
            line += body.count("\n")
            i = j
        elif c in "rbc" and re.match(r"(?:br|r|cr)#*\"", text[i:i + 260]) and (
            i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
        ):
            m = re.match(r"(?:br|r|cr)(#*)\"", text[i:])
            close = '"' + m.group(1)
            start = i + m.end()
            end = text.find(close, start)
            end = n if end < 0 else end
            content = text[start:end]
            if not m.group(0).startswith("b"):
                literals.append((line, content, test_depth is not None))
            line += text[i:end + len(close)].count("\n")
            i = end + len(close)
        elif c == '"' or (
            c in "bc" and text.startswith('"', i + 1)
            and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))
        ):
            byte = c == "b"
            j = i + (1 if c == '"' else 2)
            start = j
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            content = text[start:j]
            if not byte:
                literals.append((line, content, test_depth is not None))
            line += content.count("\n")
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}') or a lifetime / label ('a).
            if text.startswith("\\", i + 1):
                j = i + 3  # past the backslash and the escaped character ('\'', '\\')
                while j < n and text[j] != "'":
                    j += 1
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":
                i += 3
            else:
                i += 1
        elif c == "#" and cfg_test.match(text, i):
            pending_test = test_depth is None
            i = cfg_test.match(text, i).end()
        elif c == "{":
            if pending_test:
                test_depth, pending_test = depth, False
            depth += 1
            i += 1
        elif c == "}":
            depth -= 1
            if test_depth is not None and depth == test_depth:
                test_depth = None
            i += 1
        elif c == ";":
            if pending_test:
                pending_test = False
            i += 1
        elif pending_test and c in "mp":
            m = test_mod.match(text, i)
            if m:
                test_mods.append(m.group(1))
                pending_test = False
                i = m.end()
            else:
                i += 1
        else:
            i += 1
    return literals, comments, test_mods


def arm_names(path):
    """The strings of the `=> "name"` match arms of a vocabulary module (tests excluded)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = text.split("#[cfg(test)]")[0]
    return set(re.findall(r'=>\s*"([^"]+)"', text))


def child_module_files(path, name):
    base, file = os.path.split(path)
    if file not in ("mod.rs", "lib.rs", "main.rs"):
        base = os.path.join(base, file[:-3])
    return [os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")]


def main():
    root = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    features = arm_names(os.path.join(root, FEATURE_MODULE))
    metadata_keys = arm_names(os.path.join(root, COLUMN_METADATA_MODULE))
    if len(features) < 20 or not metadata_keys:
        print(f"could not read the vocabulary from {FEATURE_MODULE} and "
              f"{COLUMN_METADATA_MODULE}", file=sys.stderr)
        return 2
    files = list(rust_files(root))
    lexed = {}
    test_files = set()
    for path in files:
        with open(path, encoding="utf-8") as f:
            lexed[path] = lex(f.read())
        for name in lexed[path][2]:
            test_files.update(child_module_files(path, name))
    stray = []
    for path in files:
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        if rel in VOCABULARY or path in test_files:
            continue
        literals, comments, _ = lexed[path]
        for line, content, in_test in literals:
            if in_test:
                continue
            if content.startswith("delta.") and not re.search(r"\s", content):
                what = "a table property or column-metadata key"
            elif content in metadata_keys:
                what = "a column-metadata key"
            elif content in features:
                what = "a table-feature name"
            else:
                continue
            if MARKER in comments.get(line, "") or MARKER in comments.get(line - 1, ""):
                continue
            stray.append(f'{rel}:{line}: "{content}" ({what})')
    if stray:
        print("protocol vocabulary spelled outside its modules "
              f"({', '.join(sorted(VOCABULARY))}); use the constants and enums there, "
              f"or mark a look-alike with a `// {MARKER} <reason>` comment:")
        for s in stray:
            print("  " + s)
        return 1
    print(f"vocabulary: {len(files)} Rust files checked; {len(features)} feature names and "
          f"{len(metadata_keys)} column-metadata keys spelled only in their modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())

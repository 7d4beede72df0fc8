#!/usr/bin/env python3
"""Turns every ```swift block of the README, the DocC articles (of every module) and docs/*.md into code the build compiles.

Each document becomes one file of the DocSnippets target (Examples/DocSnippets), so a code block
that stops compiling fails `swift build`. A block becomes the body of a function of its own,
`func <document>_<n>()` (async, throws, as its code needs), n counting the document's swift
blocks from 1; its `import` lines go to the top of the file (a document's blocks share its
imports, as a reader's file would).
Only ```swift blocks are code: ```console, ```sh and unlabelled blocks are not.

A block's top-level `let` and `var` names are read once at the end of its function (`_ = name`),
so a value an example leaves for the reader to use does not make the compiler warn.

An HTML comment on the lines right before a block's fence changes how it is compiled (GitHub and
DocC show none of them):

    <!-- snippet: top-level -->     the block is declarations (a type, a function): file scope
    <!-- snippet: continues -->     the block goes on from the document's previous block: same function
    <!-- snippet: skip -->          not compiled (say why in the prose)
    <!-- snippet-prelude
    let request = Request(url: URL(string: "http://127.0.0.1:8080/get")!)
    -->                             lines compiled before the block, in its function, never shown
                                    (its `import` lines go to the top of the file)

Usage: extract-snippets.py           write the generated files
       extract-snippets.py --check   exit 1, naming them, when a generated file is not up to date
"""

import pathlib
import re
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "Examples" / "DocSnippets"
# Every module's DocC catalog: Sources/<module>/<module>.docc.
CATALOGS = sorted(ROOT.glob("Sources/*/*.docc"))

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
IMPORT = re.compile(r"^(@[\w]+(\([^)]*\))?\s+)*import\s+\w")
MARKER = re.compile(r"^\s*<!--\s*snippet:\s*([\w-]+)\s*-->\s*$")
PRELUDE_START = re.compile(r"^\s*<!--\s*snippet-prelude\b(.*)$")
OPTIONS = {"top-level", "continues", "skip"}
DECLARED = re.compile(r"^(?:let|var)\s+([A-Za-z_]\w*)\s*[:=]")
NEVER_RETURNS = re.compile(r"^(dispatchMain|exit|fatalError)\(")


class Block:
    def __init__(self, line, code, options, prelude):
        self.line = line          # 1-based line of the opening fence
        self.code = code          # the block's lines, its fence's indentation removed
        self.options = options
        self.prelude = prelude


def documents():
    """(markdown path, function prefix, generated file name), in a stable order."""
    yield ROOT / "README.md", "readme", "README.swift"
    for path in sorted(p for catalog in CATALOGS for p in catalog.glob("*.md")):
        yield path, prefix_of(path.stem), path.stem + ".swift"
    # docs/ names its files in lower case with hyphens ("migrating-from-afnetworking"), so that
    # no generated name clashes with a DocC article's ("MigratingFromAFNetworking"), they get a
    # prefix of their own.
    for path in sorted((ROOT / "docs").glob("*.md")):
        stem = "Docs" + "".join(part[:1].upper() + part[1:] for part in path.stem.split("-"))
        yield path, "docs_" + prefix_of(path.stem), stem + ".swift"


def prefix_of(stem):
    """A function prefix from a file's stem: "GettingStarted" and "getting-started" give "getting_started"."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", stem).lower().replace("-", "_")


def comments_before(lines, index):
    """The snippet options and prelude lines of the HTML comments right above line `index`."""
    options, prelude = set(), []
    i = index - 1
    while i >= 0 and lines[i].strip().endswith("-->"):
        end = i
        while i >= 0 and "<!--" not in lines[i]:
            i -= 1
        if i < 0:
            break
        comment = lines[i:end + 1]
        marker = MARKER.match(comment[0]) if len(comment) == 1 else None
        start = PRELUDE_START.match(comment[0])
        if marker:
            if marker.group(1) not in OPTIONS:
                raise SystemExit(f"unknown snippet option {marker.group(1)!r} before line {index + 1}")
            options.add(marker.group(1))
        elif start:
            body = [start.group(1)] + comment[1:]
            body[-1] = body[-1].rsplit("-->", 1)[0]
            # Dedented as the block is: a prelude of a block inside a list item is indented too.
            body = textwrap.dedent("\n".join(l.rstrip() for l in body if l.strip())).split("\n")
            prelude = [l for l in body if l.strip()] + prelude
        else:
            break
        i -= 1
    return options, prelude


def swift_blocks(path):
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks, i = [], 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence, language = match.groups()
        start, code = i, []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence) and lines[i].strip() == fence[0] * len(lines[i].strip())):
            line = lines[i]
            code.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        i += 1
        if language == "swift":
            options, prelude = comments_before(lines, start)
            blocks.append(Block(start + 1, code, options, prelude))
    return blocks


def render(path, prefix, blocks):
    source = path.relative_to(ROOT)
    imports, top, functions = [], [], []
    number = 0
    for block in blocks:
        if "skip" in block.options:
            continue
        number += 1
        body, prelude = [], []
        # A prelude's imports go to the top of the file like the block's: a block that shows no
        # import of its own (one of several in a document) still compiles with what it needs.
        for target, lines in ((prelude, block.prelude), (body, block.code)):
            for line in lines:
                if IMPORT.match(line):
                    if line.strip() not in imports:
                        imports.append(line.strip())
                else:
                    target.append(line)
        while body and not body[0].strip():
            body.pop(0)
        while body and not body[-1].strip():
            body.pop()
        # No line numbers: prose edits above a block must not make the generated files stale.
        where = f"// {source}, swift block {number}"
        if "top-level" in block.options:
            top.append([where] + prelude + body)
        elif "continues" in block.options and functions:
            functions[-1][0].extend(["", "    " + where] + indented(prelude + body))
            functions[-1][1].extend(declared(prelude + body))
        else:
            functions.append(([f"{where}", f"func {prefix}_{number}() {{"]
                              + indented(prelude + body), declared(prelude + body)))
    out = [
        f"// Generated from {source} by scripts/extract-snippets.py: do not edit.",
        "// Change the document's code block, then run `make snippets`.",
        "",
    ]
    if imports:
        out += imports + [""]
    for chunk in top:
        out += chunk + [""]
    for lines, names in functions:
        lines[1] = lines[1].replace("() {", "()" + effects(lines[2:]) + " {")
        out += with_uses(lines, names) + ["}", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def effects(lines):
    """` async`, ` throws`, both or neither: what the code needs, so that a block that waits
    synchronously (`group.wait()`) is not compiled in an async context, where Swift refuses it."""
    code = "\n".join(lines)
    return (" async" if re.search(r"\bawait\b", code) else "") + (" throws" if re.search(r"\btry\b(?![?!])", code) else "")


def declared(lines):
    """The names a block declares at its top level with `let name` or `var name`."""
    return [m.group(1) for m in map(DECLARED.match, lines) if m]


def with_uses(lines, names):
    """`lines` with `_ = name` for each name, before a last call that never returns."""
    if not names:
        return lines
    uses = ["    _ = " + name for name in dict.fromkeys(names)]
    end = len(lines)
    if NEVER_RETURNS.match(lines[-1].strip()):
        end -= 1
    return lines[:end] + uses + lines[end:]


def indented(lines):
    return [("    " + line) if line.strip() else "" for line in lines]


def main(argv):
    check = "--check" in argv[1:]
    expected = {}
    for path, prefix, name in documents():
        blocks = swift_blocks(path)
        if any("skip" not in b.options for b in blocks):
            expected[OUT / name] = render(path, prefix, blocks)
    stale = []
    existing = {p for p in OUT.glob("*.swift") if p.read_text(encoding="utf-8").startswith("// Generated from ")}
    for target, text in expected.items():
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            stale.append(target)
            if not check:
                OUT.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
    for orphan in sorted(existing - set(expected)):
        stale.append(orphan)
        if not check:
            orphan.unlink()
    if check and stale:
        names = ", ".join(str(p.relative_to(ROOT)) for p in stale)
        print(f"extract-snippets: not up to date with the documents' code blocks: {names}\n"
              "run `make snippets` (scripts/extract-snippets.py) and commit the result", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

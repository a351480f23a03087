#!/usr/bin/env python3
"""Writes the list of import-issue kinds into docs/detectors/import-issues.md.

The kinds live in one X-macro list, engine/common/import_issue_kinds.hpp (code, effect, meaning).
The doc page holds the same list as a table between two marker comments; this script regenerates
that table from the header:

    scripts/import_issue_kinds.py --write   # rewrite the table after editing the header
    scripts/import_issue_kinds.py --check   # exit 1 (and print the difference) when they disagree

The unit test ImportIssueKinds.* (tests/unit/import_issue_kinds_test.cpp) checks the same thing in
both directions, so a kind added to the header without --write fails ctest.
"""
import argparse
import difflib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
HEADER = ROOT / "engine/common/import_issue_kinds.hpp"
DOC = ROOT / "docs/detectors/import-issues.md"
BEGIN = ("<!-- import-issue-kinds: generated from engine/common/import_issue_kinds.hpp by "
         "scripts/import_issue_kinds.py --write; edit the header, not this table -->")
END = "<!-- /import-issue-kinds -->"

ENTRY = re.compile(r'^\s*X\((\w+),\s*(skipped|approximated),\s*\\\n\s*"((?:[^"\\]|\\.)*)"\)', re.M)


def kinds(header_text):
    out = [(m.group(1), m.group(2), m.group(3).replace('\\"', '"')) for m in ENTRY.finditer(header_text)]
    declared = len(re.findall(r"^\s*X\(", header_text, re.M))
    if declared != len(out):
        sys.exit(f"{HEADER}: {declared} X(...) lines but {len(out)} parsed; keep the format "
                 "X(code, effect, \\ newline \"meaning\")")
    return out


def table(entries):
    lines = [BEGIN, "| kind | effect | meaning |", "|---|---|---|"]
    for code, effect, meaning in entries:
        lines.append(f"| `{code}` | {effect} | {meaning.replace('|', '&#124;')} |")
    lines.append(END)
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", action="store_true")
    g.add_argument("--check", action="store_true")
    args = ap.parse_args()
    doc = DOC.read_text()
    want = table(kinds(HEADER.read_text()))
    if BEGIN in doc and END in doc:
        start = doc.index(BEGIN)
        stop = doc.index(END) + len(END)
        have, new_doc = doc[start:stop], doc[:start] + want + doc[stop:]
    else:
        sys.exit(f"{DOC}: no marker comments; add the lines\n{BEGIN}\n{END}\nwhere the table goes")
    if args.check:
        if have != want:
            sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), want.splitlines(True), str(DOC), "generated"))
            print(f"\n{DOC} is out of date: run scripts/import_issue_kinds.py --write", file=sys.stderr)
            return 1
        return 0
    if new_doc != doc:
        DOC.write_text(new_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())

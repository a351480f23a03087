#!/usr/bin/env python3
"""Checks that every stage of proflint includes only the stages it may use (docs/architecture.md).

Reads every `#include "engine/..."` and `#include "detectors/..."` in engine/ and detectors/, maps
both sides to their stage (engine/<stage>/..., detectors/), and checks the arrow against ALLOWED
below, the one table of the layering. Also checks that CMakeLists.txt links each stage library to
exactly the stages ALLOWED (plus EXCEPTIONS) names, so the build and this table cannot drift apart.

Prints FILE:LINE for each violation and exits 1; exits 0 when the tree keeps the rule.
  scripts/check_layers.py [--root DIR] [--strict]   (--strict: an unused exception is an error too)
  scripts/check_layers.py --self-test               (shows the check finds a planted violation)
"""
import argparse
import os
import re
import sys
import tempfile

# stage -> the stages it may include and link. Read it bottom-up: common knows nothing of proflint;
# config knows common; the fact model knows config; importers, derivation and the store know the
# model; analysis knows the store; detectors, Lua rules, the gate, reports and exports know
# analysis; the pipeline (orchestration) knows every stage; the CLI knows everything.
_BASE = {"common", "config"}
_FACTS = _BASE | {"store"}
_ANALYSIS = _FACTS | {"analysis"}
ALLOWED = {
    "common": set(),
    "config": {"common"},
    "model": _BASE,
    "import": _BASE | {"model"},
    "derive": _BASE | {"model"},
    "store": _BASE | {"model"},
    "analysis": _FACTS,
    "detectors": _ANALYSIS,
    "lua": _ANALYSIS,
    "gate": _ANALYSIS,
    "report": _ANALYSIS | {"gate"},
    "export": _ANALYSIS,
    "pipeline": _ANALYSIS | {"model", "import", "derive", "detectors", "lua", "gate", "report", "export"},
}
ALLOWED["cli"] = ALLOWED["pipeline"] | {"pipeline"}

# Arrows outside the table, each for one header and with its reason. `temporary` ones are debts of
# issue 14 (the in-memory fact model): remove the entry, and the stage from the library's STAGES in
# CMakeLists.txt, when the code no longer needs it.
EXCEPTIONS = [
    # (from stage, included header, temporary, why)
    ("lua", "engine/derive/categories.hpp", False,
     "the Lua API offers derivation's pure kernel-name classifier (proflint.category), so rules "
     "and the derived kernel.category column agree"),
    ("lua", "engine/derive/tensor_cores.hpp", False,
     "the Lua API offers derivation's pure Tensor Core classifier (proflint.uses_tensor_cores)"),
    ("lua", "engine/derive/source.hpp", False,
     "ctx:source splits an op's stored stack into frames with derivation's own parser "
     "(parse_py_frame, module_frame_name), so a rule reads frames as the derived columns do"),
]

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cc", ".inc")


def stage_of(path):
    """The stage of a repository-relative path, or None outside engine/ and detectors/."""
    parts = path.replace(os.sep, "/").split("/")
    if parts[0] == "detectors" and len(parts) >= 2:
        return "detectors"
    if parts[0] == "engine" and len(parts) >= 3:
        return parts[1]
    return None


def source_files(root):
    for top in ("engine", "detectors"):
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")


def check_includes(root):
    """Returns (violations, used exception keys)."""
    violations, used = [], set()
    exceptions = {(s, h) for s, h, _, _ in EXCEPTIONS}
    for rel in source_files(root):
        mine = stage_of(rel)
        if mine not in ALLOWED:
            violations.append(f"{rel}:1: folder '{mine}' is not a stage of scripts/check_layers.py (add it to ALLOWED)")
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                header = m.group(1)
                if header.startswith(".") or "/../" in header:
                    violations.append(f"{rel}:{number}: relative include \"{header}\": name the header from the "
                                      "repository root so its stage is visible")
                    continue
                theirs = stage_of(header)
                if theirs is None or theirs == mine:
                    continue
                if theirs in ALLOWED[mine]:
                    continue
                if (mine, header) in exceptions:
                    used.add((mine, header))
                    continue
                may = ", ".join(sorted(ALLOWED[mine])) or "no other stage"
                violations.append(f"{rel}:{number}: {mine} may not include {theirs} (\"{header}\"); {mine} may use: {may}")
    return violations, used


def cmake_stages(root):
    """stage -> (set of STAGES it links, line) from the proflint_stage(...) calls of CMakeLists.txt."""
    path = os.path.join(root, "CMakeLists.txt")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out = {}
    for m in re.finditer(r"^proflint_stage\((\w+)([^)]*)\)", text, re.M):
        words = m.group(2).split()
        links, on = set(), False
        for w in words:
            if w in ("DIRS", "EXCLUDE", "SOURCES", "LIBS"):
                on = False
            elif w == "STAGES":
                on = True
            elif on:
                links.add(w)
        out[m.group(1)] = (links, text.count("\n", 0, m.start()) + 1)
    return out


def check_cmake(root):
    problems = []
    declared = cmake_stages(root)
    extra_links = {}
    for s, h, _, _ in EXCEPTIONS:
        extra_links.setdefault(s, set()).add(stage_of(h))
    for stage, allowed in sorted(ALLOWED.items()):
        if stage not in declared:
            problems.append(f"CMakeLists.txt:1: no proflint_stage({stage} ...) for the stage {stage}")
            continue
        links, line = declared[stage]
        want = allowed | extra_links.get(stage, set())
        for s in sorted(links - want):
            problems.append(f"CMakeLists.txt:{line}: proflint_{stage} links {s}, which {stage} may not use")
        for s in sorted(want - links):
            problems.append(f"CMakeLists.txt:{line}: proflint_{stage} does not link {s} (allowed, so linked: "
                            "the table and the build say the same)")
    for stage in sorted(set(declared) - set(ALLOWED)):
        problems.append(f"CMakeLists.txt:{declared[stage][1]}: stage library '{stage}' is not in ALLOWED")
    return problems


def run(root, strict):
    violations, used = check_includes(root)
    violations += check_cmake(root)
    unused = [(s, h) for s, h, _, _ in EXCEPTIONS if (s, h) not in used]
    for s, h in unused:
        line = f"scripts/check_layers.py:1: exception ({s} -> {h}) is no longer used: remove it"
        if strict:
            violations.append(line)
        else:
            print("note: " + line)
    for v in violations:
        print(v)
    temporary = [f"{s} -> {h}" for s, h, t, _ in EXCEPTIONS if t and (s, h) in used]
    if temporary:
        print(f"note: {len(temporary)} temporary exception(s) still in use: " + "; ".join(temporary))
    if violations:
        print(f"{len(violations)} layering violation(s) (docs/architecture.md, 'Layers')")
        return 1
    print("layers: every include and every stage library follows scripts/check_layers.py ALLOWED")
    return 0


def self_test(root):
    """Plants a wrong include in a copy of the tree's layout and expects the check to name it."""
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as f:
            cmake = f.read()
        with open(os.path.join(tmp, "CMakeLists.txt"), "w", encoding="utf-8") as f:
            f.write(cmake)
        files = {
            "engine/analysis/bad.cpp": '#include "engine/analysis/facts.hpp"\n#include "engine/lua/rules.hpp"\n',
            "engine/common/ok.hpp": "#include <string>\n",
            "detectors/bad.cpp": '#include "engine/store/store.hpp"\n\n#include "engine/derive/derive.hpp"\n',
            "engine/store/rel.cpp": '#include "../analysis/facts.hpp"\n',
        }
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            with open(os.path.join(tmp, rel), "w", encoding="utf-8") as f:
                f.write(text)
        violations, _ = check_includes(tmp)
        expected = ["engine/analysis/bad.cpp:2: analysis may not include lua",
                    "detectors/bad.cpp:3: detectors may not include derive",
                    "engine/store/rel.cpp:1: relative include"]
        missing = [e for e in expected if not any(v.startswith(e) for v in violations)]
        if missing or len(violations) != len(expected):
            print("self-test failed; got:\n  " + "\n  ".join(violations) + "\nexpected:\n  " + "\n  ".join(expected))
            return 1
        # A stage library linking a stage it may not use is reported too.
        with open(os.path.join(tmp, "CMakeLists.txt"), "w", encoding="utf-8") as f:
            f.write(cmake.replace("proflint_stage(gate DIRS engine/gate STAGES", "proflint_stage(gate DIRS engine/gate STAGES lua"))
        problems = check_cmake(tmp)
        if not any("proflint_gate links lua" in p for p in problems):
            print("self-test failed: a gate -> lua link was not reported; got:\n  " + "\n  ".join(problems))
            return 1
    print("self-test: planted include and link violations were reported")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--strict", action="store_true", help="an exception no include uses is an error")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test(args.root)
    return run(args.root, args.strict)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Refresh the command output shown in README.md from the real binary.

README.md marks each output block with
    <!-- output: summary fixtures/sample_train.json.gz -->
    ```text
    ...
    ```
The script runs `build/proflint <args>` from the repository root (NO_COLOR=1) and replaces the
fenced block after each marker. With --check it changes nothing and exits 1 if README.md is stale.
"""
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = re.compile(r"(<!-- output: (?P<args>.+?) -->\n```text\n)(?P<body>.*?)(```)", re.S)


def run(binary, args):
    env = dict(os.environ, NO_COLOR="1")
    res = subprocess.run([binary] + shlex.split(args), cwd=ROOT, env=env, capture_output=True, text=True)
    if res.returncode not in (0, 1):
        sys.exit(f"update_readme: `proflint {args}` failed ({res.returncode}): {res.stderr.strip()}")
    return res.stdout


def main():
    check = "--check" in sys.argv
    binary = os.environ.get("PROFLINT", os.path.join(ROOT, "build", "proflint"))
    path = os.path.join(ROOT, "README.md")
    text = open(path, encoding="utf-8").read()
    new = MARK.sub(lambda m: m.group(1) + run(binary, m.group("args")) + m.group(4), text)
    if check:
        if new != text:
            print("README.md output blocks are stale: run scripts/update_readme.py")
            return 1
        return 0
    if new != text:
        open(path, "w", encoding="utf-8").write(new)
        print("README.md updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())

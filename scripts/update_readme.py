#!/usr/bin/env python3
"""Refresh the command output shown in README.md from the real binary.

README.md marks each output block with
    <!-- output: summary fixtures/sample_train.json.gz -->
    ```text
    ...
    ```
The script runs `build/proflint <args>` from the repository root (NO_COLOR=1) and replaces the
fenced block after each marker. With --check it changes nothing and exits 1 if README.md is stale.

Screenshots of the HTML report are marked with
    <!-- screenshot: analyze fixtures/sample_train.json.gz --format html | #finding-0 1400x1000 -> docs/x.png -->
and retaken with headless Chromium (the page opened at that #hash in a window of that size). A
browser's pixels are not byte-for-byte stable across machines, so --check only checks that each
image exists; a machine without Chromium keeps the committed images and says so.
"""
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = re.compile(r"(<!-- output: (?P<args>.+?) -->\n```text\n)(?P<body>.*?)(```)", re.S)
SHOT = re.compile(r"<!-- screenshot: (?P<args>.+?) \| (?P<hash>#\S*) (?P<w>\d+)x(?P<h>\d+) -> (?P<png>\S+) -->")


def screenshot(binary, m):
    import shutil
    import tempfile
    png = os.path.join(ROOT, m.group("png"))
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print(f"update_readme: no chromium: kept {m.group('png')} as committed")
        return
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "report.html")
        run(binary, m.group("args") + " -o " + shlex.quote(page))
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                        "--user-data-dir=" + os.path.join(tmp, "profile"), "--virtual-time-budget=5000",
                        f"--window-size={m.group('w')},{m.group('h')}", "--screenshot=" + png,
                        "file://" + page + m.group("hash")], check=True, capture_output=True, timeout=120)


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
    shots = list(SHOT.finditer(text))
    if check:
        missing = [m.group("png") for m in shots if not os.path.exists(os.path.join(ROOT, m.group("png")))]
        if missing:
            print("README.md screenshots missing: " + ", ".join(missing) + ": run scripts/update_readme.py")
            return 1
        if new != text:
            print("README.md output blocks are stale: run scripts/update_readme.py")
            return 1
        return 0
    for m in shots:
        screenshot(binary, m)
    if new != text:
        open(path, "w", encoding="utf-8").write(new)
        print("README.md updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())

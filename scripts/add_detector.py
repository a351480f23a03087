#!/usr/bin/env python3
"""Adds a built-in detector: source skeleton, registry line, doc page and two golden cases.

    scripts/add_detector.py my-check            # writes into this repository
    scripts/add_detector.py my-check --dry-run  # lists what it would write, writes nothing
    scripts/add_detector.py my-check --root DIR # writes into another tree of the same layout

Writes
  detectors/<id_snake>.cpp          a detector that compiles and runs: one finding per device when
                                    the time it measures reaches the `min_share` option, else a
                                    "checked, below threshold" entry; its query selects nothing
                                    until you write the condition (TODO in the file)
  detectors/registry.cpp            the declaration and the list entry, in id order
  docs/detectors/<id>.md            the page in the format of the others, with TODOs
  tests/cases/<id>-fires-TODO/      golden case skeleton on a fixture you still have to make
  tests/cases/<id>-silent-sample-amp/  golden case on fixtures/sample_amp.json.gz (no finding)

Then: write the condition, make the fixture (scripts/gen_profile.py, docs/fixtures.md), rename the
fires case after it, build, and run the golden cases with PROFLINT_UPDATE_GOLDENS=1 once to write
their expected.out (read it). docs/adding-a-detector.md walks through it.
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


def source(det_id, snake, cls):
    return f'''// detectors/{snake}.cpp — {det_id}
// TODO: what it checks, from which facts, in two or three lines. Docs: docs/detectors/{det_id}.md
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"

namespace proflint {{

namespace {{

class {cls} final : public Detector {{
 public:
  explicit {cls}(const OptionValues& o) : min_share_(o.number("min_share")) {{}}

  std::string_view id() const override {{ return "{det_id}"; }}
  // TODO: the problem in one line, as a reader of the report should see it.
  std::string_view title() const override {{ return "TODO: {det_id} title"; }}
  // Facts this detector needs (known_needs() in engine/analysis/facts.cpp); a trace without them is
  // skipped by the runner.
  std::vector<std::string> needs() const override {{ return {{"kernels"}}; }}

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {{
    const TraceSummary* s = facts.summary(trace_id);
    if (!s || s->steady_wall_ns <= 0) return;
    for (const auto& d : s->devices) {{
      // TODO: select what this detector measures. The condition `0` selects nothing, so the
      // detector stays silent until it is written.
      SQLite::Statement q(facts.db(),
                          "SELECT COALESCE(SUM(dur_ns), 0), COUNT(*) FROM kernel "
                          "WHERE trace_id = ? AND device_id = ? AND 0 /* TODO: condition */");
      q.bind(1, trace_id);
      q.bind(2, d.device_id);
      if (!q.executeStep()) continue;
      const int64_t time_ns = q.getColumn(0).getInt64(), count = q.getColumn(1).getInt64();
      const double share = static_cast<double>(time_ns) / static_cast<double>(s->steady_wall_ns);
      if (share < min_share_) {{
        sink.below_threshold(checked_below(*this, trace_id, d.device_id, "TODO: what was measured", share,
                                           min_share_, "share of wall time"));
        continue;
      }}
      Finding f = make_finding(FindingScope::of_trace(trace_id).on_device(d.device_id).of_rank(s->rank));
      f.problem = fmt::format("TODO: what was measured on GPU {{}}: {{}} events, {{}} ns.", d.device_id, count, time_ns);
      f.recommendation = "TODO: what to change, concretely.";
      f.estimated_savings_ns = time_ns;  // TODO: the part of time_ns that the fix recovers
      f.savings_method = "TODO: how the estimate is made, in one sentence";
      f.confidence = 0.5;
      f.evidence["device_id"] = d.device_id;
      f.evidence["count"] = count;
      f.evidence["time_ns"] = time_ns;
      sink.report(std::move(f));
    }}
  }}

 private:
  double min_share_;
}};

}}  // namespace

DetectorInfo {snake}_info() {{
  return {{"{det_id}",
          {{{{"min_share", 0.05, "report when the measured time reaches this share of the steady-state wall time"}}}},
          [](const OptionValues& o) {{ return std::make_unique<{cls}>(o); }}}};
}}

}}  // namespace proflint
'''


def doc(det_id):
    return f'''# {det_id} — TODO: the title

**Needs:** kernels (TODO). **Scope:** one finding per device.

## What it checks
TODO: what is measured, from which tables and columns, and the condition under which it reports:
when the measured time of a device reaches `min_share` of the steady-state wall time.

## Estimate
TODO: how `estimated_savings_ns` is computed and why; the confidence and what it rests on. Under
`min_share` the share is listed as "checked, below threshold".

## Options
| option | default | meaning |
|---|---|---|
| `min_share` | 0.05 | report when the measured time reaches this share of the steady-state wall time |

## Fix
TODO: the change to make, concretely (framework calls, flags).

## Does not fire
TODO: when it stays silent (`fixtures/sample_amp.json.gz`, case `{det_id}-silent-sample-amp`).
'''


def cases(det_id):
    fires = f"{det_id}-fires-TODO"
    silent = f"{det_id}-silent-sample-amp"
    return {
        f"tests/cases/{fires}/README":
            f"TODO: what this case proves (the planted problem and the numbers the finding reports). Make the "
            f"fixture with scripts/gen_profile.py, list it in docs/fixtures.md, point `args` at it, rename this "
            f"folder {det_id}-fires-<fixture>, then run the GoldenCase tests once with PROFLINT_UPDATE_GOLDENS=1.\n",
        f"tests/cases/{fires}/args": f"analyze --only {det_id} --format json fixtures/TODO_{det_id.replace('-', '_')}.json.gz\n",
        f"tests/cases/{silent}/README":
            f"The bf16, pinned, 4-worker sample job has no {det_id} problem: no finding. TODO: say why, with the "
            f"measured value.\n",
        f"tests/cases/{silent}/args": f"analyze --only {det_id} --format json fixtures/sample_amp.json.gz\n",
    }


def registry(text, snake):
    decl = f"DetectorInfo {snake}_info();"
    entry = f"      {snake}_info(),"
    if decl in text:
        sys.exit(f"detectors/registry.cpp already declares {snake}_info()")
    lines = text.split("\n")
    decls = [i for i, l in enumerate(lines) if re.fullmatch(r"DetectorInfo \w+_info\(\);", l)]
    entries = [i for i, l in enumerate(lines) if re.fullmatch(r"      \w+_info\(\),", l)]
    if not decls or not entries:
        sys.exit("detectors/registry.cpp: no declaration/list lines of the expected form")
    # Sorted by id: kebab ids and snake names sort alike except '-' vs '_'; compare the ids.
    key = lambda line: re.search(r"(\w+)_info", line).group(1).replace("_", "-")
    det_key = snake.replace("_", "-")

    def insert(idx, new):
        at = next((i for i in idx if key(lines[i]) > det_key), idx[-1] + 1)
        lines.insert(at, new)

    insert(entries, entry)  # later in the file first, so the declaration indexes stay valid
    insert(decls, decl)
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("id", help="kebab-case detector id, e.g. slow-dataloader")
    ap.add_argument("--root", type=pathlib.Path, default=ROOT, help="tree to write into (default: this repository)")
    ap.add_argument("--dry-run", action="store_true", help="list the files it would write and change, write nothing")
    args = ap.parse_args()
    det_id = args.id
    if not KEBAB.match(det_id):
        ap.error(f"'{det_id}' is not a kebab-case id (lower-case words joined by '-')")
    snake = det_id.replace("-", "_")
    cls = "".join(w.capitalize() for w in det_id.split("-"))
    root = args.root.resolve()
    reg_path = root / "detectors/registry.cpp"
    if not reg_path.exists():
        sys.exit(f"{reg_path}: not found (is --root a proflint tree?)")
    files = {f"detectors/{snake}.cpp": source(det_id, snake, cls), f"docs/detectors/{det_id}.md": doc(det_id)}
    files.update(cases(det_id))
    clash = [p for p in files if (root / p).exists()]
    if clash:
        sys.exit("already exists, nothing written: " + ", ".join(clash))
    new_registry = registry(reg_path.read_text(), snake)
    for p in files:
        print(("would write " if args.dry_run else "wrote ") + p)
    print(("would update " if args.dry_run else "updated ") + "detectors/registry.cpp")
    if args.dry_run:
        return 0
    for p, text in files.items():
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_text(text)
    reg_path.write_text(new_registry)
    print(f"next: write the TODOs in detectors/{snake}.cpp and docs/detectors/{det_id}.md, make the fixture of "
          f"tests/cases/{det_id}-fires-TODO (docs/adding-a-detector.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

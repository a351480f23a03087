// engine/import/importer.hpp — the interface every input format implements.
//
// An importer knows one file format and nothing about detectors: it reads the file and hands
// rows to a FactSink (engine/model/sink.hpp), which fills a TraceModel. Registration is the explicit list in engine/import/registry.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/model.hpp"

namespace proflint {

// The profiler spec of a Clara-style operator log (docs/samples.md, "Operator logs"): the key of
// the operator's total time and its module keywords.
struct OperatorSpec {
  std::string name;       // operator name; empty: the log file's stem
  std::string total_key;  // totalTimeStr
  std::vector<std::string> modules;  // opModules
};

struct ImportOptions {
  bool progress = false;  // draw a progress bar on stderr (terminal only)
  // Operator logs cannot be recognised from content: with a spec, an input no reader claims is
  // read as the operator's log.
  std::optional<OperatorSpec> operator_spec;
};

struct ImportResult {
  int64_t trace_id = 0;
  int64_t rows = 0;    // fact rows written
  int64_t issues = 0;  // events counted in import_issue
};

class Importer {
 public:
  virtual ~Importer() = default;
  // Format name stored in trace.format ('kineto', 'nsys').
  virtual std::string_view name() const = 0;
  // True when `head` (the first bytes of the file, already gunzipped when the file is gzip) is
  // this format. Decides from content, never from the file name.
  virtual bool sniff(std::string_view head, bool gzipped) const = 0;
  // Reads the file into `model` (empty) as one trace. Throws proflint::Error naming the file and
  // place when nothing usable can be read; per-event problems go to import_issue instead.
  virtual ImportResult import(const std::string& path, TraceModel& model, const ImportOptions& options) const = 0;
};

// All importers, in the explicit order of engine/import/registry.cpp.
const std::vector<std::unique_ptr<Importer>>& importers();

// Sniffs `path` and imports it with the matching importer. Errors (missing file, directory,
// unknown format, empty file) are proflint::Error naming the file.
ImportResult import_file(const std::string& path, TraceModel& model, const ImportOptions& options);

}  // namespace proflint

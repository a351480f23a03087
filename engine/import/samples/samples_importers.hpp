// engine/import/samples/samples_importers.hpp — sampling logs of a GPU job (docs/samples.md):
// nvidia-smi --query-gpu CSV, nvidia-smi dmon / pmon and dcgmi dmon text, and the PyTorch memory
// timeline (export_memory_timeline raw JSON). Each becomes a trace of sample series
// (schema/0006_samples.sql); the pipeline attaches it to a profile of the same job when one is
// given beside it.
#pragma once

#include <string>
#include <string_view>

#include "engine/import/importer.hpp"
#include "engine/model/sink.hpp"

namespace proflint {

// Trace formats (trace.format) of the sampling logs.
inline constexpr std::string_view kNvsmiCsvFormat = "nvidia-smi-csv";
inline constexpr std::string_view kDmonFormat = "nvidia-smi-dmon";
inline constexpr std::string_view kPmonFormat = "nvidia-smi-pmon";
inline constexpr std::string_view kDcgmiFormat = "dcgmi-dmon";
inline constexpr std::string_view kMemoryTimelineFormat = "torch-memory-timeline";
inline constexpr std::string_view kOperatorLogFormat = "operator-log";
// True for a trace format that only holds samples (a log to attach beside a profile).
bool is_sampling_log_format(std::string_view format);

class NvsmiCsvImporter final : public Importer {
 public:
  std::string_view name() const override { return kNvsmiCsvFormat; }
  bool sniff(std::string_view head, bool gzipped) const override;
  ImportResult import(const std::string& path, TraceModel& model, const ImportOptions& options) const override;
};

// nvidia-smi dmon, nvidia-smi pmon and dcgmi dmon: whitespace tables under '#' header lines.
class DmonImporter final : public Importer {
 public:
  std::string_view name() const override { return kDmonFormat; }
  bool sniff(std::string_view head, bool gzipped) const override;
  ImportResult import(const std::string& path, TraceModel& model, const ImportOptions& options) const override;
};

class MemoryTimelineImporter final : public Importer {
 public:
  std::string_view name() const override { return kMemoryTimelineFormat; }
  bool sniff(std::string_view head, bool gzipped) const override;
  ImportResult import(const std::string& path, TraceModel& model, const ImportOptions& options) const override;
};

// Reads `path` as a Clara-style operator log with `spec` (operator_timing rows).
ImportResult import_operator_log(const std::string& path, TraceModel& model, const OperatorSpec& spec);

namespace samples {
// The readers behind the importers, on text already in memory (tests use them directly).
// `path` names the file in messages. They throw proflint::Error "PATH: line N: ..." when nothing
// usable can be read, and count per-row problems as import issues.
void read_nvsmi_csv(std::string_view text, const std::string& path, FactSink& sink);
// Returns the dialect read: kDmonFormat, kPmonFormat or kDcgmiFormat.
std::string_view read_dmon(std::string_view text, const std::string& path, FactSink& sink);
void read_memory_timeline(std::string_view text, const std::string& path, FactSink& sink);
void read_operator_log(std::string_view text, const std::string& path, const OperatorSpec& spec, FactSink& sink);
// The spec file: TOML or YAML with totalTimeStr, opModules and optionally name (the Clara
// pipeline's 'profiler:' block works as it is). Errors name `path` and the line.
OperatorSpec parse_operator_spec(std::string_view text, const std::string& path);

// GPUs of a log without an index column, numbered by position in each burst of rows: the number
// of GPUs is the largest N for which the time between rows falls almost all (>= 60%) between
// rows N apart, as nvidia-smi prints every GPU of one sample one after the other. `times` in
// file order; 1 when it cannot tell.
int infer_gpus_per_burst(const std::vector<int64_t>& times);
}  // namespace samples

}  // namespace proflint

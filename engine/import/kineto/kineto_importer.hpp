// engine/import/kineto/kineto_importer.hpp — PyTorch profiler / Kineto Chrome-trace JSON (.json, .json.gz).
#pragma once

#include "engine/import/importer.hpp"

namespace proflint {

class KinetoImporter final : public Importer {
 public:
  std::string_view name() const override { return "kineto"; }
  bool sniff(std::string_view head, bool gzipped) const override;
  ImportResult import(const std::string& path, TraceModel& model, const ImportOptions& options) const override;
};

}  // namespace proflint

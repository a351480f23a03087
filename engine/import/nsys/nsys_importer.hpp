// engine/import/nsys/nsys_importer.hpp — Nsight Systems SQLite exports (nsys 2020.3 to 2026.2).
#pragma once

#include "engine/import/importer.hpp"

namespace proflint {

class NsysImporter final : public Importer {
 public:
  std::string_view name() const override { return "nsys"; }
  bool sniff(std::string_view head, bool gzipped) const override;
  ImportResult import(const std::string& path, TraceModel& model, const ImportOptions& options) const override;
};

}  // namespace proflint

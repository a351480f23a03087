// engine/report/dlprof/reports.hpp — DLProf-compatible reports: summary, detail, iteration,
// kernel, tensor, op_type, group_node, expert_systems (rows and columns: docs/reports.md).
//
// Builders are pure: derived facts in (the store, its loaded Model, the ranked findings), one
// Report out. Rendering is table.hpp's; files and flags are the CLI's (engine/cli/cmd_report.cpp).
#pragma once

#include <string>
#include <vector>

#include "engine/analysis/runner.hpp"
#include "engine/report/dlprof/model.hpp"
#include "engine/report/dlprof/table.hpp"
#include "engine/store/store.hpp"

namespace proflint::dlprof {

struct ReportInput {
  Store* store = nullptr;  // for the breakdown and device tables (summary)
  const Model* model = nullptr;
  const AnalysisResult* analysis = nullptr;  // expert_systems only
};

// The report names in DLProf's order.
const std::vector<std::string>& report_names();

// Builds one report for one NVTX domain ("" = the default domain, i.e. the whole profile).
// Throws proflint::Error for an unknown name.
Report build_report(const std::string& name, const ReportInput& input, const std::string& domain);

Report build_summary(const ReportInput& input, const std::string& domain);
Report build_detail(const ReportInput& input, const std::string& domain);
Report build_iteration(const ReportInput& input, const std::string& domain);
Report build_kernel(const ReportInput& input, const std::string& domain);
Report build_tensor(const ReportInput& input, const std::string& domain);
Report build_op_type(const ReportInput& input, const std::string& domain);
Report build_group_node(const ReportInput& input, const std::string& domain);
Report build_expert_systems(const ReportInput& input, const std::string& domain);
// Not DLProf's: per-rank collectives and POP efficiencies of multi-rank jobs (collectives_report.cpp).
Report build_collectives(const ReportInput& input, const std::string& domain);
// Not DLProf's: GPU time per CUDA graph and per torch.compile region (graphs_report.cpp).
Report build_graphs(const ReportInput& input, const std::string& domain);

}  // namespace proflint::dlprof

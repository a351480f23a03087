// engine/report/dlprof/graphs_report.cpp — the `graphs` report: per CUDA graph and per torch.compile
// region, the GPU time (docs/derivation.md, "CUDA graphs and torch.compile"). Not a DLProf report;
// same table model, written once like `collectives`. The first column is a row key
// ('trace 1 graph 2', 'trace 1 Torch-Compiled Region: 0/0 fwd') so the long-form CSV is unambiguous.
#include <fmt/format.h>

#include "engine/analysis/summary.hpp"
#include "engine/report/dlprof/reports.hpp"

namespace proflint::dlprof {

Report build_graphs(const ReportInput& in, const std::string& domain) {
  Report r{"graphs", domain, {}};
  Table graphs{"CUDA Graphs",
               {"Key", "Trace", "Graph ID", "ID Source", "Device", "Replays", "Kernels per Replay", "Total GPU Time (ns)",
                "GPU Time per Replay (ns)", "Span per Replay (ns)", "Capture in Trace", "Captured Nodes", "Top Captured Op"},
               {}};
  Table regions{"Compiled Regions",
                {"Key", "Trace", "Region", "Pass", "Instances", "Triton Kernels", "Triton Time (ns)", "Other Kernels",
                 "Other Time (ns)", "Fallback Ops"},
                {}};
  for (const auto& t : summarize(*in.store)) {
    for (const auto& g : t.graphs)
      graphs.rows.push_back({fmt::format("trace {} graph {}", t.trace_id, g.graph_id), t.trace_id, g.graph_id, g.id_source,
                             g.device_id ? Cell(*g.device_id) : Cell(), g.replays, g.kernels_per_replay, g.gpu_time_ns,
                             g.gpu_time_per_replay_ns, g.span_per_replay_ns, g.capture_in_trace, g.captured_ops,
                             g.top_captured_op});
    for (const auto& c : t.compiled.by_name)
      regions.rows.push_back({fmt::format("trace {} {} {}", t.trace_id, c.name, c.pass), t.trace_id, c.name, c.pass, c.instances,
                              c.triton_kernels, c.triton_time_ns, c.other_kernels, c.other_time_ns, c.fallback_ops});
  }
  r.tables.push_back(std::move(graphs));
  r.tables.push_back(std::move(regions));
  return r;
}

}  // namespace proflint::dlprof

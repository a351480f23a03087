// engine/report/dlprof/collectives_report.cpp — the `collectives` report: for each job of two or
// more ranks, the per-rank collective table (who waits, who arrives last) and the POP
// efficiencies per job and per step (docs/multi-rank.md). Not a DLProf report; same table model.
#include "engine/analysis/job_summary.hpp"
#include "engine/report/dlprof/reports.hpp"

namespace proflint::dlprof {

Report build_collectives(const ReportInput& in, const std::string& domain) {
  Report r{"collectives", domain, {}};
  Table ranks{"Collectives per Rank",
              {"Job", "Rank", "Instances", "Total Wait (ns)", "Mean Wait (ns)", "Arrived Last", "Arrived Last (%)",
               "Arrived First", "Total Collective Time (ns)", "Total Transfer (ns)", "Clock Offset (ns)",
               "Offset Residual (ns)", "Aligned"},
              {}};
  Table eff{"Efficiency",
            {"Job", "Step", "Elapsed (ns)", "Most Loaded Rank", "Load Balance (%)", "Communication Efficiency (%)",
             "Orchestration Efficiency (%)", "Parallel Efficiency (%)", "Wait for Peers (%)", "Transfer (%)",
             "Mean Wait for Peers (%)"},
            {}};
  auto pct = [](double f) { return Cell(f * 100.0); };
  for (const auto& job : summarize_jobs(*in.store)) {
    for (const auto& row : job.collectives) {
      Cell offset, residual;
      for (const auto& rk : job.ranks)
        if (rk.rank == row.rank) {
          offset = rk.clock_offset_ns;
          if (rk.offset_residual_ns) residual = *rk.offset_residual_ns;
        }
      ranks.rows.push_back({job.job_id, row.rank, row.instances, row.total_wait_ns, row.mean_wait_ns, row.arrived_last,
                            pct(row.arrived_last_share), row.arrived_first, row.total_collective_ns, row.total_transfer_ns,
                            offset, residual, job.aligned});
    }
    auto add = [&](const EfficiencyRow& e) {
      eff.rows.push_back({job.job_id, e.step ? Cell(*e.step) : Cell(std::string("job")), e.elapsed_ns, e.most_loaded_rank,
                          pct(e.load_balance), pct(e.communication), pct(e.orchestration), pct(e.parallel),
                          pct(e.wait_share), pct(e.transfer_share), pct(e.mean_wait_share)});
    };
    if (job.job_efficiency) add(*job.job_efficiency);
    for (const auto& e : job.step_efficiency) add(e);
  }
  r.tables.push_back(std::move(ranks));
  r.tables.push_back(std::move(eff));
  return r;
}

}  // namespace proflint::dlprof

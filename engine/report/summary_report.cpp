// engine/report/summary_report.cpp — see summary_report.hpp.
#include "engine/report/summary_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>

#include "engine/common/format.hpp"

namespace proflint {

const std::vector<std::pair<std::string, std::string>>& breakdown_categories() {
  static const std::vector<std::pair<std::string, std::string>> all = {
      {"kernel_tc", "kernels, Tensor Core"}, {"kernel_other", "kernels, other"}, {"communication", "communication"},
      {"memcpy", "memcpy"},                  {"memset", "memset"},              {"runtime", "CUDA runtime/launch"},
      {"dataloader", "dataloader"},          {"cpu", "CPU ops"},                {"idle", "idle"},
  };
  return all;
}

namespace {

// 1234567 -> "1,234,567". The magnitude is taken unsigned: -INT64_MIN does not fit an int64_t.
std::string with_commas(int64_t v) {
  const uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  const std::string digits = std::to_string(magnitude);
  std::string out = v < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string iteration_source_text(const std::string& source) {
  if (source == "profiler_step") return "ProfilerStep markers";
  if (source == "key_node") return "the --key-node op";
  if (source == "nvtx") return "repeating NVTX ranges";
  if (source == "auto_period") return "automatic period detection";
  return source;
}

std::string device_title(const DeviceSummary& d) {
  std::string name = d.name.empty() ? "(name not recorded)" : d.name;
  std::string cc = d.compute_major ? fmt::format(" (cc {}.{})", *d.compute_major, d.compute_minor.value_or(0)) : "";
  return fmt::format("GPU {}  {}{}", d.device_id, name, cc);
}

}  // namespace

namespace {

std::string job_source_text(const std::string& source) {
  if (source == "distributed_info") return "same distributedInfo world size and backend";
  if (source == "nsys_processes") return "processes of one nsys export";
  if (source == "nsys_environment") return "one nsys export per rank, ranks from the launcher's environment";
  if (source == "given_together") return "given together (--job-by given)";
  return source;
}

std::string efficiency_line(const std::string& label, const EfficiencyRow& e) {
  return fmt::format("    {:<9}{:>9} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8}\n", label, format_ns(e.elapsed_ns),
                     format_percent(e.load_balance), format_percent(e.communication), format_percent(e.orchestration),
                     format_percent(e.parallel), format_percent(e.wait_share), format_percent(e.transfer_share),
                     format_percent(e.mean_wait_share));
}

std::string render_jobs_text(const std::vector<JobSummary>& jobs, const std::function<std::string(const std::string&)>& bold) {
  std::string out;
  for (const auto& j : jobs) {
    out += bold(fmt::format("Job {}: {} ranks{}", j.job_id, j.ranks_present,
                            j.world_size ? fmt::format(" of world size {}", *j.world_size) : std::string())) + "\n";
    out += fmt::format("  recognised   {}\n", job_source_text(j.source));
    if (j.aligned) {
      out += fmt::format("  clocks       aligned on {} matched collectives, residual {}\n", j.instances,
                         j.residual_ns ? format_ns(*j.residual_ns) : std::string("n/a"));
    } else {
      out += fmt::format("  clocks       NOT aligned: {}\n", j.alignment_note.empty() ? "no matched collectives" : j.alignment_note);
    }
    if (j.aligned && !j.alignment_note.empty()) out += fmt::format("  note         {}\n", j.alignment_note);
    for (const auto& r : j.ranks)
      out += fmt::format("    rank {:<4} offset {:>10}  residual {:>9}  {}{}\n", r.rank, format_ns(r.clock_offset_ns),
                         r.offset_residual_ns ? format_ns(*r.offset_residual_ns) : std::string("-"), r.path,
                         r.pid ? fmt::format(" (pid {})", *r.pid) : std::string());
    if (!j.collectives.empty()) {
      out += "\n  collectives per rank (straggler first; wait = time in a collective before the last rank arrived):\n";
      out += fmt::format("    {:<6}{:>6} {:>10} {:>9} {:>11} {:>7} {:>10} {:>10}\n", "rank", "inst", "wait", "mean", "last",
                         "first", "in coll.", "transfer");
      for (const auto& r : j.collectives)
        out += fmt::format("    {:<6}{:>6} {:>10} {:>9} {:>4} {:>6} {:>7} {:>10} {:>10}\n", r.rank, r.instances,
                           format_ns(r.total_wait_ns), format_ns(r.mean_wait_ns), r.arrived_last,
                           format_percent(r.arrived_last_share), r.arrived_first, format_ns(r.total_collective_ns),
                           format_ns(r.total_transfer_ns));
    }
    if (j.job_efficiency) {
      out += "\n  efficiency (POP: parallel = load balance x communication x orchestration;\n"
             "  wait/xfer: the most loaded rank's communication loss, split; all wait: mean\n"
             "  share of the step the ranks spent waiting for peers):\n";
      out += fmt::format("    {:<9}{:>9} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8}\n", "", "elapsed", "balance", "comm.",
                         "orch.", "parallel", "wait", "xfer", "all wait");
      out += efficiency_line("job", *j.job_efficiency);
      size_t shown = 0;
      for (const auto& e : j.step_efficiency) {
        if (++shown > 20) {
          out += fmt::format("    ... {} more steps (--format json lists all)\n", j.step_efficiency.size() - 20);
          break;
        }
        out += efficiency_line(fmt::format("step {}", e.step.value_or(0)), e);
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace

namespace {

// CUDA graphs and torch.compile regions: printed only when the trace has any.
std::string render_graphs_compiled_text(const TraceSummary& t) {
  std::string out;
  if (!t.graphs.empty()) {
    out += fmt::format("\n  CUDA graphs ({} replayed; GPU time = summed kernel time):\n", t.graphs.size());
    for (const auto& g : t.graphs) {
      out += fmt::format("    graph {:<4} {:>5} replays x {:>4} kernels  {:>9} per replay (span {}), {} in all\n", g.graph_id, g.replays,
                         g.kernels_per_replay, format_ns(g.gpu_time_per_replay_ns), format_ns(g.span_per_replay_ns),
                         format_ns(g.gpu_time_ns));
      if (!g.capture_in_trace)
        out += "               capture not in the trace: kernels are named 'graph G, node N'\n";
      else if (g.captured_ops == 0)
        out += "               captured in the trace, but its nodes cannot be matched one to one to the captured ops\n";
      else
        out += fmt::format("               captured in the trace: {} of {} nodes matched to their op, most GPU time in {}\n",
                           g.captured_ops, g.kernels_per_replay, g.top_captured_op);
    }
  }
  const CompiledSummary& c = t.compiled;
  if (c.regions > 0 || c.triton_kernels > 0) {
    out += "\n  torch.compile:\n";
    if (c.regions > 0) {
      out += fmt::format("    {} compiled region(s){}, {} graph break(s)", c.regions,
                         c.iterations_with_regions > 0 ? fmt::format(" in {} iteration(s)", c.iterations_with_regions) : "",
                         c.graph_breaks);
      if (c.iterations_with_regions > 0)
        out += fmt::format(" ({:.1f} per iteration)", static_cast<double>(c.graph_breaks) / static_cast<double>(c.iterations_with_regions));
      if (c.graph_breaks_python_only > 0) out += fmt::format(", {} with only Python between regions", c.graph_breaks_python_only);
      out += fmt::format("\n    inside regions: {} non-Triton kernel(s) ({}) from {} eager fallback / library op(s)\n", c.other_kernels,
                         format_ns(c.other_time_ns), c.fallback_ops);
      for (const auto& r : c.by_name)
        out += fmt::format("    {:<44} {}x {:>4} Triton {:>9}, {:>4} other {:>9}\n",
                           r.name.size() > 44 ? r.name.substr(0, 41) + "..." : r.name, r.instances, r.triton_kernels,
                           format_ns(r.triton_time_ns), r.other_kernels, format_ns(r.other_time_ns));
    }
    if (c.triton_kernels > 0) {
      std::string kinds;
      for (const auto& [kind, ns] : c.triton_time_by_kind_ns) kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", kind, format_ns(ns));
      out += fmt::format("    Triton kernels: {} ({}): {}\n", c.triton_kernels, format_ns(c.triton_time_ns), kinds);
    }
  }
  return out;
}

// Host activity (nsys OS runtime calls, CPU samples): printed only when the trace has such rows.
std::string render_host_activity_text(const HostActivitySummary& h) {
  constexpr size_t kShown = 5;
  std::string out = "\n  host activity while the GPU idled (the threads that launch its work, steady window):\n";
  out += fmt::format("    recorded   {} OS runtime calls, {} CPU samples\n", with_commas(h.os_calls_recorded),
                     with_commas(h.cpu_samples_recorded));
  if (h.devices.empty()) out += "    no GPU ran work: nothing to compare the host threads with\n";
  for (const auto& d : h.devices) {
    out += fmt::format("    GPU {}  idle {} of its steady window of {}; {} launching thread{}\n", d.device_id,
                       format_ns(d.gpu_idle_ns), format_ns(d.steady_window_ns), d.launching_threads,
                       d.launching_threads == 1 ? "" : "s");
    if (h.os_calls_recorded > 0) {
      std::string cats;
      for (const auto& [cat, ns] : d.blocked_by_category_ns) cats += fmt::format("{}{} {}", cats.empty() ? "" : ", ", cat, format_ns(ns));
      out += fmt::format("      blocked in OS calls  {} ({})\n", format_ns(d.blocked_ns), cats);
      for (size_t i = 0; i < d.os_calls.size() && i < kShown; ++i) {
        const auto& c = d.os_calls[i];
        out += fmt::format("        {:<24} {:<6}{:>9}  {:>5} call{}, longest {}\n", c.name.size() > 24 ? c.name.substr(0, 21) + "..." : c.name,
                           c.category, format_ns(c.gpu_idle_ns), c.calls, c.calls == 1 ? " " : "s", format_ns(c.longest_ns));
      }
      if (d.os_call_names > static_cast<int64_t>(kShown))
        out += fmt::format("        … {} more call name(s) in --format json\n", d.os_call_names - static_cast<int64_t>(kShown));
    }
    if (h.cpu_samples_recorded > 0) {
      out += fmt::format("      CPU samples          {} of {} in GPU-idle time{}\n", d.cpu_samples_while_idle, d.cpu_samples_in_window,
                         d.cpu_sample_period_ns > 0 ? fmt::format(" (one every {})", format_ns(d.cpu_sample_period_ns)) : "");
      for (size_t i = 0; i < d.hotspots.size() && i < kShown; ++i) {
        const auto& f = d.hotspots[i];
        double share = d.cpu_samples_while_idle > 0 ? static_cast<double>(f.samples) / static_cast<double>(d.cpu_samples_while_idle) : 0.0;
        std::string module = f.module.size() > 20 ? f.module.substr(0, 17) + "..." : f.module;
        out += fmt::format("        {:>6} {:>6}  {}{}\n", f.samples, format_percent(share),
                           f.function.size() > 40 ? f.function.substr(0, 37) + "..." : f.function, module.empty() ? "" : "  (" + module + ")");
      }
      if (d.hotspot_functions > static_cast<int64_t>(kShown))
        out += fmt::format("        … {} more function(s) in --format json\n", d.hotspot_functions - static_cast<int64_t>(kShown));
    }
  }
  return out;
}

nlohmann::ordered_json host_activity_json(const HostActivitySummary& h) {
  using json = nlohmann::ordered_json;
  json devices = json::array();
  for (const auto& d : h.devices) {
    json calls = json::array(), hot = json::array();
    for (const auto& c : d.os_calls)
      calls.push_back({{"name", c.name}, {"category", c.category}, {"calls", c.calls}, {"gpu_idle_ns", c.gpu_idle_ns}, {"longest_ns", c.longest_ns}});
    for (const auto& f : d.hotspots)
      hot.push_back({{"function", f.function}, {"module", f.module.empty() ? json(nullptr) : json(f.module)}, {"samples", f.samples}});
    json cats = json::object();
    for (const auto& [cat, ns] : d.blocked_by_category_ns) cats[cat] = ns;
    devices.push_back({{"device_id", d.device_id}, {"steady_window_ns", d.steady_window_ns}, {"gpu_idle_ns", d.gpu_idle_ns},
                       {"launching_threads", d.launching_threads}, {"blocked_ns", d.blocked_ns}, {"blocked_by_category_ns", cats},
                       {"os_calls", calls}, {"os_call_names", d.os_call_names}, {"cpu_samples_in_window", d.cpu_samples_in_window},
                       {"cpu_samples_while_idle", d.cpu_samples_while_idle}, {"cpu_sample_period_ns", d.cpu_sample_period_ns},
                       {"cpu_hotspots", hot}, {"hotspot_functions", d.hotspot_functions}});
  }
  return {{"os_calls_recorded", h.os_calls_recorded}, {"cpu_samples_recorded", h.cpu_samples_recorded}, {"devices", devices}};
}

// The system view of sampling logs (docs/samples.md): text and JSON.
std::string profile_bar(const std::vector<double>& slices, double full) {
  // One character per slice, darker for more: ' ' no sample, then _ . - = + * # @ from 0 to full.
  static constexpr std::string_view kRamp = "_.-=+*#@";
  std::string out;
  for (double v : slices) {
    if (std::isnan(v)) {
      out += ' ';
      continue;
    }
    int k = static_cast<int>(std::clamp(v / full, 0.0, 1.0) * (kRamp.size() - 1) + 0.5);
    out += kRamp[static_cast<size_t>(k)];
  }
  return out;
}

nlohmann::ordered_json graphs_compiled_json(const TraceSummary& t) {
  using json = nlohmann::ordered_json;
  json j = json::object();
  if (!t.graphs.empty()) {
    json arr = json::array();
    for (const auto& g : t.graphs)
      arr.push_back({{"graph_id", g.graph_id}, {"id_source", g.id_source},
                     {"device_id", g.device_id ? json(*g.device_id) : json(nullptr)}, {"replays", g.replays},
                     {"kernels_per_replay", g.kernels_per_replay}, {"gpu_time_ns", g.gpu_time_ns},
                     {"gpu_time_per_replay_ns", g.gpu_time_per_replay_ns}, {"span_per_replay_ns", g.span_per_replay_ns},
                     {"capture_in_trace", g.capture_in_trace}, {"captured_ops", g.captured_ops},
                     {"top_captured_op", g.top_captured_op.empty() ? json(nullptr) : json(g.top_captured_op)}});
    j["cuda_graphs"] = std::move(arr);
  }
  const CompiledSummary& c = t.compiled;
  if (c.regions > 0 || c.triton_kernels > 0) {
    json regions = json::array();
    for (const auto& r : c.by_name)
      regions.push_back({{"name", r.name}, {"pass", r.pass}, {"instances", r.instances}, {"triton_kernels", r.triton_kernels},
                         {"triton_time_ns", r.triton_time_ns}, {"other_kernels", r.other_kernels},
                         {"other_time_ns", r.other_time_ns}, {"fallback_ops", r.fallback_ops}, {"graph_breaks", r.graph_breaks}});
    json kinds = json::object();
    for (const auto& [kind, ns] : c.triton_time_by_kind_ns) kinds[kind] = ns;
    j["torch_compile"] = {{"regions", c.regions}, {"graph_breaks", c.graph_breaks},
                          {"graph_breaks_python_only", c.graph_breaks_python_only},
                          {"iterations_with_regions", c.iterations_with_regions}, {"triton_kernels", c.triton_kernels},
                          {"triton_time_ns", c.triton_time_ns}, {"triton_time_by_kind_ns", kinds},
                          {"other_kernels", c.other_kernels}, {"other_time_ns", c.other_time_ns},
                          {"fallback_ops", c.fallback_ops}, {"by_region", regions}};
  }
  return j;
}

std::string render_system_view_text(const SystemView& v) {
  std::string out = "\n  system view (sampling logs):\n";
  for (const auto& src : v.sources) out += fmt::format("    source     {}\n", src);
  if (!v.gpus.empty())
    out += fmt::format("    sampled    {} ({} GPU{}), metrics: {}\n", format_ns(v.end_ns - v.start_ns), v.gpus.size(),
                       v.gpus.size() == 1 ? "" : "s", fmt::join(v.metrics, ", "));
  else if (!v.metrics.empty())  // per-process series only (nvidia-smi pmon): in the sample view, by pid
    out += fmt::format("    sampled    {}, per process: {} (sample view, pid column)\n", format_ns(v.end_ns - v.start_ns),
                       fmt::join(v.metrics, ", "));
  for (const auto& g : v.gpus) {
    out += fmt::format("    GPU {}{}\n", g.device_id, g.name.empty() ? "" : "  " + g.name);
    if (g.gpu_active)
      out += fmt::format("      activity      avg {:>5.1f}%  min {:.0f}%  max {:.0f}%  ({} samples)\n", g.gpu_active->mean,
                         g.gpu_active->min, g.gpu_active->max, g.gpu_active->samples);
    if (g.memory_used) {
      std::string of;
      if (g.memory_total_bytes && *g.memory_total_bytes > 0)
        of = fmt::format(" of {} (peak {}, avg {})", format_bytes_of(*g.memory_total_bytes),
                         format_percent(g.memory_used->max / *g.memory_total_bytes),
                         format_percent(g.memory_used->mean / *g.memory_total_bytes));
      out += fmt::format("      memory        peak {}, avg {}{}\n", format_bytes_of(g.memory_used->max),
                         format_bytes_of(g.memory_used->mean), of);
    }
    if (g.power_draw)
      out += fmt::format("      power         avg {:.0f} W, max {:.0f} W{}\n", g.power_draw->mean, g.power_draw->max,
                         g.power_limit_w ? fmt::format(" (limit {:.0f} W)", *g.power_limit_w) : "");
    if (g.temperature) out += fmt::format("      temperature   avg {:.0f} C, max {:.0f} C\n", g.temperature->mean, g.temperature->max);
    if (g.clock_sm)
      out += fmt::format("      SM clock      avg {:.0f} MHz, min {:.0f} MHz{}\n", g.clock_sm->mean, g.clock_sm->min,
                         g.clock_sm_max_mhz ? fmt::format(" (max {:.0f} MHz)", *g.clock_sm_max_mhz) : "");
    if (!g.activity_profile.empty()) out += fmt::format("      activity over the job  |{}|\n", profile_bar(g.activity_profile, 100));
    if (!g.memory_profile.empty()) out += fmt::format("      memory over the job    |{}|\n", profile_bar(g.memory_profile, 100));
  }
  if (!v.gpus.empty() && (!v.gpus.front().activity_profile.empty() || !v.gpus.front().memory_profile.empty()))
    out += fmt::format("      ({} equal slices from first to last sample; _ . - = + * # @ = 0 to 100%)\n", kProfileSlices);
  if (!v.operators.empty()) {
    out += "    operator and module times (operator logs):\n";
    for (const auto& o : v.operators)
      out += fmt::format("      {:<24} {:<28} {:>10}{}\n", o.operator_name, o.module.empty() ? "(total)" : o.module,
                         format_ns(o.time_ns), o.count > 1 ? fmt::format("  ({} lines)", o.count) : "");
  }
  return out;
}

nlohmann::ordered_json system_view_json(const SystemView& v) {
  using json = nlohmann::ordered_json;
  auto stat = [](const std::optional<SampledStat>& s) -> json {
    if (!s) return nullptr;
    return {{"mean", s->mean}, {"min", s->min}, {"max", s->max}, {"samples", s->samples}};
  };
  auto slices = [](const std::vector<double>& p) {
    json a = json::array();
    for (double x : p) a.push_back(std::isnan(x) ? json(nullptr) : json(x));
    return a;
  };
  json j;
  j["sources"] = v.sources;
  j["start_ns"] = v.start_ns;
  j["end_ns"] = v.end_ns;
  j["metrics"] = v.metrics;
  json gpus = json::array();
  for (const auto& g : v.gpus) {
    json gj;
    gj["device_id"] = g.device_id;
    gj["name"] = g.name;
    gj["first_ns"] = g.first_ns;
    gj["last_ns"] = g.last_ns;
    gj["gpu_active_percent"] = stat(g.gpu_active);
    gj["memory_used_bytes"] = stat(g.memory_used);
    gj["memory_total_bytes"] = g.memory_total_bytes ? json(*g.memory_total_bytes) : json(nullptr);
    gj["power_draw_w"] = stat(g.power_draw);
    gj["power_limit_w"] = g.power_limit_w ? json(*g.power_limit_w) : json(nullptr);
    gj["temperature_c"] = stat(g.temperature);
    gj["clock_sm_mhz"] = stat(g.clock_sm);
    gj["clock_sm_max_mhz"] = g.clock_sm_max_mhz ? json(*g.clock_sm_max_mhz) : json(nullptr);
    gj["activity_profile_percent"] = slices(g.activity_profile);
    gj["memory_profile_percent"] = slices(g.memory_profile);
    gpus.push_back(gj);
  }
  j["gpus"] = gpus;
  json ops = json::array();
  for (const auto& o : v.operators)
    ops.push_back({{"operator", o.operator_name}, {"module", o.module.empty() ? json(nullptr) : json(o.module)},
                   {"time_ns", o.time_ns}, {"count", o.count}});
  j["operators"] = ops;
  return j;
}

}  // namespace

std::string render_summary_text(const std::vector<TraceSummary>& traces, bool color, const std::vector<JobSummary>& jobs) {
  auto bold = [&](const std::string& s) { return color ? "\x1b[1m" + s + "\x1b[0m" : s; };
  std::string out;
  for (const auto& t : traces) {
    out += bold(fmt::format("Profile {}", t.path)) + "\n";
    std::string fmt_line = t.format;
    if (t.format_version) fmt_line += fmt::format(" (schema {})", *t.format_version);
    if (t.tool_version) fmt_line += fmt::format(", tool {}", *t.tool_version);
    if (t.framework) fmt_line += ", " + *t.framework;
    if (t.vendor) fmt_line += ", " + *t.vendor;
    out += fmt::format("  format       {}\n", fmt_line);
    if (t.rank || t.world_size)
      out += fmt::format("  distributed  rank {} of {}{}\n", t.rank ? std::to_string(*t.rank) : "?",
                         t.world_size ? std::to_string(*t.world_size) : "?", t.comm_backend ? " (" + *t.comm_backend + ")" : "");
    out += fmt::format("  wall time    {}  ({} events read)\n", format_ns(t.wall_ns), with_commas(t.event_count));
    // A sampling log alone has no events of a profile: its system view below is all there is.
    const bool log_only = !t.system_view.empty() && t.kernel_count + t.memcpy_count + t.memset_count + t.api_call_count + t.op_count == 0;
    if (log_only) {
      out += "  contents     samples only (a sampling log given alone; give the job's trace beside it to compare)\n";
    } else {
      out += fmt::format("  activity     {} kernels, {} memcpy, {} memset, {} API calls, {} ops\n", with_commas(t.kernel_count),
                         with_commas(t.memcpy_count), with_commas(t.memset_count), with_commas(t.api_call_count),
                         with_commas(t.op_count));
      const auto& it = t.iterations;
      if (it.count > 0) {
        out += fmt::format("  iterations   {} from {}\n", it.count, iteration_source_text(it.source));
        out += fmt::format("               mean {} ± {}, median {}, min {}, max {}\n", format_ns(static_cast<int64_t>(it.mean_ns)),
                           format_ns(static_cast<int64_t>(it.stddev_ns)), format_ns(it.median_ns), format_ns(it.min_ns),
                           format_ns(it.max_ns));
      } else {
        out += "  iterations   none found (no ProfilerStep, key node, NVTX step or repeating pattern)\n";
      }
      if (!t.has_gpu_work) {
        out += fmt::format("  GPU work     none: the trace has no kernels, memcpys or memsets{}\n",
                           t.devices_listed ? fmt::format(" ({} device(s) described)", t.devices_listed) : "");
      }
    }
    for (const auto& d : t.devices) {
      out += "\n  " + bold(device_title(d)) + "\n";
      out += fmt::format("    GPU utilization      {:>7}  kernels busy {} of {}\n", format_percent(d.gpu_utilization),
                         format_ns(d.kernel_busy_ns), format_ns(d.window_ns));
      if (d.startup_ns > 0) {
        out += fmt::format("    steady state         {:>7}  kernels busy {} of {} after {} of start-up ({}; {})\n",
                           format_percent(d.steady_gpu_utilization), format_ns(d.steady_kernel_busy_ns),
                           format_ns(d.steady_window_ns), format_ns(d.startup_ns), d.startup_cause, d.startup_evidence);
      } else {
        out += "    steady state            same  no start-up found inside the window\n";
      }
      out += fmt::format("    kernel time          {:>7}  in {} kernels\n", format_ns(d.kernel_time_ns), with_commas(d.kernel_count));
      out += fmt::format("    Tensor Core share    {:>7}  of kernel time ({})\n", format_percent(d.tensor_core_share),
                         format_ns(d.tensor_core_time_ns));
      out += fmt::format("    eligible, no TC      {:>7}  GEMM/conv/attention kernels in eligible ops\n",
                         format_ns(d.tc_eligible_not_used_ns));
      out += fmt::format("    memcpy               {:>7}  {} copies, {}\n", format_ns(d.memcpy_time_ns), with_commas(d.memcpy_count),
                         format_bytes(d.memcpy_bytes));
      out += fmt::format("    communication        {:>7}  summed kernel time\n", format_ns(d.communication_time_ns));
      out += "    time breakdown (whole trace, adds up to wall time):\n";
      for (const auto& [key, label] : breakdown_categories()) {
        auto found = d.breakdown_ns.find(key);
        int64_t ns = found == d.breakdown_ns.end() ? 0 : found->second;
        double share = d.window_ns > 0 ? static_cast<double>(ns) / static_cast<double>(d.window_ns) : 0.0;
        int bar = static_cast<int>(share * 30 + 0.5);
        out += fmt::format("      {:<21}{:>9} {:>6}  {}\n", label, format_ns(ns), format_percent(share), std::string(static_cast<size_t>(bar), '#'));
      }
    }
    if (!t.idle_devices.empty() && !log_only) {
      std::string list;
      for (const auto& d : t.idle_devices)
        list += fmt::format("{}GPU {}{}", list.empty() ? "" : ", ", d.device_id, d.name.empty() ? "" : " (" + d.name + ")");
      out += fmt::format("\n  unused GPUs  {} listed by the trace ran nothing (not counted in utilization):\n"
                         "               {}\n",
                         t.idle_devices.size(), list);
    }
    if (t.tc_eligible_ops > 0) {
      out += fmt::format("\n  Tensor-Core-eligible ops (each counted once, at the outermost eligible op):\n");
      out += fmt::format("    {} op(s), {} GPU time, {} of it in Tensor Core kernels\n", t.tc_eligible_ops,
                         format_ns(t.tc_eligible_gpu_ns), format_ns(t.tc_eligible_tc_ns));
      out += fmt::format("    {} op(s) use no Tensor Core kernel: {} GPU time\n", t.tc_eligible_ops_no_tc,
                         format_ns(t.tc_eligible_no_tc_gpu_ns));
    }
    if (!t.modules.empty()) {
      // The module view: GPU time per nn.Module path (with_modules=True), sub-modules indented.
      constexpr size_t kShown = 40;
      out += "\n  modules (nn.Module paths; GPU time includes sub-modules):\n";
      out += fmt::format("    {:>9} {:>6} {:>6}  {}\n", "GPU time", "share", "TC", "module");
      for (size_t i = 0; i < t.modules.size() && i < kShown; ++i) {
        const auto& m = t.modules[i];
        size_t depth = static_cast<size_t>(std::count(m.path.begin(), m.path.end(), '/'));
        std::string name = m.path.substr(m.path.rfind('/') == std::string::npos ? 0 : m.path.rfind('/') + 1);
        out += fmt::format("    {:>9} {:>6} {:>6}  {}{}\n", format_ns(m.gpu_time_ns), format_percent(m.share_of_kernel_time),
                           format_percent(m.tensor_core_share), std::string(2 * depth, ' '), name);
      }
      if (t.modules.size() > kShown)
        out += fmt::format("    … {} more module path(s) in --format json\n", t.modules.size() - kShown);
    }
    out += render_graphs_compiled_text(t);
    if (!t.host_activity.empty()) out += render_host_activity_text(t.host_activity);
    if (!t.system_view.empty()) out += render_system_view_text(t.system_view);
    if (t.issues.empty()) {
      out += "\n  import issues: none\n";
    } else {
      out += "\n  import issues (events skipped or approximated):\n";
      for (const auto& i : t.issues) {
        std::string example = i.example.size() > 40 ? i.example.substr(0, 37) + "..." : i.example;
        out += fmt::format("    {:>8} x {}  e.g. {} ({})\n", with_commas(i.count), i.kind, example, i.location);
      }
    }
    out += "\n";
  }
  out += render_jobs_text(jobs, bold);
  return out;
}

namespace {

nlohmann::ordered_json efficiency_json(const EfficiencyRow& e) {
  nlohmann::ordered_json j;
  if (e.step) j["step"] = *e.step;
  j["elapsed_ns"] = e.elapsed_ns;
  j["max_useful_ns"] = e.max_useful_ns;
  j["mean_useful_ns"] = e.mean_useful_ns;
  j["most_loaded_rank"] = e.most_loaded_rank;
  j["load_balance"] = e.load_balance;
  j["communication_efficiency"] = e.communication;
  j["orchestration_efficiency"] = e.orchestration;
  j["parallel_efficiency"] = e.parallel;
  j["wait_share"] = e.wait_share;
  j["transfer_share"] = e.transfer_share;
  j["mean_wait_share"] = e.mean_wait_share;
  return j;
}

}  // namespace

std::string render_summary_json(const std::vector<TraceSummary>& traces, const std::vector<JobSummary>& jobs) {
  using json = nlohmann::ordered_json;
  auto opt = [](const auto& o) -> json { return o ? json(*o) : json(nullptr); };
  json root;
  root["schema"] = "proflint.summary";
  root["version"] = 1;
  json arr = json::array();
  for (const auto& t : traces) {
    json j;
    j["trace_id"] = t.trace_id;
    j["path"] = t.path;
    j["format"] = t.format;
    j["format_version"] = opt(t.format_version);
    j["tool_version"] = opt(t.tool_version);
    j["framework"] = opt(t.framework);
    j["vendor"] = opt(t.vendor);
    j["rank"] = opt(t.rank);
    j["world_size"] = opt(t.world_size);
    j["comm_backend"] = opt(t.comm_backend);
    j["wall_ns"] = t.wall_ns;
    j["event_count"] = t.event_count;
    j["counts"] = {{"kernel", t.kernel_count}, {"memcpy", t.memcpy_count}, {"memset", t.memset_count},
                   {"api_call", t.api_call_count}, {"op", t.op_count}};
    j["has_gpu_work"] = t.has_gpu_work;
    j["workload"] = opt(t.workload);
    j["startup_ns"] = t.startup_ns;
    j["steady_wall_ns"] = t.steady_wall_ns;
    j["devices_listed"] = t.devices_listed;
    json it;
    it["source"] = t.iterations.source;
    it["count"] = t.iterations.count;
    it["mean_ns"] = t.iterations.mean_ns;
    it["stddev_ns"] = t.iterations.stddev_ns;
    it["median_ns"] = t.iterations.median_ns;
    it["min_ns"] = t.iterations.min_ns;
    it["max_ns"] = t.iterations.max_ns;
    it["durations_ns"] = t.iterations.durations_ns;
    j["iterations"] = it;
    json devs = json::array();
    for (const auto& d : t.devices) {
      json dj;
      dj["device_id"] = d.device_id;
      dj["name"] = d.name;
      dj["compute_capability"] = d.compute_major ? json(fmt::format("{}.{}", *d.compute_major, d.compute_minor.value_or(0))) : json(nullptr);
      dj["window_ns"] = d.window_ns;
      dj["gpu_utilization"] = d.gpu_utilization;
      dj["kernel_count"] = d.kernel_count;
      dj["kernel_time_ns"] = d.kernel_time_ns;
      dj["kernel_busy_ns"] = d.kernel_busy_ns;
      dj["gpu_busy_ns"] = d.gpu_busy_ns;
      dj["tensor_core_time_ns"] = d.tensor_core_time_ns;
      dj["tensor_core_share"] = d.tensor_core_share;
      dj["tc_eligible_not_used_ns"] = d.tc_eligible_not_used_ns;
      dj["memcpy"] = {{"count", d.memcpy_count}, {"time_ns", d.memcpy_time_ns}, {"bytes", d.memcpy_bytes}};
      dj["memset_time_ns"] = d.memset_time_ns;
      dj["communication_time_ns"] = d.communication_time_ns;
      json b;
      for (const auto& [key, label] : breakdown_categories()) {
        auto found = d.breakdown_ns.find(key);
        b[key] = found == d.breakdown_ns.end() ? 0 : found->second;
      }
      dj["breakdown_ns"] = b;
      json st;
      st["startup_ns"] = d.startup_ns;
      st["startup_cause"] = d.startup_cause.empty() ? json(nullptr) : json(d.startup_cause);
      st["startup_evidence"] = d.startup_evidence.empty() ? json(nullptr) : json(d.startup_evidence);
      st["start_ns"] = d.steady_start_ns;
      st["window_ns"] = d.steady_window_ns;
      st["kernel_busy_ns"] = d.steady_kernel_busy_ns;
      st["gpu_utilization"] = d.steady_gpu_utilization;
      json sb;
      for (const auto& [key, label] : breakdown_categories()) {
        auto found = d.steady_breakdown_ns.find(key);
        sb[key] = found == d.steady_breakdown_ns.end() ? 0 : found->second;
      }
      st["breakdown_ns"] = sb;
      dj["steady_state"] = st;
      devs.push_back(dj);
    }
    j["devices"] = devs;
    json idle = json::array();
    for (const auto& d : t.idle_devices)
      idle.push_back({{"device_id", d.device_id},
                      {"name", d.name},
                      {"compute_capability", d.compute_major ? json(fmt::format("{}.{}", *d.compute_major,
                                                                                d.compute_minor.value_or(0)))
                                                             : json(nullptr)}});
    j["unused_devices"] = idle;
    j["tc_eligible"] = {{"ops", t.tc_eligible_ops},
                        {"gpu_time_ns", t.tc_eligible_gpu_ns},
                        {"tensor_core_time_ns", t.tc_eligible_tc_ns},
                        {"ops_without_tc", t.tc_eligible_ops_no_tc},
                        {"gpu_time_without_tc_ns", t.tc_eligible_no_tc_gpu_ns}};
    // Present only for traces that replay CUDA graphs or ran torch.compile code (docs/output-json.md).
    const json extra = graphs_compiled_json(t);  // named: items() of a temporary would dangle
    for (const auto& [key, value] : extra.items()) j[key] = value;
    // Present only for traces with OS runtime calls or CPU samples (nsys).
    if (!t.host_activity.empty()) j["host_activity"] = host_activity_json(t.host_activity);
    json issues = json::array();
    for (const auto& i : t.issues) issues.push_back({{"kind", i.kind}, {"count", i.count}, {"example", i.example}, {"location", i.location}});
    j["import_issues"] = issues;
    if (!t.system_view.empty()) j["system_view"] = system_view_json(t.system_view);
    if (!t.modules.empty()) {
      json mods = json::array();
      for (const auto& m : t.modules)
        mods.push_back({{"path", m.path}, {"kernel_count", m.kernel_count}, {"gpu_time_ns", m.gpu_time_ns},
                        {"self_gpu_time_ns", m.self_gpu_time_ns}, {"tensor_core_time_ns", m.tensor_core_time_ns},
                        {"share_of_kernel_time", m.share_of_kernel_time}, {"tensor_core_share", m.tensor_core_share}});
      j["modules"] = mods;
    }
    arr.push_back(j);
  }
  root["traces"] = arr;
  if (!jobs.empty()) {
    json ja = json::array();
    for (const auto& j : jobs) {
      json jj;
      jj["job_id"] = j.job_id;
      jj["source"] = j.source;
      jj["world_size"] = opt(j.world_size);
      jj["ranks_present"] = j.ranks_present;
      jj["aligned"] = j.aligned;
      jj["residual_ns"] = opt(j.residual_ns);
      jj["alignment_note"] = j.alignment_note.empty() ? json(nullptr) : json(j.alignment_note);
      jj["collective_instances"] = j.instances;
      json ranks = json::array();
      for (const auto& r : j.ranks)
        ranks.push_back({{"rank", r.rank}, {"trace_id", r.trace_id}, {"path", r.path}, {"pid", opt(r.pid)},
                         {"device_id", opt(r.device_id)}, {"clock_offset_ns", r.clock_offset_ns},
                         {"offset_residual_ns", opt(r.offset_residual_ns)}});
      jj["ranks"] = ranks;
      json coll = json::array();
      for (const auto& r : j.collectives)
        coll.push_back({{"rank", r.rank}, {"instances", r.instances}, {"total_wait_ns", r.total_wait_ns},
                        {"mean_wait_ns", r.mean_wait_ns}, {"arrived_last", r.arrived_last},
                        {"arrived_last_share", r.arrived_last_share}, {"arrived_first", r.arrived_first},
                        {"arrived_first_share", r.arrived_first_share}, {"total_collective_ns", r.total_collective_ns},
                        {"total_transfer_ns", r.total_transfer_ns}});
      jj["collectives_per_rank"] = coll;
      jj["efficiency"] = j.job_efficiency ? efficiency_json(*j.job_efficiency) : json(nullptr);
      json steps = json::array();
      for (const auto& e : j.step_efficiency) steps.push_back(efficiency_json(e));
      jj["efficiency_per_step"] = steps;
      ja.push_back(jj);
    }
    root["jobs"] = ja;
  }
  return root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace proflint

// engine/export/ranks.hpp — which part of the store each exported process (Chrome) or task
// (Paraver) shows, and the clock offset that puts it on the job's clock.
//
// A rank is one trace, or one process of a multi-process nsys export, as the job tables
// (schema/0005_jobs.sql, job_rank) describe it. A store without those tables (older stores, or
// a build before cross-rank alignment) gives one rank per trace with offset 0.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/finding.hpp"
#include "engine/store/store.hpp"

namespace proflint::exporter {

struct RankView {
  int64_t trace_id = 0;
  int64_t rank = 0;                  // job rank (distributedInfo.rank or given order)
  std::optional<int64_t> job_id;     // NULL without job tables
  std::optional<int64_t> pid;        // set: only this host process of the trace (nsys multi-process)
  std::optional<int64_t> device_id;  // set with pid: the GPU that process drives
  int64_t clock_offset_ns = 0;       // added to every timestamp of this rank
  std::string path;                  // trace.path
  std::string label;                 // "rank 0 (file.json.gz)"
};

// In job order then rank order (without job tables: trace order).
std::vector<RankView> rank_views(Store& store);

// SQL condition (with the row's table alias `a`) restricting a host-side table (api_call, range
// with pid set) or a GPU-side table (kernel, memcpy, memset, sync_event) to the rank. Binds
// nothing: trace_id and pid are integers written into the text.
std::string host_filter(const RankView& r, const std::string& alias);
std::string gpu_filter(const RankView& r, const std::string& alias);

using TrackKey = std::pair<int64_t, int64_t>;
// (pid, tid) of the rank's host threads that made a call or hold a host range, sorted.
std::vector<TrackKey> host_threads(Store& store, const RankView& r);
// (device, stream) of the rank's GPU work (kernels, copies, memsets, syncs, GPU annotations),
// sorted; -1 stands for a missing device or stream.
std::vector<TrackKey> gpu_tracks(Store& store, const RankView& r);
// Recorded names of the rank's threads.
std::map<TrackKey, std::string> thread_names(Store& store, const RankView& r);

// Where a finding sits on the job's clock, for the exports' finding tracks: the rank it belongs to
// (its scope's rank, else its trace's first rank, else the first rank) and [start, end) covering
// its iterations (host start to the later of host and GPU end), else its trace's capture window,
// else (a finding about the whole job) every rank's.
struct FindingPlace {
  size_t rank_index = 0;  // into the views the placer was given
  int64_t start_ns = 0, end_ns = 0;
};

class FindingPlacer {
 public:
  FindingPlacer(Store& store, const std::vector<RankView>& views);
  std::optional<FindingPlace> place(const Finding& f) const;

 private:
  struct Window {
    std::map<int64_t, std::pair<int64_t, int64_t>> iterations;  // iteration -> [start, end), trace clock
    int64_t start_ns = 0, end_ns = 0;                            // capture window, trace clock
  };
  const std::vector<RankView>& views_;
  std::vector<Window> windows_;
};

}  // namespace proflint::exporter

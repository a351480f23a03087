// engine/analysis/source_sites.hpp — where in the user's code a finding's evidence comes from.
//
// A detector adds the rows behind its finding (API calls, ops, kernels, copies) with the time each
// one costs; SourceSites looks up each row's op and that op's source row (schema/0008_source.sql:
// the innermost user frame and the nn.Module path), groups them by place, and gives the places
// with the most time. attach_locations puts them on the finding: the structured list the emitters
// render (text, JSON, markdown, SARIF physicalLocation) and one sentence in the problem text, e.g.
// "Where: aten::item at train.py:84 in log_metrics, 6× per step, host blocked 1.7 ms per step."
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "engine/analysis/facts.hpp"
#include "engine/analysis/finding.hpp"

namespace proflint {

class SourceSites {
 public:
  // `time_label` says what the added times are ('host blocked', 'GPU time', 'waited').
  SourceSites(const Facts& facts, int64_t trace_id, std::string time_label);
  // True when the trace records source or module attribution at all (else adding is a no-op).
  bool available() const { return available_; }

  // The rows are looked up when top() is called, all of a kind at once (a finding may add 10^5
  // launches: one statement per row cost more than the detector's own queries).
  void add_op(int64_t op_id, int64_t time_ns);
  void add_api_call(int64_t api_call_id, int64_t time_ns);  // through its op, else its own source row
  void add_kernel(int64_t kernel_id, int64_t time_ns);      // through its op, else its API call
  void add_memcpy(int64_t memcpy_id, int64_t time_ns);      // through its op, else its API call
  void add_memset(int64_t memset_id, int64_t time_ns);
  void add_range(int64_t range_id, int64_t time_ns);        // DataLoader fetch annotations (their own rows)

  // The places with the most time (then count), at most `k`. Rows without attribution are left out.
  std::vector<SourceLocation> top(size_t k);

 private:
  using Key = std::tuple<std::string, int64_t, std::string, std::string>;  // file, line, function, module path
  // One call of the user's code: the outermost op at the place (op), or the API call or range
  // itself. Two kernels of one aten::conv2d count as one call.
  enum class UnitKind : uint8_t { op, api_call, range };
  struct Unit {
    UnitKind kind;
    int64_t id;
    auto operator<=>(const Unit&) const = default;
  };
  struct Site {
    int64_t time_ns = 0;
    std::vector<Unit> units;                            // the calls counted, with repeats (top() counts them once)
    std::unordered_map<const std::string*, int64_t> what;  // op/call name (a text of the rows loaded) -> rows added
  };
  // Where a row counts. Rows are counted one by one (a finding may add 10^5 kernels), so a place is
  // an index into sites_ and a name a pointer to its text in the loaded rows: no text is copied or
  // compared per row.
  struct Found {
    bool ok = false;
    int site = -1;                        // index into sites_: the place, forward or backward
    const std::string* what = nullptr;    // the op or call name
    Unit unit{UnitKind::op, 0};
  };
  // A row with a source: its place and name (the op's parent too, for ops).
  struct Attributed {
    int site = -1;
    std::string name;
    std::optional<int64_t> parent;
    bool backward = false;  // a backward op at its forward op's place (name: 'backward of <forward op>')
  };
  enum class Kind { op, api_call, kernel, memcpy, memset, range };
  struct Added {
    Kind kind;
    int64_t id, time_ns;
  };
  struct Links {  // a kernel's, copy's or API call's op and API call
    std::optional<int64_t> op, api_call;
  };

  void add(Kind kind, int64_t id, int64_t time_ns);
  void resolve();  // looks up every added row, then counts it at its place
  void count(const Found& f, int64_t time_ns);
  int site_of(Key key, bool backward);
  Found of_op(int64_t op_id);
  Found of_links(const Links& l);
  Found of_api_call(int64_t api_call_id);  // its own source row (calls outside any op)
  Found of_range(int64_t range_id);
  void load_ops(std::vector<int64_t> ids);
  void load_attributed(const char* sql, std::vector<int64_t> ids, std::map<int64_t, Attributed>& into);

  const Facts& facts_;
  int64_t trace_id_;
  std::string label_;
  bool available_ = false;
  int64_t iterations_ = 0;
  std::vector<Added> added_;
  std::map<int64_t, Links> links_[3];                      // kernel, memcpy, memset rows
  std::map<int64_t, std::optional<int64_t>> api_op_;       // API call -> its op
  std::map<int64_t, std::optional<Attributed>> ops_;       // op -> its source (nullopt: none), once loaded
  std::map<int64_t, Attributed> api_calls_, ranges_;       // their own source rows (map: texts stay in place)
  std::map<int64_t, std::string> texts_;                   // string id -> text, of the places loaded
  std::unordered_map<int64_t, Found> op_cache_;
  std::map<std::pair<Key, bool>, int> site_index_;  // (place, backward) -> index into sites_
  std::vector<Site> sites_;
};

// One location as the problem text and the text report print it:
// "aten::item at train.py:84 in log_metrics (module Net_0/Head_0), 6× per step, host blocked 1.7 ms per step".
std::string location_text(const SourceLocation& l);

// Sets f.locations and adds "Where: …" (the first `in_problem` places) to f.problem. No-op when empty.
void attach_locations(Finding& f, std::vector<SourceLocation> locations, size_t in_problem = 2);

}  // namespace proflint

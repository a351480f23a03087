// engine/import/kineto/flow_pairer.hpp — pairs the 's' and 'f' ends of Kineto flow arrows.
//
// Ends arrive in any order (the 'f' on the GPU timeline often precedes its 's'), ids repeat in
// a few traces, and most 'f' ends of ac2g flows never get an 's' (runtime calls without GPU
// work). Only ends still waiting are kept, in one flat open-addressing table: a node-based map
// cost an allocation per flow event, a measurable share of import time.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace proflint::kineto {

struct FlowEnd {
  std::optional<int64_t> pid, tid;
  int64_t ts_ns = 0;
};

struct FlowPair {
  uint32_t kind = 0;
  int64_t id = 0;
  std::optional<FlowEnd> src, dst;  // 's' end, 'f' end; one may be missing for leftovers
};

class FlowPairer {
 public:
  // Adds one end of flow (kind, id). Returns the completed pair when the other end was waiting;
  // with repeated ids, the earliest waiting end of the other side is taken.
  std::optional<FlowPair> add(uint32_t kind, int64_t id, bool is_start, const FlowEnd& end);
  // Ends that never found their other half, sorted by (kind, id, ts, start before finish).
  std::vector<FlowPair> leftovers() const;
  size_t waiting() const { return live_; }

 private:
  enum class Slot : uint8_t { empty, live, dead };
  // 40 bytes: the table is probed at random, so its size is what costs.
  struct Entry {
    int64_t id = 0, ts_ns = 0, pid = 0, tid = 0;
    uint32_t kind = 0;
    Slot state = Slot::empty;
    bool is_start = false, has_pid = false, has_tid = false;
    FlowEnd end() const {
      return FlowEnd{has_pid ? std::optional<int64_t>(pid) : std::nullopt, has_tid ? std::optional<int64_t>(tid) : std::nullopt, ts_ns};
    }
  };
  size_t slot_of(uint32_t kind, int64_t id) const;
  void grow();
  std::vector<Entry> table_;
  size_t live_ = 0, used_ = 0;  // used_ counts live and dead slots
};

}  // namespace proflint::kineto

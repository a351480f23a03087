// engine/import/kineto/flow_pairer.cpp — linear-probing table of waiting flow ends.
#include "engine/import/kineto/flow_pairer.hpp"

#include <algorithm>
#include <tuple>

namespace proflint::kineto {

size_t FlowPairer::slot_of(uint32_t kind, int64_t id) const {
  uint64_t h = static_cast<uint64_t>(id) * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(kind) << 56);
  h ^= h >> 29;
  return static_cast<size_t>(h) & (table_.size() - 1);
}

void FlowPairer::grow() {
  std::vector<Entry> old = std::move(table_);
  size_t size = 1024;
  while (size < live_ * 3) size *= 2;
  table_.assign(size, Entry{});
  used_ = live_;
  for (const Entry& e : old) {
    if (e.state != Slot::live) continue;
    size_t i = slot_of(e.kind, e.id);
    while (table_[i].state != Slot::empty) i = (i + 1) & (table_.size() - 1);
    table_[i] = e;
  }
}

std::optional<FlowPair> FlowPairer::add(uint32_t kind, int64_t id, bool is_start, const FlowEnd& end) {
  if (table_.empty() || (used_ + 1) * 2 > table_.size()) grow();
  const size_t mask = table_.size() - 1;
  // Look for a waiting end of the other side; remember the first reusable slot for an insert.
  size_t best = SIZE_MAX, free_slot = SIZE_MAX;
  size_t i = slot_of(kind, id);
  for (; table_[i].state != Slot::empty; i = (i + 1) & mask) {
    Entry& e = table_[i];
    if (e.state == Slot::dead) {
      if (free_slot == SIZE_MAX) free_slot = i;
      continue;
    }
    if (e.kind == kind && e.id == id && e.is_start != is_start && (best == SIZE_MAX || e.ts_ns < table_[best].ts_ns))
      best = i;
  }
  if (best != SIZE_MAX) {
    Entry& e = table_[best];
    FlowPair pair;
    pair.kind = kind;
    pair.id = id;
    pair.src = is_start ? end : e.end();
    pair.dst = is_start ? e.end() : end;
    e.state = Slot::dead;
    --live_;
    return pair;
  }
  if (free_slot == SIZE_MAX) {
    free_slot = i;
    ++used_;
  }
  Entry& e = table_[free_slot];
  e.state = Slot::live;
  e.is_start = is_start;
  e.kind = kind;
  e.id = id;
  e.ts_ns = end.ts_ns;
  e.has_pid = end.pid.has_value();
  e.pid = end.pid.value_or(0);
  e.has_tid = end.tid.has_value();
  e.tid = end.tid.value_or(0);
  ++live_;
  return std::nullopt;
}

std::vector<FlowPair> FlowPairer::leftovers() const {
  std::vector<const Entry*> rest;
  for (const Entry& e : table_)
    if (e.state == Slot::live) rest.push_back(&e);
  std::sort(rest.begin(), rest.end(), [](const Entry* a, const Entry* b) {
    return std::make_tuple(a->kind, a->id, a->ts_ns, !a->is_start) < std::make_tuple(b->kind, b->id, b->ts_ns, !b->is_start);
  });
  std::vector<FlowPair> out;
  out.reserve(rest.size());
  for (const Entry* e : rest) {
    FlowPair p;
    p.kind = e->kind;
    p.id = e->id;
    if (e->is_start) p.src = e->end();
    else p.dst = e->end();
    out.push_back(p);
  }
  return out;
}

}  // namespace proflint::kineto

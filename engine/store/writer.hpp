// engine/store/writer.hpp — a FactSink that writes its trace straight into a store.
//
// The pipeline never uses it: importers fill a TraceModel, derivation derives it, and
// write_models (model_io.hpp) stores it once. Tests and tools that build a small store by hand
// (then derive it with derive_all) use this: the rows go into a model of their own, written
// underived into `store` at commit().
#pragma once

#include <cstdint>

#include "engine/model/model.hpp"
#include "engine/model/sink.hpp"
#include "engine/store/store.hpp"

namespace proflint {

namespace detail {
struct OwnModel {
  TraceModel own_model;
};
}  // namespace detail

class StoreWriter : private detail::OwnModel, public FactSink {
 public:
  // trace_id() is the id the trace will have in `store` (its largest trace id + 1).
  StoreWriter(Store& store, const TraceInfo& info);
  // Closes the trace and writes it into the store; nothing is written without it.
  void commit();

 private:
  Store& store_;
};

}  // namespace proflint

// engine/store/model_io.hpp — writing fact models into the store once, and reading them back.
//
// write_models is the only writer of fact rows: every table of every trace in one transaction, one
// prepared INSERT per table, derived columns and tables included (NULL / no rows for a model not
// derived yet), and the jobs across the traces. load_model
// reads a store's facts back into models (derived columns are not read: they are derived again).
#pragma once

#include <memory>
#include <vector>

#include "engine/model/model.hpp"
#include "engine/store/store.hpp"

namespace proflint {

// Appends the traces to `store` in the order given, with ids after those already there (texts
// already in the string table keep their ids). Ids follow the order in which a sequential import
// then derivation of the same files would have given them: the imported rows and texts of every
// trace first, then what derivation added (new op names, ops, iterations, ...). Sets trace_id.
// `jobs`, when given, are the jobs across exactly these models (derive_jobs over them, in this
// order): written into the job tables, which must hold no rows yet (a fresh or cleared store).
// With `release`, the models' big tables are given back as they are written (their memory and
// the store's were the peak of a load); the models are then good for nothing but their trace_id.
void write_models(Store& store, const std::vector<TraceModel*>& models, const JobFacts* jobs = nullptr,
                  bool release = false);

// write_models in steps, so that the tables derivation does not touch, and the ranges once
// derivation has decided their columns, go in while the rest of derivation runs (the pipeline's
// load, engine/pipeline/load.cpp): one transaction from construction to finish(), rolled back
// when the object goes without finish(). The constructor takes the models' imported texts (it must
// run before derivation adds texts); write_imported() writes the rows derivation neither reads
// nor changes; write_ranges(i), in model order, model i's ranges with the derived columns
// derivation has published (derive_trace's ranges_derived); finish() the rest, once every model
// is derived. One thread at a time: calls on one object may come from different threads only
// one after the other (a join or a lock between them); finish() itself writes a split store
// (Store::split_side) on two threads, one per database, each with its own transaction. The same
// rows, ids and texts as write_models, which is these steps in order.
class ModelWrite {
 public:
  ModelWrite(Store& store, std::vector<TraceModel*> models, bool release);
  ~ModelWrite();
  ModelWrite(const ModelWrite&) = delete;
  ModelWrite& operator=(const ModelWrite&) = delete;

  void write_imported();
  void write_ranges(size_t model);
  // With `index`, also builds the store's indexes (Store::create_indexes) once the rows are in:
  // for a split store each database's as soon as that database is committed, on its own thread.
  void finish(const JobFacts* jobs, bool index = false);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// The imported facts of every trace in the store, in trace_id order. `was_derived` tells which
// traces had been derived (trace.iteration_source set). A row naming a trace, text or sample series
// the store lacks (an edited store) throws std::runtime_error saying which, not Error: the caller
// knows the file and reports it as a damaged store (engine/pipeline/load.cpp).
std::vector<TraceModel> load_model(Store& store, std::vector<bool>* was_derived = nullptr);

// Deletes every row of every table (the schema and its indexes stay): a store re-derived from its
// models is written again from scratch.
void clear_store(Store& store);

}  // namespace proflint

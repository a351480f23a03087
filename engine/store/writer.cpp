// engine/store/writer.cpp — see writer.hpp.
#include "engine/store/writer.hpp"

#include <SQLiteCpp/Database.h>

#include "engine/store/model_io.hpp"

namespace proflint {

StoreWriter::StoreWriter(Store& store, const TraceInfo& info) : FactSink(own_model, info), store_(store) {
  own_model.trace_id = store.db().execAndGet("SELECT COALESCE(MAX(trace_id), 0) + 1 FROM trace").getInt64();
}

void StoreWriter::commit() {
  FactSink::commit();
  write_models(store_, {&own_model});
}

}  // namespace proflint

// engine/import/kineto/event_parser.hpp — one traceEvents element (raw JSON text) to plain fields.
//
// The parser knows JSON and Kineto's key spellings (both cases of `External id`, `Input dims`,
// string or int pids...), nothing about fact rows: kineto_importer.cpp decides what each event
// becomes. All string_views point into the parser's buffers and live until the next parse().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace proflint::kineto {

using opt_i64 = std::optional<int64_t>;

// A pid or tid: an int in most traces, a string in others ("25738", "stream 7", "Spans").
struct EventId {
  bool present = false;
  opt_i64 number;         // the integer it denotes, when it denotes one
  std::string_view text;  // the raw token (for messages)
};

struct KinetoEvent {
  std::string_view ph;  // empty when absent
  std::string_view cat;
  bool has_cat = false;
  std::string_view name;
  EventId pid, tid;
  std::string_view ts, dur;  // raw number text; empty when absent
  bool has_ts = false, has_dur = false;
  opt_i64 flow_id;  // 'id' of flow events
  bool has_flow_id = false;

  // args
  opt_i64 device, stream, correlation, external_id;
  std::array<opt_i64, 3> grid, block;
  opt_i64 registers_per_thread, shared_memory, bytes;
  opt_i64 graph_id, graph_node_id;  // CUDA graph ids of a replayed kernel, where the profiler records them
  opt_i64 sequence_number, fwd_thread_id;
  opt_i64 device_type, device_id, total_allocated, total_reserved, mem_bytes;  // [memory] events
  std::string_view input_dims, input_types, call_stack, module_hierarchy;
  bool has_input_dims = false, has_input_types = false, has_call_stack = false, has_module = false;
  // Collective arguments (record_param_comms / nccl:* / gloo:* in newer PyTorch); has_comm when any is present.
  std::string_view comm_name, comm_pg_name, comm_pg_desc, comm_dtype, comm_group_ranks;
  opt_i64 comm_seq, comm_in_nelems, comm_out_nelems, comm_group_size;
  bool has_comm = false;
  std::string_view sync_kind;     // cuda_sync_kind
  std::string_view meta_name;     // args.name of 'M' events
  std::string_view meta_labels;   // args.labels of process_labels
  bool has_meta_name = false;
  // Numeric args, kept only for counter-like events (ph 'C', cuda_profiler_range) or when args
  // come before ph/cat in the object.
  std::vector<std::pair<std::string_view, double>> numeric_args;
  bool numeric_args_kept = false;

  void reset();
  // Copies the texts that point outside the event's own bytes [data, data + size) (escaped strings,
  // which the parser unescapes into its buffer, valid only until its next parse) into `arena`, so
  // that the event can be read after the parser moved on (the import's parse on a thread of its own).
  void keep_texts(const char* data, size_t size, std::deque<std::string>& arena);

 private:
  // Every text field, for keep_texts: a field added above must be added here.
  template <class F>
  void for_each_text(F f) {
    for (std::string_view* t : {&ph, &cat, &name, &pid.text, &tid.text, &ts, &dur, &input_dims, &input_types, &call_stack,
                                &module_hierarchy, &comm_name, &comm_pg_name, &comm_pg_desc, &comm_dtype, &comm_group_ranks,
                                &sync_kind, &meta_name, &meta_labels})
      f(*t);
    for (auto& arg : numeric_args) f(arg.first);
  }
};

enum class ParseStatus { ok, invalid_json, not_an_object };

// Bytes readable after every event handed to parse() (simdjson reads ahead; checked against
// simdjson::SIMDJSON_PADDING where simdjson is compiled in).
constexpr size_t kParserPadding = 64;

// The parser compiled for one simdjson kernel (event_parser_kernel.cpp).
class EventParserKernel {
 public:
  virtual ~EventParserKernel();
  virtual ParseStatus parse(const char* data, size_t size, KinetoEvent& event, std::string_view& error) = 0;
  virtual const char* name() const = 0;  // simdjson's name of the kernel: "icelake", "haswell", "fallback"...
};

class EventParser {
 public:
  // Uses the kernel simdjson picked for this CPU at run time. For benchmarks, simdjson's
  // SIMDJSON_FORCE_IMPLEMENTATION=fallback|haswell|icelake changes that choice (stage 1 included),
  // PROFLINT_JSON_KERNEL=generic|haswell|icelake only the parser's copy (event_parser.cpp).
  EventParser();
  // Parses `size` bytes at `data`; at least kParserPadding bytes after them must be readable.
  // On failure `error` says what simdjson reported.
  ParseStatus parse(const char* data, size_t size, KinetoEvent& event, std::string_view& error) {
    return kernel_->parse(data, size, event, error);
  }
  // The kernel parse() runs: simdjson's name of it ("icelake", "haswell", "fallback"...).
  const char* kernel_name() const { return kernel_->name(); }

 private:
  std::unique_ptr<EventParserKernel> kernel_;
};

// What the parser of this process runs, for --verbose and the benchmark: "simdjson 3.0.1, kernel
// icelake (CPU: icelake)": the kernel of On Demand, and simdjson's own run-time choice.
std::string json_parser_description();

// One parser per kernel this build compiled and this CPU can run (tests compare them).
std::vector<std::unique_ptr<EventParserKernel>> runnable_event_parser_kernels();

}  // namespace proflint::kineto

// engine/import/kineto/event_parser_kernel.cpp — simdjson On Demand over one Kineto event.
//
// Compiled once per simdjson kernel (CMakeLists.txt: generic flags, then haswell's and icelake's
// instruction sets), each copy in its own namespace PROFLINT_JSON_KERNEL. simdjson 3.0 builds its
// On Demand front end only for the kernel the compiler flags allow ("builtin"), so a binary built
// for plain x86-64 would parse every event with the scalar "fallback" kernel even on an AVX-512
// CPU; event_parser.cpp picks the copy of the kernel simdjson selected at run time for this CPU.
// Nothing here may be called on a CPU without that kernel's instructions.
#include <simdjson.h>

#include <cstring>
#include <memory>

#include "engine/import/kineto/event_parser.hpp"
#include "engine/import/kineto/numbers.hpp"

#ifndef PROFLINT_JSON_KERNEL
#error "compile with -DPROFLINT_JSON_KERNEL=<namespace> (see CMakeLists.txt)"
#endif

static_assert(proflint::kineto::kParserPadding >= simdjson::SIMDJSON_PADDING, "parser padding must cover simdjson's read-ahead");

namespace proflint::kineto::PROFLINT_JSON_KERNEL {

namespace od = simdjson::ondemand;

namespace {

// Scalars are read from their raw token so that ints, floats, quoted numbers and overflowing
// values all go through the same exact conversion (numbers.hpp).
inline std::string_view token(od::value& v) { return v.raw_json_token(); }

inline std::string_view trim_right(std::string_view t) {
  while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t')) t.remove_suffix(1);
  return t;
}

inline opt_i64 int_value(od::value& v) { return int_from_text(token(v)); }

// A string value without copying it when it has no escapes (almost always): the raw token is
// `"text"` plus spaces. Escaped strings are unescaped by simdjson into the parser's buffer.
// Non-strings (numbers, null) give their raw text. `is_string` says which it was.
inline std::string_view string_value(od::value& v, bool* is_string = nullptr) {
  std::string_view t = trim_right(token(v));
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"') {
    if (is_string) *is_string = true;
    std::string_view body = t.substr(1, t.size() - 2);
    if (std::memchr(body.data(), '\\', body.size()) == nullptr) return body;
    std::string_view s;
    if (v.get_string().get(s) == simdjson::SUCCESS) return s;
    return body;
  }
  if (is_string) *is_string = false;
  return t;
}

inline EventId id_value(od::value& v) {
  EventId id;
  id.present = true;
  bool is_string = false;
  id.text = string_value(v, &is_string);
  id.number = is_string ? id_from_text(id.text) : int_from_text(id.text);
  return id;
}

// The key of `field` without copying: its raw text up to the closing quote. Keys with escapes
// keep them (they match no key we look for, which is right for such odd keys).
inline std::string_view key_of(od::field& field, const char* doc_end) {
  const char* begin = field.key().raw();
  // The closing quote is the first '"' not escaped; keys are short.
  const char* p = begin;
  for (;;) {
    if (p >= doc_end) return {};
    const char* q = static_cast<const char*>(std::memchr(p, '"', static_cast<size_t>(doc_end - p)));
    if (!q) return {};
    size_t backslashes = 0;
    while (q - backslashes > begin && q[-1 - static_cast<ptrdiff_t>(backslashes)] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return std::string_view(begin, static_cast<size_t>(q - begin));
    p = q + 1;
  }
}

// Raw JSON text of an array value ("Input Dims"); an empty view when it is not an array.
inline std::string_view array_text(od::value& v, bool& present) {
  od::array a;
  if (v.get_array().get(a) != simdjson::SUCCESS) {
    present = false;
    return {};
  }
  std::string_view raw;
  if (a.raw_json().get(raw) != simdjson::SUCCESS) {
    present = false;
    return {};
  }
  present = true;
  return trim_right(raw);
}

inline void dims3(od::value& v, std::array<opt_i64, 3>& out) {
  od::array a;
  if (v.get_array().get(a) != simdjson::SUCCESS) return;
  size_t i = 0;
  for (auto element : a) {
    od::value e;
    if (element.get(e) != simdjson::SUCCESS) return;
    if (i < 3) out[i] = int_value(e);
    ++i;
  }
}

inline bool wants_numeric_args(const KinetoEvent& ev, bool seen_ph, bool seen_cat) {
  if (!seen_ph || !seen_cat) return true;  // unknown yet: keep them, decide later
  return ev.ph == "C" || ev.cat == "cuda_profiler_range";
}

class Kernel final : public EventParserKernel {
 public:
  Kernel() {
    // Sized once for typical events: growing on each new largest event costs allocations.
    if (parser_.allocate(64 * 1024) != simdjson::SUCCESS) return;  // iterate() retries and reports it
  }
  ParseStatus parse(const char* data, size_t size, KinetoEvent& event, std::string_view& error) override;
  const char* name() const override { return SIMDJSON_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION); }

 private:
  simdjson::error_code parse_args(od::value args, KinetoEvent& event);
  od::parser parser_;
  const char* doc_end_ = nullptr;
};

simdjson::error_code Kernel::parse_args(od::value args, KinetoEvent& ev) {
  od::object obj;
  if (auto err = args.get_object().get(obj)) return err == simdjson::INCORRECT_TYPE ? simdjson::SUCCESS : err;
  for (auto field_result : obj) {
    od::field field;
    if (auto err = std::move(field_result).get(field)) return err;
    std::string_view key = key_of(field, doc_end_);
    od::value v = field.value();
    bool handled = true;
    switch (key.size()) {
      case 3:
        if (key == "Seq") { ev.comm_seq = int_value(v); ev.has_comm = true; }
        else handled = false;
        break;
      case 4:
        if (key == "grid") dims3(v, ev.grid);
        else if (key == "name") { ev.meta_name = string_value(v); ev.has_meta_name = true; }
        else handled = false;
        break;
      case 5:
        if (key == "block") dims3(v, ev.block);
        else if (key == "bytes") ev.bytes = int_value(v);
        else if (key == "Bytes") ev.mem_bytes = int_value(v);
        else if (key == "dtype") { ev.comm_dtype = string_value(v); ev.has_comm = true; }
        else handled = false;
        break;
      case 6:
        if (key == "device") ev.device = int_value(v);
        else if (key == "stream") ev.stream = id_value(v).number;
        else if (key == "labels") ev.meta_labels = string_value(v);
        else handled = false;
        break;
      case 7:  // CUDA graph ids of replayed kernels: both spellings are accepted
        if (key == "graphId") ev.graph_id = int_value(v);
        else handled = false;
        break;
      case 8:
        if (key == "graph id") ev.graph_id = int_value(v);
        else handled = false;
        break;
      case 9:
        if (key == "Device Id") ev.device_id = int_value(v);
        else if (key == "stream_id") ev.stream = id_value(v).number;  // MTIA runtime
        else handled = false;
        break;
      case 10:
        if (key == "Input Dims" || key == "Input dims") ev.input_dims = array_text(v, ev.has_input_dims);
        else if (key == "Input type") ev.input_types = array_text(v, ev.has_input_types);
        else if (key == "Call stack") { ev.call_stack = string_value(v); ev.has_call_stack = true; }
        else if (key == "Group size") { ev.comm_group_size = int_value(v); ev.has_comm = true; }
        else handled = false;
        break;
      case 11:
        if (key == "correlation") ev.correlation = int_value(v);
        else if (key == "External id" || key == "external id") ev.external_id = int_value(v);
        else if (key == "Device Type") ev.device_type = int_value(v);
        else if (key == "graphNodeId") ev.graph_node_id = int_value(v);
        else handled = false;
        break;
      case 13:
        if (key == "shared memory") ev.shared_memory = int_value(v);
        else if (key == "Fwd thread id") ev.fwd_thread_id = int_value(v);
        else if (key == "graph node id") ev.graph_node_id = int_value(v);
        else if (key == "In msg nelems") { ev.comm_in_nelems = int_value(v); ev.has_comm = true; }
        else handled = false;
        break;
      case 14:
        if (key == "cuda_sync_kind") ev.sync_kind = string_value(v);
        else if (key == "Total Reserved") ev.total_reserved = int_value(v);
        else if (key == "Out msg nelems") { ev.comm_out_nelems = int_value(v); ev.has_comm = true; }
        else handled = false;
        break;
      case 15:
        if (key == "Sequence number") ev.sequence_number = int_value(v);
        else if (key == "Total Allocated") ev.total_allocated = int_value(v);
        else if (key == "Collective name") { ev.comm_name = string_value(v); ev.has_comm = true; }
        else handled = false;
        break;
      case 16:
        if (key == "Module Hierarchy") { ev.module_hierarchy = string_value(v); ev.has_module = true; }
        else handled = false;
        break;
      case 18:
        if (key == "Process Group Name") { ev.comm_pg_name = string_value(v); ev.has_comm = true; }
        else handled = false;
        break;
      case 19:
        if (key == "Process Group Ranks") {
          // A string ('[0, 1]') in the PyTorch versions seen; an array is kept as its JSON text.
          bool is_array = false;
          if (token(v).starts_with("[")) ev.comm_group_ranks = array_text(v, is_array);
          else ev.comm_group_ranks = string_value(v);
          ev.has_comm = true;
        } else {
          handled = false;
        }
        break;
      case 25:
        if (key == "Process Group Description") { ev.comm_pg_desc = string_value(v); ev.has_comm = true; }
        else handled = false;
        break;
      case 20:
        if (key == "registers per thread") ev.registers_per_thread = int_value(v);
        else handled = false;
        break;
      default:
        handled = false;
    }
    if (!handled && ev.numeric_args_kept) {
      double d = 0;
      if (v.get_double().get(d) == simdjson::SUCCESS) ev.numeric_args.emplace_back(key, d);
    }
  }
  return simdjson::SUCCESS;
}

ParseStatus Kernel::parse(const char* data, size_t size, KinetoEvent& ev, std::string_view& error) {
  ev.reset();
  doc_end_ = data + size;
  od::document doc;
  auto fail = [&](simdjson::error_code err) {
    error = simdjson::error_message(err);
    return err == simdjson::INCORRECT_TYPE ? ParseStatus::not_an_object : ParseStatus::invalid_json;
  };
  if (auto err = parser_.iterate(data, size, size + simdjson::SIMDJSON_PADDING).get(doc)) return fail(err);
  od::object obj;
  if (auto err = doc.get_object().get(obj)) return fail(err);
  bool seen_ph = false, seen_cat = false;
  for (auto field_result : obj) {
    od::field field;
    if (auto err = std::move(field_result).get(field)) return fail(err);
    std::string_view key = key_of(field, doc_end_);
    od::value v = field.value();
    switch (key.size()) {
      case 2:
        if (key == "ph") {
          ev.ph = string_value(v);
          seen_ph = true;
        } else if (key == "ts") {
          ev.ts = token(v);
          ev.has_ts = true;
        } else if (key == "id") {
          EventId id = id_value(v);
          ev.has_flow_id = true;
          ev.flow_id = id.number;
          // Hex or other non-decimal ids ("0x1f"): any stable number pairs the two ends.
          if (!id.number && !id.text.empty()) {
            uint64_t h = 1469598103934665603ull;
            for (char c : id.text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
            ev.flow_id = static_cast<int64_t>(h >> 1);
          }
        }
        break;
      case 3:
        if (key == "cat") {
          bool is_string = false;
          std::string_view s = string_value(v, &is_string);
          if (is_string) {
            ev.cat = s;
            ev.has_cat = true;
          }
          seen_cat = true;
        } else if (key == "pid") {
          ev.pid = id_value(v);
        } else if (key == "tid") {
          ev.tid = id_value(v);
        } else if (key == "dur") {
          ev.dur = token(v);
          ev.has_dur = true;
        }
        break;
      case 4:
        if (key == "name") {
          ev.name = string_value(v);
        } else if (key == "args") {
          ev.numeric_args_kept = wants_numeric_args(ev, seen_ph, seen_cat);
          if (auto err = parse_args(v, ev)) return fail(err == simdjson::INCORRECT_TYPE ? simdjson::TAPE_ERROR : err);
        }
        break;
      default:
        break;
    }
  }
  if (ev.numeric_args_kept && !(ev.ph == "C" || ev.cat == "cuda_profiler_range")) ev.numeric_args.clear();
  return ParseStatus::ok;
}

}  // namespace

std::unique_ptr<EventParserKernel> make_event_parser_kernel() { return std::make_unique<Kernel>(); }

}  // namespace proflint::kineto::PROFLINT_JSON_KERNEL

// engine/import/kineto/event_parser.cpp — picks the event parser's simdjson kernel at run time.
//
// event_parser_kernel.cpp is compiled once per kernel (CMakeLists.txt); PROFLINT_JSON_KERNEL_*
// say which copies this build has. simdjson picks its best kernel for the CPU once per process
// (get_active_implementation(), cpuid); the parser runs the copy compiled for that kernel, or the
// copy compiled with the build's own flags when there is none.
#include "engine/import/kineto/event_parser.hpp"

#include <simdjson.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace proflint::kineto {

namespace generic {
std::unique_ptr<EventParserKernel> make_event_parser_kernel();
}
#if PROFLINT_JSON_KERNEL_HASWELL
namespace haswell {
std::unique_ptr<EventParserKernel> make_event_parser_kernel();
}
#endif
#if PROFLINT_JSON_KERNEL_ICELAKE
namespace icelake {
std::unique_ptr<EventParserKernel> make_event_parser_kernel();
}
#endif

void KinetoEvent::reset() {
  auto keep = std::move(numeric_args);
  keep.clear();
  *this = KinetoEvent{};
  numeric_args = std::move(keep);
}

void KinetoEvent::keep_texts(const char* data, size_t size, std::deque<std::string>& arena) {
  for_each_text([&](std::string_view& t) {
    if (t.empty() || (t.data() >= data && t.data() + t.size() <= data + size)) return;
    t = arena.emplace_back(t);  // a deque never moves what it holds
  });
}

EventParserKernel::~EventParserKernel() = default;

namespace {

bool cpu_runs(const char* name) {
  const simdjson::implementation* impl = simdjson::get_available_implementations()[name];
  return impl && impl->supported_by_runtime_system();
}

std::unique_ptr<EventParserKernel> make_kernel() {
  std::string active = simdjson::get_active_implementation()->name();
  // PROFLINT_JSON_KERNEL=generic|haswell|icelake picks the On Demand copy alone (simdjson's stage 1
  // keeps its own choice): the benchmark measures each copy with it. Ignored when the CPU cannot
  // run that kernel.
  if (const char* forced = std::getenv("PROFLINT_JSON_KERNEL")) {
    if (std::string_view(forced) == "generic") return generic::make_event_parser_kernel();
    if (cpu_runs(forced)) active = forced;
  }
#if PROFLINT_JSON_KERNEL_ICELAKE
  if (active == "icelake") return icelake::make_event_parser_kernel();
#endif
#if PROFLINT_JSON_KERNEL_HASWELL
  if (active == "haswell") return haswell::make_event_parser_kernel();
#endif
  return generic::make_event_parser_kernel();
}

}  // namespace

EventParser::EventParser() : kernel_(make_kernel()) {}

std::vector<std::unique_ptr<EventParserKernel>> runnable_event_parser_kernels() {
  std::vector<std::unique_ptr<EventParserKernel>> kernels;
  kernels.push_back(generic::make_event_parser_kernel());
#if PROFLINT_JSON_KERNEL_HASWELL
  if (cpu_runs("haswell")) kernels.push_back(haswell::make_event_parser_kernel());
#endif
#if PROFLINT_JSON_KERNEL_ICELAKE
  if (cpu_runs("icelake")) kernels.push_back(icelake::make_event_parser_kernel());
#endif
  return kernels;
}

std::string json_parser_description() {
  EventParser parser;
  return std::string("simdjson ") + SIMDJSON_STRINGIFY(SIMDJSON_VERSION) + ", On Demand kernel " + parser.kernel_name() +
         " (simdjson's choice for this CPU: " + simdjson::get_active_implementation()->name() + ")";
}

}  // namespace proflint::kineto

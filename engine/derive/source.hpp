// engine/derive/source.hpp — source and module attribution: which line of the user's Python code,
// and which nn.Module, each op (and each API call outside any op) comes from.
//
// Two records of the Python side exist (schema/0008_source.sql):
//   python_function ranges  with_stack=True: one range per Python call, named 'file.py(LINE): function',
//                           '<built-in method item of Tensor object at 0x…>' for C functions, and
//                           'nn.Module: Name_N' for a module's forward (with_modules=True). They nest
//                           with the ops on the same thread, so an op's frames are its python_function
//                           ancestors.
//   'Call stack' argument   older profilers: 'file.py(LINE): function' frames separated by ';' on each
//                           op. The order differs by version (innermost first in the legacy profiler,
//                           outermost first in later Kineto builds); call_stack_frames decides from the
//                           frames themselves.
// The innermost frame that is not library code is the op's site. Library code: pseudo-files
// ('<string>', '<frozen os>', built-ins), files under site-packages/dist-packages or a Python
// installation's lib/pythonX.Y, and files whose top-level package is in the skip list (the standard
// library's modules, torch and its companions by default; `[source] skip/keep` in proflint.toml).
// Profilers from PyTorch 2 write file names relative to their sys.path entry ('torch/nn/…',
// 'threading.py', 'tqdm/std.py'), so the top-level package is all that tells library from user code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace proflint {

struct TraceData;

struct PyFrame {
  std::string file;
  int64_t line = 0;
  std::string function;
};

// 'file.py(LINE): function' -> frame; nullopt for anything else ('<built-in method …>', 'nn.Module: X').
std::optional<PyFrame> parse_py_frame(std::string_view text);

// The module name of an 'nn.Module: Name_N' frame ('Name_N'), or nullopt.
std::optional<std::string_view> module_frame_name(std::string_view text);

// Which frames are library code (see the file comment).
class FrameFilter {
 public:
  // `skip`: top-level packages added to the built-in list; `keep`: ones removed from it.
  FrameFilter(const std::vector<std::string>& skip = {}, const std::vector<std::string>& keep = {});
  bool is_library(std::string_view file) const;
  // The built-in skip list (standard library modules, torch and its companion packages).
  static const std::vector<std::string_view>& builtin_skip();

 private:
  std::vector<std::string> skip_;  // sorted
};

// The frames of a 'Call stack' argument, innermost first. Empty pieces are dropped. The order is
// recognised from the frames: '<module>' (a script's top level) is the outermost frame and a
// '<built-in …>' frame the innermost; without either, the legacy order (innermost first) is kept.
std::vector<std::string_view> call_stack_frames(std::string_view text);

// Derivation step: fills TraceData::sources for every op with recorded frames and every API call
// outside any op inside python_function ranges. Needs nest_ranges, build_ops and attribute_api_to_ops.
void attribute_sources(TraceData& t);

}  // namespace proflint

// engine/derive/source.cpp — source and module attribution (see source.hpp and
// docs/derivation.md, "Source and module attribution").
#include "engine/derive/source.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <charconv>
#include <tuple>
#include <unordered_map>

#include "engine/derive/correlation.hpp"
#include "engine/derive/model.hpp"

namespace proflint {

namespace {

constexpr size_t kMaxStackFrames = 64;  // frames kept in source.stack (deeper ones are cut)

// Standard library modules that appear as top-level names of recorded files, and the packages of
// the framework itself. A file 'threading.py' or 'multiprocessing/spawn.py' is library code.
constexpr std::string_view kBuiltinSkip[] = {
    "__future__", "_collections_abc", "_weakrefset", "abc", "argparse", "ast", "asyncio", "base64", "bdb", "bisect",
    "bz2", "cProfile", "codecs", "collections", "concurrent", "contextlib", "contextvars", "copy", "copyreg", "csv",
    "ctypes", "dataclasses", "datetime", "decimal", "difflib", "dis", "email", "encodings", "enum", "fnmatch",
    "fractions", "functools", "functorch", "genericpath", "gettext", "glob", "gzip", "hashlib", "heapq", "hmac",
    "html", "http", "importlib", "inspect", "io", "ipykernel", "IPython", "itertools", "json", "linecache", "locale",
    "logging", "lzma", "mmap", "multiprocessing", "numbers", "numpy", "opcode", "operator", "os", "pathlib", "pdb",
    "pickle", "pkgutil", "platform", "posixpath", "pprint", "profile", "queue", "random", "re", "reprlib", "runpy",
    "selectors", "shutil", "signal", "site", "socket", "sre_compile", "sre_parse", "string", "subprocess",
    "tempfile", "textwrap", "threading", "timeit", "token", "tokenize", "torch", "torchaudio", "torchvision",
    "traceback", "triton", "typing", "unittest", "warnings", "weakref"};

// 'torch/nn/modules/linear.py' -> 'torch'; 'threading.py' -> 'threading'; '/abs/x/train.py' -> ''
// (absolute paths name no package: only the site-packages and lib/python tests apply to them).
std::string_view top_level_package(std::string_view file) {
  if (file.empty() || file.front() == '/' || (file.size() > 1 && file[1] == ':')) return {};
  size_t slash = file.find_first_of("/\\");
  std::string_view head = file.substr(0, slash);
  if (slash == std::string_view::npos && head.size() > 3 && head.substr(head.size() - 3) == ".py")
    head.remove_suffix(3);
  return head;
}

enum class FrameKind : uint8_t { user, library, module, other };

// A position in the per-range and per-op lists below (-1: none). 32 bits: these lists, one entry
// per range or op, are held at derivation's peak (half the memory of int64 entries), and 2^31
// ranges would take hundreds of GiB before derivation started.
using Pos = int32_t;

struct FrameInfo {
  FrameKind kind = FrameKind::other;
  int64_t file_id = kNone, line = kNone, function_id = kNone;
  std::string_view module;  // FrameKind::module: 'Name_N' (a view into the string table)
};

// Op rows first, then range rows, then API rows, each by position (a stable store whatever order the
// sweeps found them in).
void sort_sources(std::vector<SourceFact>& rows) {
  auto rank = [](const SourceFact& s) { return s.op >= 0 ? 0 : s.range >= 0 ? 1 : 2; };
  std::sort(rows.begin(), rows.end(), [&](const SourceFact& x, const SourceFact& y) {
    if (rank(x) != rank(y)) return rank(x) < rank(y);
    return std::tie(x.op, x.range, x.api) < std::tie(y.op, y.range, y.api);
  });
}

}  // namespace

std::optional<PyFrame> parse_py_frame(std::string_view text) {
  // 'file(LINE): function' — the file may itself hold parentheses ('<frozen os>(709): getenv').
  size_t sep = text.find("): ");
  while (sep != std::string_view::npos) {
    size_t open = text.rfind('(', sep);
    if (open != std::string_view::npos && open > 0 && open + 1 < sep) {
      std::string_view digits = text.substr(open + 1, sep - open - 1);
      int64_t line = 0;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), line);
      if (ec == std::errc() && end == digits.data() + digits.size() && line >= 0) {
        std::string_view fn = text.substr(sep + 3);
        while (!fn.empty() && (fn.back() == ' ' || fn.back() == ';')) fn.remove_suffix(1);
        if (fn.empty()) return std::nullopt;
        return PyFrame{std::string(text.substr(0, open)), line, std::string(fn)};
      }
    }
    sep = text.find("): ", sep + 1);
  }
  return std::nullopt;
}

std::optional<std::string_view> module_frame_name(std::string_view text) {
  constexpr std::string_view prefix = "nn.Module: ";
  if (text.size() <= prefix.size() || text.substr(0, prefix.size()) != prefix) return std::nullopt;
  return text.substr(prefix.size());
}

FrameFilter::FrameFilter(const std::vector<std::string>& skip, const std::vector<std::string>& keep) {
  for (auto s : kBuiltinSkip)
    if (std::find(keep.begin(), keep.end(), s) == keep.end()) skip_.emplace_back(s);
  for (const auto& s : skip) skip_.push_back(s);
  std::sort(skip_.begin(), skip_.end());
  skip_.erase(std::unique(skip_.begin(), skip_.end()), skip_.end());
}

const std::vector<std::string_view>& FrameFilter::builtin_skip() {
  static const std::vector<std::string_view> list(std::begin(kBuiltinSkip), std::end(kBuiltinSkip));
  return list;
}

bool FrameFilter::is_library(std::string_view file) const {
  if (file.empty() || file.front() == '<') return true;  // '<string>', '<frozen os>', '<built-in …>'
  auto listed = [&](std::string_view pkg) {
    return !pkg.empty() && std::binary_search(skip_.begin(), skip_.end(), pkg,
                                              [](std::string_view a, std::string_view b) { return a < b; });
  };
  // By path component: an installed package (site-packages, dist-packages) or a Python
  // installation's standard library (lib/pythonX.Y), absolute or relative ('site-packages/torch/…').
  std::string_view prev;
  for (size_t pos = 0; pos <= file.size();) {
    size_t end = file.find_first_of("/\\", pos);
    if (end == std::string_view::npos) end = file.size();
    std::string_view part = file.substr(pos, end - pos);
    if (end < file.size()) {  // directories only
      if (part == "site-packages" || part == "dist-packages") return true;
      if ((prev == "lib" || prev == "lib64") && part.substr(0, 6) == "python") return true;
    }
    prev = part;
    pos = end + 1;
  }
  return listed(top_level_package(file));
}

std::vector<std::string_view> call_stack_frames(std::string_view text) {
  std::vector<std::string_view> frames;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(';', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view f = text.substr(pos, end - pos);
    while (!f.empty() && f.front() == ' ') f.remove_prefix(1);
    while (!f.empty() && f.back() == ' ') f.remove_suffix(1);
    if (!f.empty()) frames.push_back(f);
    pos = end + 1;
  }
  if (frames.size() < 2) return frames;
  auto is_top = [](std::string_view f) { return f.size() >= 8 && f.substr(f.size() - 8) == "<module>"; };
  auto is_builtin = [](std::string_view f) { return f.substr(0, 9) == "<built-in"; };
  bool outermost_first = is_top(frames.front()) || is_builtin(frames.back());
  bool innermost_first = is_top(frames.back()) || is_builtin(frames.front());
  if (outermost_first && !innermost_first) std::reverse(frames.begin(), frames.end());
  return frames;
}

namespace {

// Backward ops run on the autograd engine's thread, where no Python frame is recorded. A backward
// op carries the autograd sequence number of the forward op that recorded its node; the forward
// op with that number (the last outermost one: aten::conv2d, not the aten::convolution inside it
// that shares the number) was made by user code with frames. A backward op without a user frame of its
// own gets that op's place (origin 'forward_op'), and so do the ops under it (the aten::mm a
// backward node launches its kernels from). Sequence numbers count per thread, so a number found
// as forward op on several threads is taken from a thread other than the backward op's own, and
// left alone if still ambiguous; the forward op must have started before the backward op.
void attribute_backward_ops(TraceData& t, std::vector<Pos>& src_at) {
  const auto& ranges = t.ranges;
  auto range_of = [&](size_t o) -> const RangeRec* {
    int64_t r = t.ops[o].range;
    return r >= 0 && static_cast<size_t>(r) < ranges.size() ? &ranges[static_cast<size_t>(r)] : nullptr;
  };
  auto is_backward = [&](const RangeRec& r) { return r.backward_name; };
  // Forward ops by (pid, sequence number), in op order: one sorted list (a map of lists held a
  // node and a list per number, ~20 MiB on the x20 tiled trace at derivation's peak).
  struct ForwardOp {
    int64_t pid, sequence_number;
    size_t op;
    auto key() const { return std::tie(pid, sequence_number, op); }
  };
  std::vector<ForwardOp> forward;
  bool any_backward = false;
  for (size_t o = 0; o < t.ops.size(); ++o) {
    const RangeRec* r = range_of(o);
    if (!r) continue;
    const int64_t seq = t.args(*r).sequence_number;
    if (seq == kNone || seq < 0) continue;
    if (is_backward(*r)) any_backward = true;
    else forward.push_back({r->pid, seq, o});
  }
  if (!any_backward || forward.empty()) return;
  std::sort(forward.begin(), forward.end(), [](const ForwardOp& x, const ForwardOp& y) { return x.key() < y.key(); });

  auto has_place = [&](size_t o) {
    int64_t k = src_at[o];
    return k >= 0 && (t.sources[static_cast<size_t>(k)].file_id != kNone || t.sources[static_cast<size_t>(k)].module_path_id != kNone);
  };
  auto forward_of = [&](size_t b) -> int64_t {
    const RangeRec& br = *range_of(b);
    const ForwardOp key{br.pid, t.args(br).sequence_number, 0};
    // Not a structured binding: the lambdas below capture the bounds, which clang 14 (the fuzz
    // build's compiler) does not allow for structured bindings.
    const auto candidates = std::equal_range(forward.begin(), forward.end(), key,
                                             [](const ForwardOp& x, const ForwardOp& y) {
                                               return std::tie(x.pid, x.sequence_number) < std::tie(y.pid, y.sequence_number);
                                             });
    const auto first = candidates.first, last = candidates.second;
    if (first == last) return -1;
    auto inside_another = [&](size_t f) {
      for (int64_t p = t.ops[f].parent, guard = 0; p >= 0 && guard < 4096; p = t.ops[static_cast<size_t>(p)].parent, ++guard)
        if (std::any_of(first, last, [&](const ForwardOp& c) { return c.op == static_cast<size_t>(p); })) return true;
      return false;
    };
    // Per thread, the last outermost candidate that started before the backward op. An op records
    // the number its thread's next autograd node will get, so ops that made no node before it
    // (aten::broadcast_tensors before aten::mse_loss) carry it too; the node's maker is the last.
    std::map<int64_t, size_t> best;  // tid -> op
    for (auto c = first; c != last; ++c) {
      size_t f = c->op;
      const RangeRec& fop = *range_of(f);  // forward holds ops with ranges only
      if (fop.start > br.start) continue;
      if (inside_another(f)) continue;
      auto [at, fresh] = best.emplace(fop.tid, f);
      if (!fresh && fop.start >= range_of(at->second)->start) at->second = f;
    }
    if (best.size() > 1) best.erase(br.tid);
    if (best.size() != 1) return -1;
    return static_cast<int64_t>(best.begin()->second);
  };

  std::vector<Pos> forward_op(t.ops.size(), -1);  // op -> the forward op whose place it took
  for (size_t o = 0; o < t.ops.size(); ++o) {
    if (has_place(o)) continue;
    const RangeRec* r = range_of(o);
    int64_t f = -1;
    if (r && is_backward(*r)) {
      const int64_t seq = t.args(*r).sequence_number;
      if (seq != kNone && seq >= 0) f = forward_of(o);
    }
    if (f < 0 || !has_place(static_cast<size_t>(f))) {
      f = -1;
      int64_t p = t.ops[o].parent;
      if (p >= 0 && static_cast<size_t>(p) < o) f = forward_op[static_cast<size_t>(p)];
    }
    if (f < 0) continue;
    forward_op[o] = static_cast<Pos>(f);
    SourceFact s = t.sources[static_cast<size_t>(src_at[static_cast<size_t>(f)])];
    s.op = static_cast<int64_t>(o);
    s.api = s.range = -1;
    s.origin = "forward_op";
    s.forward_op = f;
    if (src_at[o] >= 0) {
      t.sources[static_cast<size_t>(src_at[o])] = s;
    } else {
      src_at[o] = static_cast<Pos>(t.sources.size());
      t.sources.push_back(s);
    }
  }
}

// The most rows attribute_sources can give: one per op (attribute_backward_ops replaces an op's
// row or adds its only one), one per DataLoader fetch range and, with Python frames, one per API
// call outside any op. Reserved up front: grown by doubling, the vector (430k rows of 88 bytes on
// the x20 tiled trace) was copied at each step, the old and new blocks both resident.
size_t source_rows_bound(const TraceData& t, bool any_python) {
  size_t bound = t.ops.size();
  for (const auto& r : t.ranges) bound += r.marker == MarkerKind::dataloader ? 1 : 0;
  if (any_python)
    for (const auto& a : t.apis) bound += a.op < 0 ? 1 : 0;
  return bound;
}

}  // namespace

void attribute_sources(TraceData& t) {
  t.sources.clear();
  const auto& ranges = t.ranges;
  const size_t n = ranges.size();
  bool any_python = false, any_stack = false;
  for (const auto& r : ranges) {
    any_python = any_python || r.kind == RangeKind::python_function;
    const RangeArgs& f = t.args(r);
    any_stack = any_stack || f.call_stack_id != kNone || f.module_id != kNone;
  }
  if (!any_python && !any_stack) return;
  std::vector<std::string> skip, keep;
  if (t.options) {
    skip = t.options->source_skip;
    keep = t.options->source_keep;
  }
  const FrameFilter filter(skip, keep);

  std::unordered_map<int64_t, FrameInfo> frame_of_name;  // python_function and call-stack frame texts
  auto frame_info = [&](std::string_view text, int64_t text_id) -> const FrameInfo& {
    auto it = frame_of_name.find(text_id);
    if (it != frame_of_name.end()) return it->second;
    FrameInfo info;
    if (auto m = module_frame_name(text)) {
      info.kind = FrameKind::module;
      info.module = *m;
    } else if (auto f = parse_py_frame(text)) {
      info.kind = filter.is_library(f->file) ? FrameKind::library : FrameKind::user;
      info.file_id = t.intern(f->file);
      info.line = f->line;
      info.function_id = t.intern(f->function);
    }
    return frame_of_name.emplace(text_id, info).first->second;
  };

  // Innermost python_function range, user frame and nn.Module range at or above each range.
  // Ranges are sorted so that a parent precedes its children.
  std::vector<Pos> py(n, -1), user(n, -1), module(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const auto& r = ranges[i];
    if (r.parent >= 0) {
      auto p = static_cast<size_t>(r.parent);
      py[i] = py[p];
      user[i] = user[p];
      module[i] = module[p];
    }
    if (r.kind != RangeKind::python_function) continue;
    py[i] = static_cast<Pos>(i);
    const FrameInfo& f = frame_info(t.text(r.name_id), r.name_id);
    if (f.kind == FrameKind::user) user[i] = static_cast<Pos>(i);
    if (f.kind == FrameKind::module) module[i] = static_cast<Pos>(i);
  }

  std::unordered_map<int64_t, int64_t> module_path_of;  // module range -> string id of its path
  auto module_path = [&](int64_t m) -> int64_t {
    if (m < 0) return kNone;
    // Collect the chain up to a range whose path is known, then fill downwards.
    std::vector<int64_t> chain;
    int64_t known = kNone;
    for (int64_t k = m; k >= 0;) {
      if (auto it = module_path_of.find(k); it != module_path_of.end()) {
        known = it->second;
        break;
      }
      chain.push_back(k);
      int64_t parent = ranges[static_cast<size_t>(k)].parent;
      k = parent >= 0 ? module[static_cast<size_t>(parent)] : -1;
    }
    std::string path = known == kNone ? std::string() : t.text(known);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const auto& r = ranges[static_cast<size_t>(*it)];
      const FrameInfo& f = frame_info(t.text(r.name_id), r.name_id);
      if (!path.empty()) path += '/';
      path += f.module;
      known = t.intern(path);
      module_path_of.emplace(*it, known);
    }
    return known;
  };

  std::unordered_map<int64_t, int64_t> stack_of;  // innermost python range -> string id of its stack
  auto python_stack = [&](int64_t inner) -> int64_t {
    if (auto it = stack_of.find(inner); it != stack_of.end()) return it->second;
    std::string s;
    size_t frames = 0;
    for (int64_t k = inner; k >= 0 && frames < kMaxStackFrames; ++frames) {
      const auto& r = ranges[static_cast<size_t>(k)];
      if (!s.empty()) s += ';';
      s += t.text(r.name_id);
      k = r.parent >= 0 ? py[static_cast<size_t>(r.parent)] : -1;
    }
    int64_t id = t.intern(s);
    stack_of.emplace(inner, id);
    return id;
  };

  struct StackSite {
    int64_t file_id = kNone, line = kNone, function_id = kNone, stack_id = kNone;
  };
  std::unordered_map<int64_t, StackSite> site_of_call_stack;  // call_stack_id -> site
  auto call_stack_site = [&](int64_t call_stack_id) -> const StackSite& {
    if (auto it = site_of_call_stack.find(call_stack_id); it != site_of_call_stack.end()) return it->second;
    StackSite site;
    auto frames = call_stack_frames(t.text(call_stack_id));
    std::string s;
    for (size_t k = 0; k < frames.size() && k < kMaxStackFrames; ++k) {
      if (k) s += ';';
      s += frames[k];
    }
    if (!s.empty()) site.stack_id = t.intern(s);
    for (auto f : frames) {
      auto parsed = parse_py_frame(f);
      if (!parsed || filter.is_library(parsed->file)) continue;
      site.file_id = t.intern(parsed->file);
      site.line = parsed->line;
      site.function_id = t.intern(parsed->function);
      break;
    }
    return site_of_call_stack.emplace(call_stack_id, site).first->second;
  };

  auto from_python = [&](size_t i, SourceFact& s) {
    s.origin = "python_function";
    if (int64_t u = user[i]; u >= 0) {
      const auto& r = ranges[static_cast<size_t>(u)];
      const FrameInfo& f = frame_info(t.text(r.name_id), r.name_id);
      s.file_id = f.file_id;
      s.line = f.line;
      s.function_id = f.function_id;
    }
    s.module_path_id = module_path(module[i]);
    s.stack_id = python_stack(py[i]);
  };

  // Ops: the python_function frames around them, else the nearest 'Call stack' / 'Module Hierarchy'.
  std::vector<Pos> stack_range(n, -1), hierarchy_range(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const auto& r = ranges[i];
    if (r.parent >= 0) {
      stack_range[i] = stack_range[static_cast<size_t>(r.parent)];
      hierarchy_range[i] = hierarchy_range[static_cast<size_t>(r.parent)];
    }
    const RangeArgs& f = t.args(r);
    if (f.call_stack_id != kNone && !t.text(f.call_stack_id).empty()) stack_range[i] = static_cast<Pos>(i);
    if (f.module_id != kNone && !t.text(f.module_id).empty()) hierarchy_range[i] = static_cast<Pos>(i);
  }
  t.sources.reserve(source_rows_bound(t, any_python));
  std::vector<Pos> src_at(t.ops.size(), -1);  // op -> its row in t.sources
  for (size_t o = 0; o < t.ops.size(); ++o) {
    int64_t ri = t.ops[o].range;
    if (ri < 0) continue;
    auto i = static_cast<size_t>(ri);
    SourceFact s;
    s.op = static_cast<int64_t>(o);
    if (py[i] >= 0) {
      from_python(i, s);
    } else if (stack_range[i] >= 0 || hierarchy_range[i] >= 0) {
      s.origin = "call_stack";
      if (stack_range[i] >= 0) {
        const StackSite& site = call_stack_site(t.args(ranges[static_cast<size_t>(stack_range[i])]).call_stack_id);
        s.file_id = site.file_id;
        s.line = site.line;
        s.function_id = site.function_id;
        s.stack_id = site.stack_id;
      }
      if (hierarchy_range[i] >= 0) s.module_path_id = t.args(ranges[static_cast<size_t>(hierarchy_range[i])]).module_id;
    } else {
      continue;
    }
    src_at[o] = static_cast<Pos>(t.sources.size());
    t.sources.push_back(s);
  }
  attribute_backward_ops(t, src_at);

  // DataLoader fetch annotations (markers, not ops): the frames around them; without Python
  // frames, the call stack of the first op inside the fetch (the loop line that asked for the batch
  // is the innermost user frame there, below the DataLoader's and dataset's library frames).
  for (size_t i = 0; i < n; ++i) {
    if (ranges[i].marker != MarkerKind::dataloader) continue;
    SourceFact s;
    s.range = ranges[i].id;
    if (py[i] >= 0) {
      from_python(i, s);
    } else {
      // Descendants follow their ancestor in the sorted ranges, on the same thread.
      size_t j = i + 1;
      while (j < n && ranges[j].pid == ranges[i].pid && ranges[j].tid == ranges[i].tid &&
             ranges[j].start < ranges[i].end && stack_range[j] < 0)
        ++j;
      if (j >= n || ranges[j].pid != ranges[i].pid || ranges[j].tid != ranges[i].tid || ranges[j].start >= ranges[i].end)
        continue;
      const StackSite& site = call_stack_site(t.args(ranges[static_cast<size_t>(stack_range[j])]).call_stack_id);
      if (site.file_id == kNone) continue;
      s.origin = "call_stack";
      s.file_id = site.file_id;
      s.line = site.line;
      s.function_id = site.function_id;
      s.stack_id = site.stack_id;
    }
    t.sources.push_back(s);
  }

  // API calls outside any op: the python_function frames open on their thread when they started.
  if (!any_python) {
    sort_sources(t.sources);
    return;
  }
  size_t ri = 0;
  std::vector<size_t> open;  // host ranges open at the current time, outermost first
  int64_t cur_pid = kNone, cur_tid = kNone;
  bool first = true;
  for (const auto& a : t.apis) {
    if (first || a.pid != cur_pid || a.tid != cur_tid) {
      first = false;
      cur_pid = a.pid;
      cur_tid = a.tid;
      open.clear();
      ri = first_host_range(ranges, cur_pid, cur_tid);
    }
    for (; ri < n && ranges[ri].kind != RangeKind::gpu_user_annotation && ranges[ri].pid == cur_pid &&
           ranges[ri].tid == cur_tid && ranges[ri].start <= a.start;
         ++ri) {
      if (py[ri] < 0) continue;  // only ranges with Python frames at or above them can help
      while (!open.empty() && ranges[open.back()].end <= ranges[ri].start) open.pop_back();
      open.push_back(ri);
    }
    if (a.op >= 0) continue;
    while (!open.empty() && ranges[open.back()].end <= a.start) open.pop_back();
    for (size_t k = open.size(); k-- > 0;) {
      if (ranges[open[k]].end <= a.start) continue;
      SourceFact s;
      s.api = a.id;
      from_python(open[k], s);
      t.sources.push_back(s);
      break;
    }
  }
  sort_sources(t.sources);
}

}  // namespace proflint

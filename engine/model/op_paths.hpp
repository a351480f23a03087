// engine/model/op_paths.hpp — ops' DLProf-style paths ("/ProfilerStep#3/aten::conv2d(2)/...") kept
// as a tree of labels and spelled only when written.
//
// A path repeats its ancestors' labels, so one text per op held ~75-80 bytes per op through
// derivation (the x20 tiled trace: 35 MB, the 10^6-row nsys export: 40 MB), at the point where a
// run holds the most memory. A node is 12 bytes: its parent, its label (an index into the tree's
// own copies of its distinct labels) and its place among same-label siblings.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>


namespace proflint {

// Path labels and paths are bounded, so one long NVTX name is not copied into every op beneath
// it (issue 20: a 1 MB name cost 781 MB). A label is the name when it has at most
// kMaxPathLabelBytes bytes, else its first bytes + "…#" + a 16-hex-digit digest of the whole name
// (derivation makes it: engine/derive/ops.cpp); a path longer than kMaxPathBytes restarts from
// "/…#" + a digest of its parent's path. Either way an op's path has at most kMaxPathBytes +
// kMaxPathLabelBytes + a few bytes.
inline constexpr size_t kMaxPathLabelBytes = 256;
inline constexpr size_t kMaxPathBytes = 4096;

// Texts kept one after the other in large blocks that never move: views into them stay valid for
// the arena's life (or until clear()), and moving the arena keeps them valid. For many short
// texts made once without a string object and a heap block each.
class TextArena {
 public:
  TextArena() = default;
  TextArena(const TextArena&) = delete;  // views point into this arena's blocks
  TextArena& operator=(const TextArena&) = delete;
  TextArena(TextArena&&) noexcept = default;
  TextArena& operator=(TextArena&&) noexcept = default;

  std::string_view add(std::string_view text) {
    if (text.empty()) return std::string_view("", 0);
    if (text.size() > room_) {
      size_t size = std::max(kBlockBytes, text.size());
      blocks_.push_back(std::make_unique<char[]>(size));
      if (blocks_.size() == 1) first_size_ = size;
      next_ = blocks_.back().get();
      room_ = size;
    }
    std::memcpy(next_, text.data(), text.size());
    std::string_view kept(next_, text.size());
    next_ += text.size();
    room_ -= text.size();
    return kept;
  }
  // Forgets every text (their views become invalid) and keeps the first block for the next ones.
  void clear() {
    if (blocks_.empty()) return;
    blocks_.resize(1);
    next_ = blocks_.front().get();
    room_ = first_size_;
  }

 private:
  static constexpr size_t kBlockBytes = size_t{1} << 20;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t first_size_ = 0;
  char* next_ = nullptr;
  size_t room_ = 0;
};

// A 16-hex-digit FNV-1a digest, so that a shortened label or path stays distinct from others.
std::string path_digest(std::string_view text);

class PathTree {
 public:
  static constexpr int32_t kTop = -1;  // the parent of top-level nodes (the empty root path)

  // The label `text` as the tree keeps it: each distinct text is copied once into the tree, so a
  // path does not depend on where its labels came from (the model's texts can go before the paths
  // are spelled: ModelWrite gives them back as soon as they are in the store).
  int32_t label(std::string_view text) {
    if (auto it = label_ids_.find(text); it != label_ids_.end()) return it->second;
    std::string_view kept = texts_.add(text);
    auto id = static_cast<int32_t>(labels_.size());
    labels_.push_back(kept);
    label_ids_.emplace(kept, id);
    return id;
  }
  // A node below `parent` labelled `label` (label()), the `count`-th child of `parent` with that
  // label (spelled "label(count)" from the second on).
  int32_t add(int32_t parent, int32_t label, int32_t count) {
    nodes_.push_back({parent, count, label});
    return static_cast<int32_t>(nodes_.size() - 1);
  }
  // A top-level node spelled "/" + text whatever its length (unassociated ops).
  int32_t add_verbatim(std::string_view text) { return add(kTop, label(text), kVerbatim); }
  size_t size() const { return nodes_.size(); }
  // Room for `n` nodes: one vector of the right size instead of doubling (and copying) its way
  // there while derivation holds the most memory.
  void reserve(size_t n) { nodes_.reserve(n); }

  // Spells paths, reusing the texts of the last path's ancestors: spelling the ops in their order
  // (each op after its ancestors) costs one join per op. The view is valid until the next call.
  class Speller {
   public:
    explicit Speller(const PathTree& tree) : tree_(tree) {}
    std::string_view operator()(int32_t node);

   private:
    const PathTree& tree_;
    std::vector<int32_t> chain_;       // the last path's nodes, top-level first
    std::vector<std::string> texts_;   // their spellings
    std::vector<int32_t> pending_;     // scratch: nodes below the reused part, deepest first
  };

 private:
  static constexpr int32_t kVerbatim = 0;
  // 12 bytes (24 with the label's view in it): a path-kind range of every trace has one.
  struct Node {
    int32_t parent;
    int32_t count;  // kVerbatim: "/" + label, no bounds
    int32_t label;  // labels_
  };
  std::vector<Node> nodes_;
  std::vector<std::string_view> labels_;  // views of texts_
  std::unordered_map<std::string_view, int32_t> label_ids_;
  TextArena texts_;
};

}  // namespace proflint

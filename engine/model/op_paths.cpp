// engine/model/op_paths.cpp — see op_paths.hpp.
#include "engine/model/op_paths.hpp"

#include <algorithm>

namespace proflint {

std::string path_digest(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  static const char* hex = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<size_t>(i)] = hex[h & 15];
  return out;
}

std::string_view PathTree::Speller::operator()(int32_t node) {
  // Up from `node` to the deepest node of the last chain that is its ancestor (or the top).
  pending_.clear();
  size_t keep = 0;
  for (int32_t n = node; n != kTop; n = tree_.nodes_[static_cast<size_t>(n)].parent) {
    auto at = std::find(chain_.rbegin(), chain_.rend(), n);
    if (at != chain_.rend()) {
      keep = static_cast<size_t>(chain_.rend() - at);
      break;
    }
    pending_.push_back(n);
  }
  chain_.resize(keep);
  if (texts_.size() < keep + pending_.size()) texts_.resize(keep + pending_.size());
  for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) {
    const Node& n = tree_.nodes_[static_cast<size_t>(*it)];
    std::string_view label = tree_.labels_[static_cast<size_t>(n.label)];
    static const std::string kTopPath;
    const std::string& parent = chain_.empty() ? kTopPath : texts_[chain_.size() - 1];
    std::string& text = texts_[chain_.size()];
    if (n.count == kVerbatim) {
      text.assign("/").append(label);
    } else if (parent.size() + 1 + label.size() <= kMaxPathBytes) {
      text.assign(parent).append("/").append(label);
    } else {
      text.assign("/\u2026#").append(path_digest(parent)).append("/").append(label);
    }
    if (n.count > 1) text.append("(").append(std::to_string(n.count)).append(")");
    chain_.push_back(*it);
  }
  return chain_.empty() ? std::string_view() : std::string_view(texts_[chain_.size() - 1]);
}

}  // namespace proflint

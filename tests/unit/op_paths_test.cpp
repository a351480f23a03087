// PathTree and TextArena (engine/model/op_paths.hpp): op paths spelled from the tree are the texts
// the path rule gives (parent + "/" + label, "(k)" from the second same-label sibling, a parent
// path over kMaxPathBytes replaced by "/…#" + its digest), in any order of spelling.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/model/op_paths.hpp"

namespace proflint {
namespace {

// The rule written out on whole strings, as derivation applied it before paths became a tree.
struct Reference {
  std::vector<std::string> paths;
  int32_t add(int32_t parent, const std::string& label, int32_t count) {
    const std::string& up = parent < 0 ? std::string() : paths[static_cast<size_t>(parent)];
    std::string p = up.size() + 1 + label.size() <= kMaxPathBytes ? up + "/" + label : "/\u2026#" + path_digest(up) + "/" + label;
    if (count > 1) p += "(" + std::to_string(count) + ")";
    paths.push_back(p);
    return static_cast<int32_t>(paths.size() - 1);
  }
};

TEST(PathTree, SpellsWhatTheRuleGivesInAnyOrder) {
  PathTree tree;
  Reference want;
  std::vector<std::string> labels;
  labels.reserve(4000);
  std::mt19937 random(7);
  // A random forest, deep enough that paths pass kMaxPathBytes (labels of up to 200 bytes).
  std::vector<int32_t> nodes;
  for (int i = 0; i < 3000; ++i) {
    // Mostly below the last node (long chains), sometimes anywhere or at the top.
    auto pick = random() % 10;
    int32_t parent = nodes.empty() || pick == 0 ? PathTree::kTop
                     : pick == 1                ? nodes[random() % nodes.size()]
                                                : nodes.back();
    labels.push_back("aten::op" + std::to_string(i % 13) + std::string(random() % 200, 'x'));
    auto count = static_cast<int32_t>(1 + random() % 3);
    int32_t n = tree.add(parent, tree.label(labels.back()), count);
    EXPECT_EQ(want.add(parent, labels.back(), count), n);
    nodes.push_back(n);
  }
  int32_t verbatim = tree.add_verbatim("unassociated:" + std::string(5000, 'v'));  // no bound
  want.paths.push_back("/unassociated:" + std::string(5000, 'v'));
  size_t long_paths = 0;
  PathTree::Speller spell(tree);
  for (int32_t n : nodes) {  // creation order (parents first), as the writer spells ops
    ASSERT_EQ(spell(n), want.paths[static_cast<size_t>(n)]) << n;
    long_paths += want.paths[static_cast<size_t>(n)].find("/\u2026#") == 0;
  }
  EXPECT_GT(long_paths, 10u);  // the digest rule was exercised
  EXPECT_EQ(spell(verbatim), want.paths.back());
  std::shuffle(nodes.begin(), nodes.end(), random);  // and in any other order
  for (int32_t n : nodes) ASSERT_EQ(spell(n), want.paths[static_cast<size_t>(n)]) << n;
}

// Labels are the tree's own copies, one per distinct text: the texts they came from can go (the
// model's are given back before the ops are written), and moving the tree keeps them.
TEST(PathTree, KeepsItsOwnLabelsOncePerTextAndMovesWithThem) {
  PathTree tree;
  auto step = std::make_unique<std::string>("ProfilerStep#1");
  auto mm = std::make_unique<std::string>("aten::mm");
  int32_t step_label = tree.label(*step);
  int32_t mm_label = tree.label(*mm);
  EXPECT_EQ(tree.label(std::string("aten::mm")), mm_label);  // an equal text: the same label
  EXPECT_NE(step_label, mm_label);
  int32_t top = tree.add(PathTree::kTop, step_label, 1);
  int32_t first = tree.add(top, mm_label, 1);
  int32_t second = tree.add(top, mm_label, 2);
  step.reset();
  mm.reset();
  PathTree moved = std::move(tree);
  PathTree::Speller spell(moved);
  EXPECT_EQ(spell(second), "/ProfilerStep#1/aten::mm(2)");
  EXPECT_EQ(spell(first), "/ProfilerStep#1/aten::mm");
  EXPECT_EQ(spell(top), "/ProfilerStep#1");
}

TEST(TextArena, ViewsStayValidAcrossBlocksAndMovesUntilCleared) {
  TextArena arena;
  std::vector<std::string> texts;
  std::vector<std::string_view> views;
  for (int i = 0; i < 20000; ++i) {
    texts.push_back("/ProfilerStep#" + std::to_string(i % 7) + "/aten::op" + std::string(static_cast<size_t>(i % 97), 'x'));
    views.push_back(arena.add(texts.back()));
  }
  texts.push_back(std::string((size_t{1} << 20) + 5, 'L'));  // larger than a block
  views.push_back(arena.add(texts.back()));
  texts.push_back("after the large one");
  views.push_back(arena.add(texts.back()));
  TextArena moved = std::move(arena);
  for (size_t i = 0; i < texts.size(); ++i) ASSERT_EQ(views[i], texts[i]) << i;
  std::string_view empty = moved.add("");
  EXPECT_TRUE(empty.empty());
  EXPECT_NE(empty.data(), nullptr);  // a text '' in the store, not NULL
  moved.clear();
  std::string_view again = moved.add("reused");
  EXPECT_EQ(again, "reused");
  EXPECT_EQ(again.data(), views[0].data());  // the first block is kept and reused
}

}  // namespace
}  // namespace proflint

// tests/unit/parallel_import_test.cpp — several files imported and derived at the same time, each
// into a fact model of its own, then written in file order, give exactly the store of a one-by-one
// load.
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/common/error.hpp"
#include "engine/pipeline/load.hpp"
#include "tests/support/realdata.hpp"
#include "tests/support/store_dump.hpp"

using namespace proflint;
namespace fs = std::filesystem;

namespace {

// Every row of every table, in row-id order: two stores print the same text only when they hold
// the same rows under the same ids (trace ids, row ids and string ids included).
std::string dump(Store& store) { return proflint::testing::dump_tables(store.db()); }

Store load(const std::vector<std::string>& paths, unsigned jobs) {
  LoadOptions options;
  options.jobs = jobs;
  return load_inputs(paths, options);
}

std::string fixture(const char* name) { return (proflint::testing::source_dir() / "fixtures" / name).string(); }

}  // namespace

TEST(ParallelImport, SameStoreAsOneByOne) {
  // Kineto (plain and gzip) and nsys files, sharing many names (string ids must be reused).
  std::vector<std::string> paths = {fixture("sample_train.json.gz"),     fixture("ddp2_rank0.json.gz"),
                                    fixture("sample_train.nsys.sqlite"), fixture("ddp2_rank1_slow30.json.gz"),
                                    fixture("legacy_bare_array.json"),   fixture("sample_amp.json.gz")};
  Store one = load(paths, 1);
  std::string expected = dump(one);
  EXPECT_EQ(one.db().execAndGet("SELECT count(*) FROM trace").getInt(), 6);
  EXPECT_GT(one.db().execAndGet("SELECT count(*) FROM kernel").getInt(), 1000);
  for (unsigned jobs : {2u, 3u, 6u}) {
    Store many = load(paths, jobs);
    EXPECT_TRUE(dump(many) == expected) << "store differs with " << jobs << " jobs";
  }
}

TEST(ParallelImport, RealRanksGiveTheSameStore) {
  REALDATA_OR_SKIP(rank0, "kineto/hta_sampled_rank-0.json.gz");
  REALDATA_OR_SKIP(rank1, "kineto/hta_sampled_rank-1.json.gz");
  REALDATA_OR_SKIP(nsys, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  Store one = load({rank0, rank1, nsys}, 1);
  Store many = load({rank0, rank1, nsys}, 3);
  EXPECT_TRUE(dump(many) == dump(one));
}

TEST(ParallelImport, FirstFailureInFileOrderIsReported) {
  auto dir = fs::path(::testing::TempDir()) / ("proflint_parallel_import_" + std::to_string(getpid()));
  fs::create_directories(dir);
  auto truncated = (dir / "truncated.json").string();
  std::ofstream(truncated) << R"({"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur")";
  auto missing = (dir / "missing.json").string();
  std::vector<std::string> paths = {fixture("sample_train.json.gz"), missing, truncated, fixture("sample_amp.json.gz")};
  std::string sequential, parallel;
  try {
    load(paths, 1);
  } catch (const Error& e) {
    sequential = e.what();
  }
  try {
    load(paths, 4);
  } catch (const Error& e) {
    parallel = e.what();
  }
  EXPECT_NE(sequential.find("missing.json"), std::string::npos) << sequential;
  EXPECT_EQ(parallel, sequential);
  // The first file failing, the later ones still imported on other threads: same error, no hang.
  std::string first_bad;
  try {
    load({truncated, fixture("sample_train.json.gz"), fixture("sample_amp.json.gz")}, 3);
  } catch (const Error& e) {
    first_bad = e.what();
  }
  EXPECT_NE(first_bad.find("truncated.json"), std::string::npos) << first_bad;
  fs::remove_all(dir);
}

// A shared (memdb) store holds ~2 GiB at most; a run that fills it is loaded again into a
// temporary file, with the same result, which several connections can still read.
// PROFLINT_SHARED_STORE_LIMIT brings the limit down to the size of a fixture.
TEST(SharedStoreLimit, FullSharedStoreIsLoadedAgainIntoATempFileWithTheSameResult) {
  std::vector<std::string> paths = {fixture("sample_train.json.gz"), fixture("sample_amp.json.gz")};
  Store normal = load(paths, 1);
  EXPECT_NO_THROW(normal.open_reader());
  EXPECT_TRUE(normal.temp_path().empty());
  std::string expected = dump(normal);
  // Above the empty store (67 tables and indexes of 16 KiB pages: 1.1 MB), below the two fixtures (~4 MB).
  ::setenv("PROFLINT_SHARED_STORE_LIMIT", "2000000", 1);
  for (unsigned jobs : {1u, 2u}) {
    Store small = load(paths, jobs);
    EXPECT_FALSE(small.temp_path().empty()) << "expected the temporary file store after the limit was hit";
    EXPECT_NO_THROW(small.open_reader());
    EXPECT_TRUE(dump(small) == expected) << jobs << " jobs";
  }
  ::unsetenv("PROFLINT_SHARED_STORE_LIMIT");
}

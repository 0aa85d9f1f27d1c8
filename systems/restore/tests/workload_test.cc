// The synthetic workloads of Table 6.4 and the trace reader.
#include "workload.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>

#include "scratch.h"

using namespace restore;

namespace {
SyntheticWorkload make(const std::string& name, uint32_t pages, uint64_t n, double read_pct = 50, uint64_t seed = 1) {
  std::vector<Phase> ph;
  std::string err;
  EXPECT_TRUE(parse_workload(name, &ph, &err)) << err;
  return SyntheticWorkload(ph, pages, n, read_pct, seed);
}
}  // namespace

TEST(Workload, XhfyPutsYPercentOnXPercent) {
  auto w = make("5hf90", 10000, 200000, 30);
  auto hot = w.hot_set(0);
  EXPECT_EQ(hot.size(), 500u);
  std::set<uint32_t> h(hot.begin(), hot.end());
  uint64_t in = 0, reads = 0;
  uint32_t p;
  Op op;
  for (int i = 0; i < 200000; i++) {
    w.next(&p, &op);
    in += h.count(p);
    reads += op == Op::kRead;
  }
  EXPECT_NEAR(in / 200000.0, 0.90, 0.005);
  EXPECT_NEAR(reads / 200000.0, 0.30, 0.005);
}

TEST(Workload, HotSetsFollowTheThesis) {
  // 10hf90 and 10hf80 share their hot pages; 5hf90's differ (L1968).
  EXPECT_EQ(make("10hf90", 10000, 10).hot_set(0), make("10hf80", 10000, 10).hot_set(0));
  auto a = make("5hf90", 10000, 10).hot_set(0), b = make("10hf90", 10000, 10).hot_set(0);
  std::vector<uint32_t> common;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
  EXPECT_LT(common.size(), 100u);  // independent random sets: ~5% of 10% overlap
}

TEST(Workload, DynamicPhasesChangeTheHotSet) {
  std::vector<Phase> ph;
  std::string err;
  ASSERT_TRUE(parse_workload("C", &ph, &err));
  EXPECT_EQ(ph.size(), 10u);
  ASSERT_TRUE(parse_workload("D", &ph, &err));
  EXPECT_EQ(ph.size(), 50u);
  ASSERT_TRUE(parse_workload("B", &ph, &err));
  ASSERT_EQ(ph.size(), 3u);
  EXPECT_EQ(ph[2].hot_pages_pct, 20);
  EXPECT_EQ(ph[2].hot_ops_pct, 80);
  auto w = make("C", 1000, 10000);
  EXPECT_NE(w.hot_set(0), w.hot_set(1));
  // Requests 0..999 go to phase 0's hot set 90% of the time, 1000..1999 to phase 1's.
  auto h0 = w.hot_set(0), h1 = w.hot_set(1);
  uint32_t p;
  Op op;
  int in0 = 0, in1 = 0;
  for (int i = 0; i < 2000; i++) {
    w.next(&p, &op);
    bool hot0 = std::binary_search(h0.begin(), h0.end(), p), hot1 = std::binary_search(h1.begin(), h1.end(), p);
    if (i < 1000)
      in0 += hot0;
    else
      in1 += hot1;
  }
  EXPECT_GT(in0, 850);
  EXPECT_GT(in1, 850);
}

TEST(Workload, SameSeedSameSequenceOtherSeedOther) {
  auto a = make("A", 1000, 5000, 50, 7), b = make("A", 1000, 5000, 50, 7), c = make("A", 1000, 5000, 50, 8);
  int same_ac = 0;
  for (int i = 0; i < 5000; i++) {
    uint32_t pa, pb, pc;
    Op oa, ob, oc;
    a.next(&pa, &oa);
    b.next(&pb, &ob);
    c.next(&pc, &oc);
    ASSERT_EQ(pa, pb);
    ASSERT_EQ(oa, ob);
    same_ac += pa == pc;
  }
  EXPECT_LT(same_ac, 500);
  a.reset();
  uint32_t p0;
  Op o0;
  a.next(&p0, &o0);
  auto fresh = make("A", 1000, 5000, 50, 7);
  uint32_t p1;
  Op o1;
  fresh.next(&p1, &o1);
  EXPECT_EQ(p0, p1);
}

TEST(Workload, ZipfIsSkewed) {
  auto w = make("zipf0.99", 10000, 100000);
  std::vector<int> count(10000);
  uint32_t p;
  Op op;
  for (int i = 0; i < 100000; i++) {
    w.next(&p, &op);
    count[p]++;
  }
  std::sort(count.rbegin(), count.rend());
  int top = 0;
  for (int i = 0; i < 100; i++) top += count[i];
  EXPECT_GT(top, 30000);  // the top 1% of pages get > 30% of the requests
}

TEST(Workload, BadNamesAreRejected) {
  std::vector<Phase> ph;
  std::string err;
  EXPECT_FALSE(parse_workload("5hf190", &ph, &err));
  EXPECT_FALSE(parse_workload("zipf1.5", &ph, &err));
  EXPECT_FALSE(parse_workload("tpcc", &ph, &err));
  EXPECT_NE(err.find("unknown workload term"), std::string::npos);
  EXPECT_FALSE(parse_workload("5hf90*0", &ph, &err));
}

TEST(Trace, ReadsPageOpCsvWithHeader) {
  const std::string path = artifact::testing::scratch_path("restore_trace") + ".csv";
  {
    std::ofstream f(path);
    f << "page,op,timestamp\n0,R,1\n3,W,2\n# comment\n3,r\n";
  }
  Trace t = read_trace(path);
  EXPECT_EQ(t.pages, 4u);
  ASSERT_EQ(t.requests->size(), 3u);
  EXPECT_EQ(t.reads, 2u);
  EXPECT_EQ((*t.requests)[1], (3u << 1) | 1u);
  {
    std::ofstream f(path);
    f << "0,R\n1,X\n";
  }
  try {
    read_trace(path);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(":2: op must be R or W"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(Trace, AHeaderOnlyByItsNamesAndNoFieldUnchecked) {
  // A first line that is not exactly the header is a request and is checked: "-1,R" is an error,
  // not a header skipped in silence; and a line with fields after the timestamp is an error.
  const std::string path = artifact::testing::scratch_path("restore_trace_bad") + ".csv";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"-1,R\n0,R\n", ":1: page must be an integer"},
      {"Page,Op\n0,R\n", ":1: page must be an integer"},
      {"# a comment\npage,op,extra\n0,R\n", ":2: page must be an integer"},
      {"page,op\n0,R,5,junk\n", ":2: expected page,op[,timestamp], got more fields"},
      {"0,R\npage,op\n", ":2: page must be an integer"},  // a header only first
  };
  for (const auto& [text, message] : cases) {
    {
      std::ofstream f(path);
      f << text;
    }
    try {
      read_trace(path);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  {
    std::ofstream f(path);
    f << "# comment first\npage,op\n0,W\n";
  }
  EXPECT_EQ(read_trace(path).requests->size(), 1u);
  std::remove(path.c_str());
}

namespace {
// The message read_trace throws for a trace file holding `text`, as a C string shows it.
std::string trace_error(const std::string& text) {
  const std::string path = artifact::testing::scratch_path("restore_trace_error") + ".csv";
  {
    std::ofstream f(path, std::ios::binary);
    f << text;
  }
  std::string message = "(accepted)";
  try {
    read_trace(path);
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  std::remove(path.c_str());
  return message;
}
}  // namespace

TEST(Trace, AFileWithoutLineBreaksIsRefusedAtItsFirstLine) {
  // 2 GiB of NUL bytes that take no room on disk: the reader held all of it (6-8 GB) before.
  const std::string path = artifact::testing::scratch_path("restore_trace_sparse") + ".csv";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(ftruncate(fileno(f), 2LL << 30), 0);
  std::fclose(f);
  try {
    read_trace(path);
    ADD_FAILURE() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(
        std::string(e.what()).find(
            ":1: a line longer than 4096 bytes; a page trace has one short request per line (page,op[,timestamp])"),
        std::string::npos)
        << e.what();
  }
  std::remove(path.c_str());
  EXPECT_NE(trace_error("0,R\n#" + std::string(4096, 'x') + "\n").find(":2: a line longer than 4096 bytes"),
            std::string::npos);
  EXPECT_EQ(trace_error("#" + std::string(4095, 'x') + "\n0,R"), "(accepted)");  // 4096 bytes, the last line unended
}

TEST(Trace, TheTimestampIsAnEmptyOrANonNegativeDecimalNumber) {
  for (const char* good : {"0,R,\n", "0,R,17\n", "0,R,128166372003061629\n", "0,R,1705312345.123456\n", "0,R,5.\n"})
    EXPECT_EQ(trace_error(good), "(accepted)") << good;
  for (const char* bad : {"abc", "-5", "1e9", "1.2.3", ".", " 7", "+1"})
    EXPECT_NE(trace_error(std::string("0,R,") + bad + "\n")
                  .find(":1: timestamp must be empty or a non-negative decimal number (digits with at most one '.'), "
                        "got '" +
                        std::string(bad) + "'"),
              std::string::npos)
        << bad;
}

TEST(Trace, ABadFieldIsQuotedEscapedAndShort) {
  // A NUL in the field ended the message there (what() is a C string); a 50 MB field was echoed whole.
  std::string message = trace_error(std::string("0,R\n1,R\0W\x1b[2J\n", 14));
  EXPECT_NE(message.find(":2: op must be R or W, got 'R\\x00W\\x1b[2J'"), std::string::npos) << message;
  message = trace_error(std::string(4000, '9') + ",R\n");
  EXPECT_NE(
      message.find(":1: page must be an integer in [0, 2^31), got '" + std::string(60, '9') + "'... (4000 bytes)"),
      std::string::npos)
      << message;
  EXPECT_LT(message.size(), 300u);
  EXPECT_NE(trace_error("0,R,5,x\ty\n").find(":1: expected page,op[,timestamp], got more fields: '0,R,5,x\\ty'"),
            std::string::npos);
}

// The shared command-line pieces: numbers, the grid mode, the exit statuses.
#include "artifact/command_line.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "scratch.h"

namespace artifact {
namespace {

std::string message(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(CommonCommandLine, NumbersAreCheckedWhole) {
  EXPECT_EQ(parse_number<int>("n", "42"), 42);
  EXPECT_EQ(parse_number<double>("x", "0.5"), 0.5);
  EXPECT_EQ(message([] { parse_number<int>("n", "4x"); }), "--n needs a number, got '4x'");
  EXPECT_EQ(message([] { parse_number<int>("n", ""); }), "--n needs a number, got ''");
  EXPECT_EQ(message([] { parse_number<double>("x", "inf"); }), "--x needs a number, got 'inf'");
  EXPECT_EQ(in_range("n", 5, 1, 10), 5);
  EXPECT_EQ(message([] { in_range("n", 11, 1, 10); }), "--n must be in [1, 10], got 11");
  EXPECT_TRUE(on_off("ace", "on"));
  EXPECT_FALSE(on_off("ace", "off"));
  EXPECT_EQ(message([] { on_off("ace", "yes"); }), "--ace must be on or off, not 'yes'");
  EXPECT_EQ(one_of<int>("k", "b", {{"a", 1}, {"b", 2}, {"c", 3}}), 2);
  EXPECT_EQ(message([] { one_of<int>("k", "d", {{"a", 1}, {"b", 2}, {"c", 3}}); }), "--k must be a, b or c, not 'd'");
}

// What a message quotes is escaped (artifact/quote.h): a NUL would end it early (what() is a C
// string), a control character could forge a line of it.
TEST(CommonCommandLine, MessagesEscapeWhatTheyQuote) {
  EXPECT_EQ(message([] { parse_number<int>("n", std::string("4\0", 2)); }), "--n needs a number, got '4\\x00'");
  EXPECT_EQ(message([] { parse_number<double>("x", "1\r\nerror: forged"); }),
            "--x needs a number, got '1\\r\\nerror: forged'");
  EXPECT_EQ(message([] { parse_number<int>("n", std::string(100, '7') + "x"); }),
            "--n needs a number, got '" + std::string(60, '7') + "'... (101 bytes)");
  EXPECT_EQ(message([] { one_of<int>("k", "d\x1b[2J", {{"a", 1}, {"b", 2}}); }), "--k must be a or b, not 'd\\x1b[2J'");
  EXPECT_EQ(message([] { on_off("ace", std::string("on\0", 3)); }), "--ace must be on or off, not 'on\\x00'");
}

TEST(CommonCommandLine, Formats) {
  EXPECT_EQ(shortest(0.1), "0.1");
  EXPECT_EQ(shortest(2.0), "2");
  EXPECT_EQ(fixed(1.0 / 3, 4), "0.3333");
  EXPECT_EQ(basename("a/b/c.csv"), "c.csv");
  EXPECT_EQ(basename("c.csv"), "c.csv");
}

class CommonGrid : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override { ::unlink(path_.c_str()); }
  std::string path_ = testing::scratch_path("artifact_grid") + ".csv";
};

TEST_F(CommonGrid, RowsAreTheBaseThenTheCells) {
  const Grid grid{{"out"}, {"synthetic"}};
  auto rows = grid_rows(write("policy,n_w,synthetic\r\nlru,8,1\n\nclock,,no\n"), {"--pool-pages", "5"}, grid);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"--pool-pages", "5", "--policy", "lru", "--n-w", "8", "--synthetic"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"--pool-pages", "5", "--policy", "clock"}));
  EXPECT_EQ(message([&] { grid_rows(write("a,out\n"), {}, grid); }), path_ + ": a grid cannot set --out");
  EXPECT_EQ(message([&] { grid_rows(write("a,b\n1\n"), {}, grid); }), path_ + ":2: 1 cells for 2 columns");
  EXPECT_EQ(message([&] { grid_rows(write(""), {}, grid); }),
            path_ + ": empty grid (a header line of option names is needed)");
}

TEST_F(CommonGrid, MessagesEscapeThePath) {
  path_ = testing::scratch_path("artifact_grid") + "\n\t.csv";
  EXPECT_EQ(message([&] { grid_rows(write("a,b\n1\n"), {}, {}); }),
            testing::scratch_path("artifact_grid") + "\\n\\t.csv:2: 1 cells for 2 columns");
  EXPECT_EQ(message([&] { run_grid(write("a\n1\n"), {}, {}, [](auto&) -> std::string { throw InputError("bad"); }); }),
            testing::scratch_path("artifact_grid") + "\\n\\t.csv: configuration 1: bad");
  EXPECT_EQ(message([] { grid_rows("/nonexistent/g\x1b.csv", {}, {}); }),
            "cannot read grid file /nonexistent/g\\x1b.csv");
}

TEST_F(CommonGrid, RunGridNamesTheConfiguration) {
  write("a\n1\n2\n");
  auto run = [](const std::vector<std::string>& row) {
    if (row.back() == "2") throw InputError("bad");
    return row[0] + row.back() + ";";
  };
  EXPECT_EQ(message([&] { run_grid(path_, {"--x", "--grid", path_}, {}, run); }), path_ + ": configuration 2: bad");
  write("a\n1\n");
  EXPECT_EQ(run_grid(path_, {"--grid=" + path_, "--x"}, {}, run), "--x1;");
}

struct TestPolicyError : std::logic_error {
  using std::logic_error::logic_error;
};

TEST(CommonCommandLine, ExitStatuses) {
  EXPECT_EQ(guarded_main<TestPolicyError>("t", [] { return 0; }), 0);
  EXPECT_EQ(guarded_main<TestPolicyError>("t", []() -> int { throw InputError("x"); }), 2);
  EXPECT_EQ(guarded_main<TestPolicyError>("t", []() -> int { throw std::invalid_argument("x"); }), 2);
  EXPECT_EQ(guarded_main<TestPolicyError>("t", []() -> int { throw TestPolicyError("x"); }), 3);
  EXPECT_EQ(guarded_main<TestPolicyError>("t", []() -> int { throw std::runtime_error("x"); }), 1);
}

}  // namespace
}  // namespace artifact

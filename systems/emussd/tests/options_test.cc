// Unit tests of the argument validation.
#include "options.h"

#include <gtest/gtest.h>

namespace emussd {
namespace {

std::vector<std::string> base() {
  return {"--backing", "/tmp/b", "--mountpoint", "/tmp/m", "--read-latency-us", "100", "--alpha", "3",
          "--k-r",     "16",     "--k-w",        "4"};
}

TEST(ParseArgs, AcceptsTheDocumentedForm) {
  Options o;
  std::string err;
  auto args = base();
  args.insert(args.end(), {"--page-size=8192", "--channels", "12", "--stats-out", "/tmp/s.json", "--foreground"});
  ASSERT_TRUE(parse_args(args, o, err)) << err;
  EXPECT_EQ(o.backing, "/tmp/b");
  EXPECT_EQ(o.mountpoint, "/tmp/m");
  EXPECT_DOUBLE_EQ(o.params.read_latency_us, 100);
  EXPECT_DOUBLE_EQ(o.params.alpha, 3);
  EXPECT_EQ(o.params.k_r, 16);
  EXPECT_EQ(o.params.k_w, 4);
  EXPECT_EQ(o.params.page_size, 8192);
  EXPECT_EQ(o.params.channels, 12);
  EXPECT_EQ(o.stats_out, "/tmp/s.json");
  EXPECT_TRUE(o.foreground);
}

TEST(ParseArgs, DefaultsPageSizeAndChannels) {
  Options o;
  std::string err;
  ASSERT_TRUE(parse_args(base(), o, err)) << err;
  EXPECT_EQ(o.params.page_size, 4096);
  EXPECT_EQ(o.params.channels, 0);
  EXPECT_FALSE(o.foreground);
}

// Each bad value is refused with a message naming the option and what is allowed.
TEST(ParseArgs, RefusesBadValues) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--read-latency-us", "0"}, {"--read-latency-us", "-5"}, {"--read-latency-us", "abc"},
      {"--alpha", "0"},           {"--alpha", "nan"},          {"--k-r", "0"},
      {"--k-r", "2.5"},           {"--k-w", "5000"},           {"--page-size", "3000"},
      {"--page-size", "256"},     {"--channels", "-1"},        {"--time-dilation", "0.5"},
      {"--time-dilation", "1e6"}, {"--alpha", "1000.5"},
  };
  for (const auto& [name, value] : bad) {
    Options o;
    std::string err;
    auto args = base();
    args.push_back(name);
    args.push_back(value);
    EXPECT_FALSE(parse_args(args, o, err)) << name << " " << value;
    EXPECT_NE(err.find(name), std::string::npos) << err;
    EXPECT_NE(err.find("allowed"), std::string::npos) << err;
  }
}

TEST(ParseArgs, TimeDilationAndCheckOnly) {
  Options o;
  std::string err;
  ASSERT_TRUE(parse_args(
      {"--check", "--read-latency-us", "50", "--alpha", "0.5", "--k-r", "16", "--k-w", "16", "--time-dilation", "40"},
      o, err))
      << err;  // --check needs no paths; alpha < 1 is a device with cheaper writes
  EXPECT_TRUE(o.check);
  EXPECT_DOUBLE_EQ(o.params.time_dilation, 40);
  EXPECT_DOUBLE_EQ(o.params.alpha, 0.5);
  Options d;
  ASSERT_TRUE(parse_args(base(), d, err)) << err;
  EXPECT_DOUBLE_EQ(d.params.time_dilation, 1);
  auto args = base();  // 100 us x 2e5 = 20 s per page: too slow to be a device
  args.insert(args.end(), {"--time-dilation", "1e5", "--read-latency-us", "200"});
  EXPECT_FALSE(parse_args(args, o, err));
  EXPECT_NE(err.find("--time-dilation"), std::string::npos) << err;
}

TEST(ParseArgs, NamesMissingAndUnknownArguments) {
  Options o;
  std::string err;
  EXPECT_FALSE(parse_args({"--backing", "/tmp/b"}, o, err));
  EXPECT_NE(err.find("--mountpoint"), std::string::npos);
  EXPECT_NE(err.find("--k-w"), std::string::npos);
  auto args = base();
  args.push_back("--latency");
  EXPECT_FALSE(parse_args(args, o, err));
  EXPECT_NE(err.find("unknown argument '--latency'"), std::string::npos);
  args = base();
  args.push_back("--alpha");
  EXPECT_FALSE(parse_args(args, o, err));
  EXPECT_NE(err.find("needs a value"), std::string::npos);
}

}  // namespace
}  // namespace emussd

// artifact::Options: CLI11 parses, and every mistake is one message naming the option and the fix.
#include "artifact/options.h"

#include <gtest/gtest.h>

#include <functional>

namespace {

using artifact::InputError;
using artifact::Options;

Options parse(const std::vector<std::string>& args) {
  return Options("tool run", args, 0, {"graph", "threads", "ratio", "mode", "out"}, {"fast"});
}

std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Options, ReadsBothFormsAndFlags) {
  Options o = parse({"--graph", "g.cave", "--threads=4", "--fast", "--ratio", "-0.5"});
  EXPECT_EQ(o.str("graph"), "g.cave");
  EXPECT_EQ(o.integer("threads", 1, 1, 64), 4u);
  EXPECT_EQ(o.real("ratio", 0, -1, 1), -0.5);
  EXPECT_TRUE(o.has("fast"));
  EXPECT_FALSE(o.has("out"));
  EXPECT_EQ(o.str("out", "-"), "-");
  EXPECT_EQ(o.choice("mode", {"a", "b"}, "b"), "b");
  EXPECT_EQ(Options("tool run", {"tool", "run", "--graph=a=b"}, 2, {"graph"}, {}).str("graph"), "a=b");
}

TEST(Options, EachMistakeIsOneMessageThatNamesTheOption) {
  EXPECT_EQ(error_of([] { parse({"g.cave"}); }), "unexpected argument 'g.cave' for `tool run`");
  EXPECT_EQ(error_of([] {
              parse({"--bogus", "3"});
            }),
            "unknown option --bogus for `tool run` (allowed: --graph --mode --out --ratio --threads --fast)");
  EXPECT_EQ(error_of([] { parse({"--graph"}); }), "--graph needs a value");
  EXPECT_EQ(error_of([] { parse({"--graph="}); }), "--graph needs a value");
  EXPECT_EQ(error_of([] { parse({"--graph", "a", "--graph=b"}); }), "--graph given twice");
  EXPECT_EQ(error_of([] { parse({"--fast=yes"}); }), "--fast takes no value");
  EXPECT_EQ(error_of([] { parse({}).str("graph"); }), "`tool run` needs --graph");
  EXPECT_EQ(error_of([] { parse({"--mode", "c"}).choice("mode", {"a", "b"}); }), "--mode must be one of a|b, got 'c'");
  EXPECT_EQ(error_of([] {
              parse({"--threads", "4x"}).integer("threads", 1, 1, 64);
            }),
            "--threads needs a whole number in [1, 64], got '4x'");
  EXPECT_EQ(error_of([] {
              parse({"--threads", "65"}).integer("threads", 1, 1, 64);
            }),
            "--threads must be in [1, 64], got 65");
  EXPECT_EQ(error_of([] {
              parse({"--ratio", "nan"}).real("ratio", 0, 0, 1);
            }),
            "--ratio needs a number in [0, 1], got 'nan'");
  EXPECT_EQ(error_of([] { parse({"--ratio", "2"}).real("ratio", 0, 0, 1); }), "--ratio must be in [0, 1], got 2");
  EXPECT_EQ(error_of([] { parse({"--fast"}).only_for("fast", false, "--mode a"); }), "--fast applies only to --mode a");
}

TEST(Options, WithLaterWinsARepeatedOptionTakesItsLastValue) {
  const std::vector<std::string> args = {"--graph", "a", "--threads", "2", "--graph=b"};
  const Options o("tool run", args, 0, {"graph", "threads"}, {}, Options::Repeats::kLaterWins);
  EXPECT_EQ(o.str("graph"), "b");
  EXPECT_EQ(o.values(), (std::map<std::string, std::string>{{"graph", "b"}, {"threads", "2"}}));
  EXPECT_EQ(error_of([] {
              Options("tool run", {"--graph", "a", "--graph"}, 0, {"graph"}, {}, Options::Repeats::kLaterWins);
            }),
            "--graph needs a value");
}

TEST(Options, WhatAMessageQuotesOfTheInputIsEscaped) {
  EXPECT_EQ(error_of([] { parse({std::string("x\0", 2)}); }), "unexpected argument 'x\\x00' for `tool run`");
  EXPECT_EQ(error_of([] { parse({"--b\tgus=1"}); }).substr(0, 33), "unknown option --b\\tgus for `tool");
  EXPECT_EQ(error_of([] {
              parse({"--mode", "a\nerror: forged"}).choice("mode", {"a"});
            }),
            "--mode must be one of a, got 'a\\nerror: forged'");
}

}  // namespace

// User input shown in a message: escaped, so that it cannot cut or forge the message, and short.
#include "artifact/quote.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace artifact {
namespace {

TEST(Quote, EscapesWhatCouldCutOrForgeAMessage) {
  const std::string text("a\0b\n\r\t\\'\x1b\x7f\xc3\xa9z", 13);
  EXPECT_EQ(excerpt(text), "'a\\x00b\\n\\r\\t\\\\\\'\\x1b\\x7f\\xc3\\xa9z'");
  EXPECT_EQ(std::strlen(excerpt(text).c_str()), excerpt(text).size());  // no NUL left to end a C string
  EXPECT_EQ(escaped("runs/t.csv"), "runs/t.csv");                       // plain text as it is
  EXPECT_EQ(escaped(std::string("t\0.csv", 6)), "t\\x00.csv");
}

TEST(Quote, ShowsAtMostAnExcerptAndTheLength) {
  EXPECT_EQ(excerpt(std::string(60, 'x')), "'" + std::string(60, 'x') + "'");
  EXPECT_EQ(excerpt(std::string(50 << 20, '0')), "'" + std::string(60, '0') + "'... (52428800 bytes)");
  EXPECT_EQ(excerpt("abcdef", 3), "'abc'... (6 bytes)");
}

}  // namespace
}  // namespace artifact

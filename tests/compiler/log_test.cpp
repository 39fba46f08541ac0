// The structured log's values: plain ones bare, the rest quoted and escaped, so no value breaks its line or pair.
#include <gtest/gtest.h>

#include <string>

#include "compiler/log.hpp"

namespace lt::test {
namespace {

using logging::logfmt_value;

TEST(Log, PlainValuesStayBare) {
  EXPECT_EQ(logfmt_value("h200"), "h200");
  EXPECT_EQ(logfmt_value("3.25"), "3.25");
  EXPECT_EQ(logfmt_value("/tmp/a-b_c.gguf"), "/tmp/a-b_c.gguf");
}

TEST(Log, OtherValuesAreQuotedAndEscaped) {
  EXPECT_EQ(logfmt_value(""), "\"\"");
  EXPECT_EQ(logfmt_value("two words"), "\"two words\"");
  EXPECT_EQ(logfmt_value("a=b"), "\"a=b\"");
  // A quote inside a value used to end the value early: `reason="say "hi""` read as two broken pairs.
  EXPECT_EQ(logfmt_value("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(logfmt_value("C:\\dir"), "\"C:\\\\dir\"");
  // A newline (an nvcc error's second line) would have split one event into two lines.
  EXPECT_EQ(logfmt_value("line 1\nline 2\r\tend"), "\"line 1\\nline 2\\r\\tend\"");
  EXPECT_EQ(logfmt_value(std::string("bell\x07", 5)), "\"bell\\u0007\"");
  const std::string v = logfmt_value("x\ny\"z\\");
  EXPECT_EQ(v.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace lt::test

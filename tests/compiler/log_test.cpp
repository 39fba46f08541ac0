// The structured log's values: plain ones bare, the rest quoted and escaped, so no value breaks its line or pair.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/error.hpp"
#include "compiler/log.hpp"

namespace lt::test {
namespace {

using logging::logfmt_line;
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

// A line read as a strict logfmt decoder reads it (go-logfmt's grammar): pairs `key=value` apart by one space, a key
// a bare word, a value bare (no space, quote, `=` or control character) or quoted with \\, \", \n, \r, \t and
// \uXXXX escapes (UTF-8 written back); nullopt for a line that breaks it.
std::optional<std::vector<std::pair<std::string, std::string>>> decode(const std::string& line) {
  std::vector<std::pair<std::string, std::string>> pairs;
  size_t i = 0;
  auto bare = [](char c) { return static_cast<unsigned char>(c) > ' ' && c != '=' && c != '"' && c != 0x7f; };
  while (i < line.size()) {
    if (!pairs.empty() && line[i++] != ' ') return std::nullopt;
    std::string key, value;
    while (i < line.size() && bare(line[i])) key += line[i++];
    if (key.empty() || i >= line.size() || line[i++] != '=') return std::nullopt;
    if (i < line.size() && line[i] == '"') {
      for (++i;; ++i) {
        if (i >= line.size()) return std::nullopt;  // no closing quote
        const char c = line[i];
        if (c == '"') break;
        if (static_cast<unsigned char>(c) < ' ') return std::nullopt;
        if (c != '\\') {
          value += c;
          continue;
        }
        if (++i >= line.size()) return std::nullopt;
        switch (line[i]) {
          case '"':
            value += '"';
            break;
          case '\\':
            value += '\\';
            break;
          case 'n':
            value += '\n';
            break;
          case 'r':
            value += '\r';
            break;
          case 't':
            value += '\t';
            break;
          case 'u': {
            if (i + 4 >= line.size()) return std::nullopt;
            const unsigned cp = std::stoul(line.substr(i + 1, 4), nullptr, 16);
            i += 4;
            if (cp < 0x80) {
              value += char(cp);
            } else if (cp < 0x800) {
              value += char(0xC0 | (cp >> 6));
              value += char(0x80 | (cp & 0x3F));
            } else {
              value += char(0xE0 | (cp >> 12));
              value += char(0x80 | ((cp >> 6) & 0x3F));
              value += char(0x80 | (cp & 0x3F));
            }
            break;
          }
          default:
            return std::nullopt;
        }
      }
      ++i;
    } else {
      while (i < line.size() && bare(line[i])) value += line[i++];
      if (value.empty()) return std::nullopt;
    }
    pairs.emplace_back(key, value);
  }
  return pairs;
}

// Every line is valid logfmt whatever its values hold, and a decoder reads back each value as it was written (a
// byte outside UTF-8 as U+FFFD); the line has no newline in it.
TEST(Log, LinesOfHostileValuesAreValidLogfmt) {
  const std::string hostile[] = {
      "",
      " ",
      "two words",
      "a=b",
      "key=\"value\" other=1",
      "say \"hi\"",
      "\"",
      "\\",
      "C:\\dir\\",
      "trailing\\",
      "line 1\nline 2\r\nline 3",
      "tab\there",
      std::string("nul\0inside", 10),
      "bell\x07 del\x7f esc\x1b[31m",
      "ünïcödé ✓ 日本",
      "event=forged component=x",
      "===",
      "\\\"",
  };
  for (const auto& v : hostile) {
    const std::string line = logfmt_line("2024-01-01T00:00:00Z", "coordinator", "test", {{"reason", v}, {"n", "1"}});
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    const auto pairs = decode(line);
    ASSERT_TRUE(pairs) << "not logfmt: " << line;
    ASSERT_EQ(pairs->size(), 5u) << line;
    EXPECT_EQ((*pairs)[0], std::make_pair(std::string("ts"), std::string("2024-01-01T00:00:00Z")));
    EXPECT_EQ((*pairs)[2].second, "test");
    EXPECT_EQ((*pairs)[3], std::make_pair(std::string("reason"), v)) << line;
    EXPECT_EQ((*pairs)[4], std::make_pair(std::string("n"), std::string("1"))) << line;
  }
  // Bytes that are no UTF-8 (a stray continuation, a lead byte cut short, an overlong form) read as U+FFFD.
  const std::string broken = std::string("ok\x80 \xC3 \xC0\xAF end");
  const auto pairs = decode(logfmt_line("t", "worker", "e", {{"v", broken}}));
  ASSERT_TRUE(pairs);
  EXPECT_EQ((*pairs)[3].second, "ok\uFFFD \uFFFD \uFFFD\uFFFD end");
  EXPECT_EQ(logfmt_value("caf\xC3\xA9"), "caf\xC3\xA9");  // valid UTF-8 stays bare
}

// --log-format json: every line one JSON object (nlohmann-json's writer), its fields in order and each value read back
// as written, whatever it holds (a byte outside UTF-8 as U+FFFD); no newline inside.
TEST(Log, JsonLinesReadBackWhateverTheValuesHold) {
  for (const std::string& v : {std::string("two words"), std::string("say \"hi\"\n}{"), std::string("nul\0in", 6),
                               std::string("ünïcödé ✓"), std::string("\"}, \"event\": \"forged")}) {
    const std::string line =
        logging::json_line("2024-01-01T00:00:00Z", "coordinator", "test", {{"reason", v}, {"n", "1"}});
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    const auto j = nlohmann::ordered_json::parse(line);
    ASSERT_EQ(j.size(), 5u) << line;
    EXPECT_EQ(j.begin().key(), "ts");
    EXPECT_EQ(j["event"], "test");
    EXPECT_EQ(j["reason"], v) << line;
    EXPECT_EQ(j["n"], "1");
  }
  const auto j = nlohmann::json::parse(logging::json_line("t", "worker", "e", {{"v", std::string("ok\x80 end")}}));
  EXPECT_EQ(j["v"], "ok\uFFFD end");
  EXPECT_EQ(logging::parse_format("json"), logging::Format::Json);
  EXPECT_EQ(logging::parse_format("logfmt"), logging::Format::Logfmt);
  EXPECT_THROW(logging::parse_format("xml"), Error);
}

}  // namespace
}  // namespace lt::test

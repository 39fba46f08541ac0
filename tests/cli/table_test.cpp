// The table model's four renderings and the figures' units: CSV as RFC 4180 quotes it, Markdown with `|` escaped,
// JSON with each cell's value, a terminal table with aligned, cut cells; times scaled, spreads to two figures.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "compiler/error.hpp"
#include "output/table.hpp"
#include "output/units.hpp"

namespace lt::test {
namespace {

using namespace lt::cli;

// A table with hostile text: commas, quotes, a newline, a pipe, a backslash.
Table hostile() {
  Table t;
  t.columns = {{"name", "name"},
               {"decode_ms", "decode", true},
               {"note", "note", false, Audience::People},
               {"raw", "raw", false, Audience::Programs}};
  t.add({text("a,b"), number(0.00005, "50 ns"), text("x|y"), text("say \"hi\"\nbye")});
  t.add({text("back\\slash"), none(), text("two\nlines"), {"", nlohmann::json{{"k", 1}}}});
  t.notes.push_back("a note");
  return t;
}

TEST(Table, FormatsAreNamedAsTheOptionTakesThem) {
  EXPECT_EQ(parse_format("table"), Format::Table);
  EXPECT_EQ(parse_format("json"), Format::Json);
  EXPECT_EQ(parse_format("csv"), Format::Csv);
  EXPECT_EQ(parse_format("md"), Format::Markdown);
  for (auto f : {Format::Table, Format::Json, Format::Csv, Format::Markdown}) EXPECT_EQ(parse_format(to_string(f)), f);
  EXPECT_THROW(parse_format("xml"), lt::Error);
}

TEST(Table, ARowMustHaveACellPerColumn) {
  Table t;
  t.columns = {{"a", "a"}, {"b", "b"}};
  EXPECT_THROW(t.add({text("1")}), lt::Error);
}

// RFC 4180: a header of keys, CRLF after every record, fields with a comma, quote, CR or LF quoted, quotes doubled;
// the programs' columns only, values rather than people's text (null as an empty field, objects as JSON).
TEST(Table, CsvQuotesAsRfc4180Says) {
  EXPECT_EQ(render(hostile(), Format::Csv),
            "name,decode_ms,raw\r\n"
            "\"a,b\",5e-05,\"say \"\"hi\"\"\nbye\"\r\n"
            "back\\slash,,\"{\"\"k\"\":1}\"\r\n");
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("cr\rhere"), "\"cr\rhere\"");
  EXPECT_EQ(csv_field(""), "");
}

// JSON: an array of objects keyed by the programs' columns, each cell's value (its text where it has none).
TEST(Table, JsonCarriesEachCellsValue) {
  const auto j = nlohmann::json::parse(render(hostile(), Format::Json));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0], (nlohmann::json{{"name", "a,b"}, {"decode_ms", 0.00005}, {"raw", "say \"hi\"\nbye"}}));
  EXPECT_TRUE(j[1]["decode_ms"].is_null());
  EXPECT_EQ(j[1]["raw"]["k"], 1);
  EXPECT_FALSE(j[0].contains("note"));
}

// Markdown: the people's columns and text, `|` and `\` escaped, a line break as <br>, numbers right-aligned, notes as
// paragraphs after the table; every row has as many cells as the header.
TEST(Table, MarkdownEscapesPipes) {
  const std::string md = render(hostile(), Format::Markdown);
  EXPECT_EQ(md,
            "| name | decode | note |\n"
            "| --- | ---: | --- |\n"
            "| a,b | 50 ns | x\\|y |\n"
            "| back\\\\slash | - | two<br>lines |\n"
            "\na note\n");
  EXPECT_EQ(markdown_cell("a|b|c"), "a\\|b\\|c");
  EXPECT_EQ(markdown_cell("crlf\r\nend"), "crlf<br>end");
}

// The terminal: a header of titles, columns padded two spaces apart, numbers right-aligned, control characters as
// spaces, no trailing blanks, notes under it.
TEST(Table, TerminalAlignsColumns) {
  EXPECT_EQ(render(hostile(), Format::Table),
            "name        decode  note\n"
            "a,b          50 ns  x|y\n"
            "back\\slash       -  two lines\n"
            "a note\n");
}

// A column's max_width cuts people's cells (counting UTF-8 characters, not bytes) with "..."; other formats keep
// them whole.
TEST(Table, TerminalCellsAreCutToTheirColumnsWidth) {
  Table t;
  t.columns = {{"knobs", "knobs", false, Audience::Everyone, 10}, {"n", "n", true}};
  t.add({text("abcdefghijklmnop"), text("1")});
  t.add({text("±±±±±±±±±±±±"), text("2")});
  t.add({text("short"), text("3")});
  EXPECT_EQ(render(t, Format::Table),
            "knobs       n\n"
            "abcdefg...  1\n"
            "±±±±±±±...  2\n"
            "short       3\n");
  EXPECT_NE(render(t, Format::Csv).find("abcdefghijklmnop"), std::string::npos);
}

// A wrapped column breaks its cells at spaces onto lines of their own (the other cells blank there); a word longer
// than the column is cut across lines.
TEST(Table, TerminalCellsWrapWhereTheirColumnSaysSo) {
  Table t;
  t.columns = {{"knob", "knob"}, {"help", "help", false, Audience::Everyone, 12, true}};
  t.add({text("a"), text("one two three four")});
  t.add({text("b"), text("abcdefghijklmnopq")});
  EXPECT_EQ(render(t, Format::Table),
            "knob  help\n"
            "a     one two\n"
            "      three four\n"
            "b     abcdefghijkl\n"
            "      mnopq\n");
  EXPECT_EQ(render(t, Format::Markdown).find("one two three four") != std::string::npos, true);
}

TEST(Units, TimesAreScaledToTheirUnit) {
  EXPECT_EQ(duration_ms(0.00005), "50.0 ns");
  EXPECT_EQ(duration_ms(0.0123), "12.3 us");
  EXPECT_EQ(duration_ms(2.914), "2.91 ms");
  EXPECT_EQ(duration_ms(1234), "1.23 s");
  EXPECT_EQ(duration_ms(0.99996), "1.00 ms");  // rounded before it is scaled: not "1000 us"
  EXPECT_EQ(duration_ms(0), "0");
  EXPECT_EQ(duration_ms(4'000'000), "4000 s");
}

// A spread to two significant figures: a 50 ns spread is not 0.0000.
TEST(Units, SpreadsHaveTwoSignificantFigures) {
  EXPECT_EQ(spread_ms(0.00005), "50 ns");
  EXPECT_EQ(spread_ms(0.0473), "47 us");
  EXPECT_EQ(spread_ms(1.55), "1.6 ms");
  EXPECT_EQ(spread_ms(150), "150 ms");
  EXPECT_EQ(significant(1234, 3), "1230");
  EXPECT_EQ(significant(0.0473, 2), "0.047");
}

TEST(Units, RatesCountsAndAges) {
  EXPECT_EQ(rate(6300.4), "6,300 tok/s");
  EXPECT_EQ(rate(87.54), "87.5 tok/s");
  EXPECT_EQ(thousands(1378560), "1,378,560");
  EXPECT_EQ(thousands(-1234), "-1,234");
  EXPECT_EQ(age(45), "45s");
  EXPECT_EQ(age(720), "12m");
  EXPECT_EQ(age(3.5 * 3600), "3.5h");
  EXPECT_EQ(age(3 * 86400), "3.0d");
}

}  // namespace
}  // namespace lt::test

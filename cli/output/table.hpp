// The CLI's one table model: columns and rows of cells, rendered as a terminal table, JSON, CSV or a Markdown table.
// Every command that prints data builds a Table; nothing else in the CLI lays out columns or quotes fields.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace lt::cli {

// How a command prints its data: `table` for a terminal, `json`, `csv` (RFC 4180) or `md` (a Markdown table).
enum class Format { Table, Json, Csv, Markdown };

// The format named `name` (table, json, csv, md); throws lt::Error naming the accepted ones.
Format parse_format(std::string_view name);
const char* to_string(Format f);
// The names parse_format accepts, for --help.
inline constexpr const char* kFormatNames = "table, json, csv or md";

// Who a column is for: people (the terminal table and Markdown), programs (JSON and CSV) or both. A terminal table
// shows few, short columns; JSON and CSV carry every figure unscaled.
enum class Audience { Everyone, People, Programs };

// A column: its key (JSON's member, CSV's header: "decode_ms") and its title (the terminal's and Markdown's header:
// "decode"); numbers are right-aligned for people, and a terminal cell wider than `max_width` characters is cut with
// "..." or, with `wrap`, wrapped at spaces onto lines of its own (0: never; the other formats carry it whole).
struct Column {
  std::string key;
  std::string title;
  bool numeric = false;
  Audience audience = Audience::Everyone;
  size_t max_width = 0;
  bool wrap = false;
};

// A cell: the text a person reads ("2.91 ms") and the value a program reads (2.91; nullopt: the text is the value;
// null: no value, an empty CSV field).
struct Cell {
  std::string text;
  std::optional<nlohmann::json> value;
};

// A cell whose text is its value.
Cell text(std::string s);
// A cell of a number shown as `shown` ("2.91 ms") and read as `x`.
Cell number(double x, std::string shown);
// A count shown with thousands separators (6,300) and read as the number.
Cell count(int64_t n);
// A flag: shown as `name` when set, blank when not; read as true or false.
Cell flag(bool set, const std::string& name);
// No value: shown as "-", read as null.
Cell none();

// A table: columns, rows of one cell per column, and notes (legends) printed under it for people.
struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
  std::vector<std::string> notes;

  // Appends a row; throws lt::Error unless it has one cell per column.
  void add(std::vector<Cell> row);
};

// The table in `format`: a terminal table (a header, columns padded, cells cut or wrapped to their column's width,
// notes under it),
// JSON (an array of objects, one per row, keyed by column key), CSV (a header of keys and a record per row, CRLF
// ends, RFC 4180 quoting) or Markdown (a header of titles, `|` and newlines escaped, notes as paragraphs after).
std::string render(const Table& t, Format format);

// A CSV field as RFC 4180 writes it: bare, or quoted when it holds a comma, a quote, CR or LF (quotes doubled).
std::string csv_field(std::string_view s);
// A Markdown table cell: `|` and `\` escaped with a backslash, line breaks as <br>.
std::string markdown_cell(std::string_view s);

}  // namespace lt::cli

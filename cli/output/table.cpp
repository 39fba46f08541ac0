// The table model's four renderings: a terminal table, JSON, CSV (RFC 4180) and Markdown.
#include "output/table.hpp"

#include <algorithm>

#include "compiler/error.hpp"
#include "output/units.hpp"

namespace lt::cli {
namespace {

bool shown_to(const Column& c, Format f) {
  const bool people = f == Format::Table || f == Format::Markdown;
  return c.audience == Audience::Everyone || (c.audience == Audience::People) == people;
}

// The indices of the columns `f` shows.
std::vector<size_t> columns_for(const Table& t, Format f) {
  std::vector<size_t> v;
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (shown_to(t.columns[i], f)) v.push_back(i);
  return v;
}

// How many characters a terminal shows for UTF-8 text: its code points.
size_t width(std::string_view s) {
  return size_t(
      std::count_if(s.begin(), s.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
}

// A cell's text on one terminal line: control characters as spaces, cut to `max_width` code points with "..." (0:
// never).
std::string terminal_text(std::string_view s, size_t max_width) {
  std::string out;
  size_t shown = 0;
  const bool cut = max_width > 3 && width(s) > max_width;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(s[i]);
    const bool starts = (ch & 0xC0) != 0x80;
    if (starts && cut && shown == max_width - 3) return out + "...";
    if (starts) ++shown;
    out += ch < ' ' || ch == 0x7f ? ' ' : char(ch);
  }
  return out;
}

// A cell's text as terminal lines of at most `max_width` code points, broken at spaces (a word longer than a line
// is cut across lines).
std::vector<std::string> wrapped(std::string_view s, size_t max_width) {
  const std::string flat = terminal_text(s, 0);
  std::vector<std::string> lines;
  std::string line;
  size_t at = 0;
  while (at < flat.size()) {
    size_t end = flat.find(' ', at);
    if (end == std::string::npos) end = flat.size();
    std::string word = flat.substr(at, end - at);
    at = end + 1;
    while (width(word) > max_width) {  // (cut at a character's start)
      size_t cut = 0, shown = 0;
      while (cut < word.size() && (shown < max_width || (static_cast<unsigned char>(word[cut]) & 0xC0) == 0x80))
        shown += (static_cast<unsigned char>(word[cut++]) & 0xC0) != 0x80;
      if (!line.empty()) lines.push_back(line), line.clear();
      lines.push_back(word.substr(0, cut));
      word = word.substr(cut);
    }
    if (!line.empty() && width(line) + 1 + width(word) > max_width) lines.push_back(line), line.clear();
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

// A cell's value as a program reads it.
nlohmann::json value_of(const Cell& c) {
  return c.value ? *c.value : nlohmann::json(c.text);
}

std::string render_terminal(const Table& t) {
  const auto cols = columns_for(t, Format::Table);
  // Each row as lines of cells: one line, or more where a wrapped cell needs them.
  std::vector<std::vector<std::string>> lines;
  std::vector<std::string> header;
  for (size_t c : cols) header.push_back(t.columns[c].title);
  lines.push_back(header);
  for (const auto& row : t.rows) {
    std::vector<std::vector<std::string>> cells;
    size_t height = 1;
    for (size_t c : cols) {
      const Column& col = t.columns[c];
      cells.push_back(col.wrap && col.max_width ? wrapped(row[c].text, col.max_width)
                                                : std::vector<std::string>{terminal_text(row[c].text, col.max_width)});
      height = std::max(height, cells.back().size());
    }
    for (size_t k = 0; k < height; ++k) {
      std::vector<std::string> line;
      for (const auto& cell : cells) line.push_back(k < cell.size() ? cell[k] : "");
      lines.push_back(line);
    }
  }
  std::vector<size_t> widths(cols.size(), 0);
  for (const auto& line : lines)
    for (size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], width(line[i]));
  std::string out;
  for (const auto& line : lines) {
    std::string text;
    for (size_t i = 0; i < line.size(); ++i) {
      const std::string pad(widths[i] - width(line[i]), ' ');
      if (i) text += "  ";
      text += t.columns[cols[i]].numeric ? pad + line[i] : line[i] + pad;
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  for (const auto& n : t.notes) out += n + "\n";
  return out;
}

std::string render_json(const Table& t) {
  const auto cols = columns_for(t, Format::Json);
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : t.rows) {
    nlohmann::json o = nlohmann::json::object();
    for (size_t c : cols) o[t.columns[c].key] = value_of(row[c]);
    rows.push_back(std::move(o));
  }
  return rows.dump(1) + "\n";
}

// A value as one CSV field's text: strings as they are, null as nothing, numbers and the rest as JSON.
std::string csv_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

std::string render_csv(const Table& t) {
  const auto cols = columns_for(t, Format::Csv);
  std::string out;
  auto record = [&](auto field_of) {
    for (size_t i = 0; i < cols.size(); ++i) out += (i ? "," : "") + csv_field(field_of(cols[i]));
    out += "\r\n";
  };
  record([&](size_t c) { return t.columns[c].key; });
  for (const auto& row : t.rows) record([&](size_t c) { return csv_text(value_of(row[c])); });
  return out;
}

std::string render_markdown(const Table& t) {
  const auto cols = columns_for(t, Format::Markdown);
  std::string out = "|", rule = "|";
  for (size_t c : cols) {
    out += " " + markdown_cell(t.columns[c].title) + " |";
    rule += t.columns[c].numeric ? " ---: |" : " --- |";
  }
  out += "\n" + rule + "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (size_t c : cols) out += " " + markdown_cell(row[c].text) + " |";
    out += "\n";
  }
  for (const auto& n : t.notes) out += "\n" + markdown_cell(n) + "\n";
  return out;
}

}  // namespace

Format parse_format(std::string_view name) {
  if (name == "table") return Format::Table;
  if (name == "json") return Format::Json;
  if (name == "csv") return Format::Csv;
  if (name == "md" || name == "markdown") return Format::Markdown;
  throw lt::Error("unknown format '" + std::string(name) + "' (" + kFormatNames + ")");
}

const char* to_string(Format f) {
  switch (f) {
    case Format::Json:
      return "json";
    case Format::Csv:
      return "csv";
    case Format::Markdown:
      return "md";
    case Format::Table:
      break;
  }
  return "table";
}

Cell text(std::string s) {
  return {std::move(s), std::nullopt};
}

Cell number(double x, std::string shown) {
  return {std::move(shown), nlohmann::json(x)};
}

Cell count(int64_t n) {
  return {thousands(double(n)), nlohmann::json(n)};
}

Cell flag(bool set, const std::string& name) {
  return {set ? name : "", nlohmann::json(set)};
}

Cell none() {
  return {"-", nlohmann::json(nullptr)};
}

void Table::add(std::vector<Cell> row) {
  if (row.size() != columns.size())
    throw lt::Error("a table row of " + std::to_string(row.size()) + " cells under " + std::to_string(columns.size()) +
                    " columns");
  rows.push_back(std::move(row));
}

std::string render(const Table& t, Format format) {
  switch (format) {
    case Format::Json:
      return render_json(t);
    case Format::Csv:
      return render_csv(t);
    case Format::Markdown:
      return render_markdown(t);
    case Format::Table:
      break;
  }
  return render_terminal(t);
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string markdown_cell(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '\r' && i + 1 < s.size() && s[i + 1] == '\n') continue;  // (CRLF: one break)
    if (ch == '\n' || ch == '\r')
      out += "<br>";
    else if (ch == '|' || ch == '\\' || ch == '`' || ch == '*' || ch == '<')
      out += std::string("\\") + ch;
    else
      out += ch;
  }
  return out;
}

}  // namespace lt::cli

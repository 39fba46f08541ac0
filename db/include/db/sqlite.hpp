// A thin SQLite layer: a connection opened in WAL mode with a busy timeout, prepared statements, transactions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace lt::db {

// A database call that failed: SQLite's message, and its primary result code (SQLITE_FULL, SQLITE_BUSY, ...).
class Error : public std::runtime_error {
 public:
  Error(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }
  // The disk (or the database's page limit) is full: nothing more can be written until space is made.
  bool full() const;
  // Another connection held the database's lock past the busy timeout.
  bool busy() const;

 private:
  int code_;
};

// A prepared statement: bind by position (from 1), step, read columns (from 0). Reset on each exec/next cycle.
class Stmt {
 public:
  Stmt(sqlite3* db, std::string_view sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, int v) { return bind(i, int64_t{v}); }
  Stmt& bind(int i, uint32_t v) { return bind(i, int64_t{v}); }
  Stmt& bind(int i, bool v) { return bind(i, int64_t{v}); }
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::string_view v);
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind_null(int i);

  // Steps once; true while a row is available. Resets the statement after the last row.
  bool next();
  // Runs to completion (for statements that return no rows); returns the rows changed.
  int exec();

  int64_t i64(int col) const;
  double f64(int col) const;
  std::string text(int col) const;
  bool is_null(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
  bool done_ = false;
};

// One SQLite database file: WAL, foreign keys on, a busy timeout; not shared between threads.
class Connection {
 public:
  explicit Connection(const std::filesystem::path& path, int busy_timeout_ms = 10000);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs statements that bind nothing (schema, pragmas, BEGIN/COMMIT).
  void exec_script(const char* sql);
  Stmt prepare(std::string_view sql) { return Stmt(db_, sql); }
  int64_t last_insert_id() const;
  sqlite3* raw() { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

// A write transaction (BEGIN IMMEDIATE) that rolls back unless committed.
class Transaction {
 public:
  explicit Transaction(Connection& c);
  ~Transaction();
  void commit();

 private:
  Connection& c_;
  bool done_ = false;
};

}  // namespace lt::db

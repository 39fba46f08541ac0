// The SQLite layer: errors become lt::db::Error, carrying SQLite's message and result code.
#include "db/sqlite.hpp"

#include <sqlite3.h>

#include <stdexcept>

namespace lt::db {
namespace {
[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  throw Error("database: " + what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"),
              db ? sqlite3_errcode(db) & 0xff : SQLITE_NOMEM);
}
}  // namespace

bool Error::full() const {
  return code_ == SQLITE_FULL;
}
bool Error::busy() const {
  return code_ == SQLITE_BUSY || code_ == SQLITE_LOCKED;
}

Stmt::Stmt(sqlite3* db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db, sql.data(), int(sql.size()), &s_, nullptr) != SQLITE_OK)
    fail(db, "cannot prepare `" + std::string(sql) + "`");
}

Stmt::~Stmt() {
  sqlite3_finalize(s_);
}

Stmt& Stmt::bind(int i, int64_t v) {
  if (sqlite3_bind_int64(s_, i, v) != SQLITE_OK) fail(db_, "bind");
  return *this;
}
Stmt& Stmt::bind(int i, double v) {
  if (sqlite3_bind_double(s_, i, v) != SQLITE_OK) fail(db_, "bind");
  return *this;
}
Stmt& Stmt::bind(int i, std::string_view v) {
  if (sqlite3_bind_text(s_, i, v.data(), int(v.size()), SQLITE_TRANSIENT) != SQLITE_OK) fail(db_, "bind");
  return *this;
}
Stmt& Stmt::bind_null(int i) {
  if (sqlite3_bind_null(s_, i) != SQLITE_OK) fail(db_, "bind");
  return *this;
}

bool Stmt::next() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  sqlite3_reset(s_);
  if (rc != SQLITE_DONE) fail(db_, std::string("step `") + sqlite3_sql(s_) + "`");
  return false;
}

int Stmt::exec() {
  while (next()) {
  }
  return sqlite3_changes(db_);
}

int64_t Stmt::i64(int col) const {
  return sqlite3_column_int64(s_, col);
}
double Stmt::f64(int col) const {
  return sqlite3_column_double(s_, col);
}
std::string Stmt::text(int col) const {
  auto p = reinterpret_cast<const char*>(sqlite3_column_text(s_, col));
  return p ? std::string(p, size_t(sqlite3_column_bytes(s_, col))) : std::string();
}
bool Stmt::is_null(int col) const {
  return sqlite3_column_type(s_, col) == SQLITE_NULL;
}

Connection::Connection(const std::filesystem::path& path, int busy_timeout_ms) {
  if (const int rc = sqlite3_open_v2(path.c_str(), &db_,
                                     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
      rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw Error("cannot open database " + path.string() + ": " + msg, rc & 0xff);
  }
  sqlite3_busy_timeout(db_, busy_timeout_ms);
  exec_script("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
}

Connection::~Connection() {
  sqlite3_close_v2(db_);
}

void Connection::exec_script(const char* sql) {
  char* err = nullptr;
  if (const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err); rc != SQLITE_OK) {
    std::string msg = err ? err : "?";
    sqlite3_free(err);
    throw Error("database: " + msg, rc & 0xff);
  }
}

int64_t Connection::last_insert_id() const {
  return sqlite3_last_insert_rowid(db_);
}

Transaction::Transaction(Connection& c) : c_(c) {
  c_.exec_script("BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(c_.raw(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  c_.exec_script("COMMIT");
  done_ = true;
}

}  // namespace lt::db

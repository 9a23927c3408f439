#include "schedulers/local/state_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "core/state_dir.h"

namespace torchx::schedulers::local {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS apps (
  app_id TEXT PRIMARY KEY,
  session TEXT NOT NULL,
  name TEXT NOT NULL,
  appdef_json TEXT NOT NULL,
  plan_json TEXT NOT NULL,
  app_dir TEXT NOT NULL,
  state INTEGER NOT NULL,
  num_restarts INTEGER NOT NULL DEFAULT 0,
  msg TEXT NOT NULL DEFAULT '',
  structured_error_msg TEXT NOT NULL DEFAULT '<NONE>',
  supervisor_pid INTEGER NOT NULL DEFAULT 0,
  supervisor_start TEXT NOT NULL DEFAULT '',
  created REAL NOT NULL,
  updated REAL NOT NULL,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  end_cause TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS replicas (
  app_id TEXT NOT NULL,
  role TEXT NOT NULL,
  replica_id INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  pid INTEGER NOT NULL,
  proc_start TEXT NOT NULL,
  state INTEGER NOT NULL,
  exit_code INTEGER,
  structured_error_msg TEXT NOT NULL DEFAULT '<NONE>',
  PRIMARY KEY (app_id, role, replica_id)
);
CREATE TABLE IF NOT EXISTS attempts (
  app_id TEXT NOT NULL,
  role TEXT NOT NULL,
  replica_id INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  state INTEGER NOT NULL,
  exit_code INTEGER,
  started REAL NOT NULL,
  ended REAL,
  PRIMARY KEY (app_id, role, replica_id, attempt)
);
CREATE TABLE IF NOT EXISTS redirects (
  app_id TEXT PRIMARY KEY,
  state_dir TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS usage_samples (
  app_id TEXT NOT NULL,
  role TEXT NOT NULL,
  replica_id INTEGER NOT NULL,
  time REAL NOT NULL,
  sample TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS usage_by_app ON usage_samples (app_id, time);
CREATE TABLE IF NOT EXISTS usage_meta (
  app_id TEXT PRIMARY KEY,
  interval REAL NOT NULL,
  host TEXT NOT NULL,
  gpu_note TEXT NOT NULL
);
)sql";
// Bumped with every change to kSchema (each statement stays idempotent: older databases run it
// all, then the ALTERs below that they lack, then kIndexes). 2: apps.end_cause. 3: apps_listing.
constexpr int kSchemaVersion = 3;
// Columns added since version 1, each with the ALTER that adds it to an older `apps` table. Older
// binaries (a supervisor started before an upgrade) name their columns, so they keep working.
struct AddedColumn {
  const char* name;
  const char* alter;
};
constexpr AddedColumn kAddedAppColumns[] = {
    {"end_cause", "ALTER TABLE apps ADD COLUMN end_cause TEXT NOT NULL DEFAULT ''"},
};
// Made after the added columns, which they may name.
// apps_listing holds every column a listing reads, newest last: `list` and the dashboard's apps
// page read it alone, not the table, whose rows carry each app's AppDef and plan (2 KB or more:
// a listing of 10,000 apps walked 40 MB of them).
constexpr const char* kIndexes = R"sql(
CREATE INDEX IF NOT EXISTS apps_listing ON apps (created, app_id, session, name, state, num_restarts, msg,
  supervisor_pid, supervisor_start, updated, end_cause);
)sql";

// The cause as stored: its name, '' for none. A name this build does not know (a newer one
// wrote it) reads as unknown.
std::string CauseText(const std::optional<FailureCause>& cause) {
  return cause ? std::string(FailureCauseName(*cause)) : std::string();
}
std::optional<FailureCause> CauseOf(const std::string& text) {
  if (text.empty()) return std::nullopt;
  auto c = ParseFailureCause(text);
  return c ? *c : FailureCause::kUnknown;
}

}  // namespace

// Statements prepared once per connection, keyed by their SQL text's address (each a literal at
// one call site): preparing cost more than running the statement, and a 500-replica app writes
// three per replica row. An entry in use is lent out; a second user of the same text at once
// (none today) prepares its own.
class StatementCache {
 public:
  explicit StatementCache(sqlite3* db) : db_(db) {}
  ~StatementCache() {
    for (auto& [sql, entry] : entries_) sqlite3_finalize(entry.stmt);
  }
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;

  /// A ready statement for `sql` (nullptr where it does not prepare) and whether it is the cache's.
  std::pair<sqlite3_stmt*, bool> Lend(const char* sql, int& rc) {
    Entry& entry = entries_[sql];
    if (entry.stmt != nullptr && !entry.in_use) {
      entry.in_use = true;
      rc = SQLITE_OK;
      return {entry.stmt, true};
    }
    sqlite3_stmt* stmt = nullptr;
    bool cache = entry.stmt == nullptr;
    rc = sqlite3_prepare_v3(db_, sql, -1, cache ? SQLITE_PREPARE_PERSISTENT : 0, &stmt, nullptr);
    if (rc != SQLITE_OK || !cache) return {stmt, false};
    entry = {stmt, true};
    return {stmt, true};
  }
  /// Takes a lent statement back, reset and with its bindings cleared.
  void Return(const char* sql, sqlite3_stmt* stmt) {
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    entries_[sql].in_use = false;
  }

 private:
  struct Entry {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };
  sqlite3* db_;
  std::unordered_map<const char*, Entry> entries_;
};

namespace {

// A statement of the connection's cache for the scope of one use.
class Stmt {
 public:
  Stmt(StatementCache& cache, const char* sql) : cache_(cache), sql_(sql) {
    std::tie(stmt_, cached_) = cache.Lend(sql, rc_);
  }
  ~Stmt() {
    if (cached_) {
      cache_.Return(sql_, stmt_);
    } else {
      sqlite3_finalize(stmt_);
    }
  }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  Stmt& Bind(int i, const std::string& s) {
    sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Bind(int i, int v) {
    sqlite3_bind_int(stmt_, i, v);
    return *this;
  }
  Stmt& Bind(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  Stmt& BindNull(int i) {
    sqlite3_bind_null(stmt_, i);
    return *this;
  }
  int Step() { return stmt_ ? sqlite3_step(stmt_) : SQLITE_MISUSE; }
  std::string Text(int col) {
    const unsigned char* t = sqlite3_column_text(stmt_, col);
    return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
             : "";
  }
  int Int(int col) { return sqlite3_column_int(stmt_, col); }
  double Double(int col) { return sqlite3_column_double(stmt_, col); }
  bool IsNull(int col) { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  StatementCache& cache_;
  const char* sql_;
  sqlite3_stmt* stmt_ = nullptr;
  bool cached_ = false;
  int rc_ = SQLITE_OK;
};

Status DbError(sqlite3* db, std::string_view what) {
  return UnavailableError(fmt::format("local state store: {}: {}", what, sqlite3_errmsg(db)));
}

// RAII transaction: BEGIN IMMEDIATE takes the write lock up front, so two writers never deadlock
// upgrading from read to write; the busy timeout makes the second one wait.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {
    ok_ = sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK;
  }
  ~Transaction() {
    if (ok_ && !done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  bool ok() const { return ok_; }
  Status Commit() {
    done_ = true;
    if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) return DbError(db_, "commit");
    return OkStatus();
  }

 private:
  sqlite3* db_;
  bool ok_ = false;
  bool done_ = false;
};

AppRecord ReadApp(Stmt& s, bool with_blobs) {
  AppRecord a;
  int c = 0;
  a.app_id = s.Text(c++);
  a.session = s.Text(c++);
  a.name = s.Text(c++);
  if (with_blobs) {
    a.appdef_json = s.Text(c++);
    a.plan_json = s.Text(c++);
  }
  a.app_dir = s.Text(c++);
  a.state = static_cast<specs::AppState>(s.Int(c++));
  a.num_restarts = s.Int(c++);
  a.msg = s.Text(c++);
  a.structured_error_msg = s.Text(c++);
  a.supervisor_pid = s.Int(c++);
  a.supervisor_start = s.Text(c++);
  a.created = s.Double(c++);
  a.updated = s.Double(c++);
  a.cancel_requested = s.Int(c++) != 0;
  a.end_cause = CauseOf(s.Text(c++));
  return a;
}

// What the first 100 bytes of a database file say (SQLite's file format, section 1.3): the
// read and write versions are 2 in WAL mode; user_version is a big-endian integer at 60. A file
// too short (new, empty) says neither.
struct DatabaseHeader {
  bool wal = false;
  int user_version = 0;
};

DatabaseHeader ReadDatabaseHeader(int fd) {
  unsigned char h[100];
  DatabaseHeader out;
  if (::pread(fd, h, sizeof h, 0) != static_cast<ssize_t>(sizeof h) || std::memcmp(h, "SQLite format 3", 16) != 0) {
    return out;
  }
  out.wal = h[18] == 2 && h[19] == 2;
  out.user_version =
      static_cast<int>((uint32_t{h[60]} << 24) | (uint32_t{h[61]} << 16) | (uint32_t{h[62]} << 8) | h[63]);
  return out;
}

}  // namespace

double NowSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// How long a call waits for another process's lock on the store before it gives up.
constexpr std::chrono::milliseconds kBusyTimeout{30000};

Result<std::unique_ptr<StateStore>> StateStore::Open(const std::string& state_dir) {
  TORCHX_RETURN_IF_ERROR(internal::EnsurePrivateDir(state_dir, "local state store"));
  std::string path = (std::filesystem::path(state_dir) / "local.db").string();
  // The database is made 0600 before SQLite opens it (SQLite gives the -wal and -shm files the
  // database's mode); one an older version made wider is narrowed.
  DatabaseHeader header;
  if (int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600); fd >= 0) {
    header = ReadDatabaseHeader(fd);
    ::close(fd);
  }
  for (const std::string& file : {path, path + "-wal", path + "-shm"}) {  // the WAL outlives each call
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0 && (st.st_mode & 077) != 0 && st.st_uid == ::geteuid()) {
      (void)::chmod(file.c_str(), 0600);
    }
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    Status s = UnavailableError(
        fmt::format("local state store: cannot open {}: {}", path, db ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return s;
  }
  std::unique_ptr<StateStore> store(new StateStore(db, path));
  sqlite3_busy_timeout(db, static_cast<int>(kBusyTimeout.count()));
  // WAL: readers and the writer do not block each other. NORMAL sync: a commit survives a
  // process crash (the case that matters here); only a power loss can drop the last commits.
  // A small autocheckpoint: the first connection of every `torchx` call rebuilds the WAL index by
  // reading the whole WAL (1,000 pages, 4 MB, at SQLite's default: ~2 ms of a 3 ms `status`).
  // The journal mode is kept in the file: set once, not parsed again by every process (a
  // supervisor's first statement read the schema for it).
  if (!header.wal) {
    // Two processes making the store at once (a launcher and a pipeline's local step, say): the
    // switch to WAL needs the file to itself, and where waiting could deadlock with the other's
    // schema transaction SQLite answers BUSY at once, without its busy handler. The switch is
    // asked again, as any lock is waited for, for up to the busy timeout.
    auto give_up = std::chrono::steady_clock::now() + kBusyTimeout;
    int rc = SQLITE_OK;
    while ((rc = sqlite3_exec(db, "PRAGMA journal_mode=WAL;", nullptr, nullptr, nullptr)) == SQLITE_BUSY &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (rc != SQLITE_OK) {  // a damaged file says which file: the path, as Exec's errors do
      return UnavailableError(fmt::format("local state store {}: {}", path, sqlite3_errmsg(db)));
    }
  }
  TORCHX_RETURN_IF_ERROR(store->Exec("PRAGMA synchronous=NORMAL;"));
  store->SetWalCheckpointPages(kWalCheckpointPages);
  // The WAL outlives each process: the last connection to close neither checkpoints nor deletes
  // it, so the next `torchx` call does not recreate it (which costs a WAL-header and a directory
  // fsync per call). Checkpoints still run when the WAL reaches 64 pages.
  // Best effort: where either is refused, a call only pays those fsyncs again. (The files keep
  // the owner of the first process that made them, as the database itself always has.)
  int persist = 1;
  (void)sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
  (void)sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  // The schema is made once per database: its version in user_version, read with one pragma,
  // where running the seven CREATE ... IF NOT EXISTS cost every `torchx` call (and every
  // supervisor, before its replicas start) a parse of each.
  // The header's copy can lag a version still only in the WAL (a database just made): then
  // the pragma reads the current one.
  int version = header.user_version;
  if (version < kSchemaVersion) {
    Stmt v(*store->statements_, "PRAGMA user_version");
    if (v.Step() == SQLITE_ROW) version = v.Int(0);
  }
  if (version < kSchemaVersion) TORCHX_RETURN_IF_ERROR(store->MigrateSchema());
  return store;
}

// Once per database and version: in one write transaction, so that two processes opening an
// older database at once do not both add a column (the second sees the new version).
Status StateStore::MigrateSchema() {
  Transaction tx(db_);
  if (!tx.ok()) return DbError(db_, "begin schema change");
  {
    Stmt v(*statements_, "PRAGMA user_version");
    if (v.Step() == SQLITE_ROW && v.Int(0) >= kSchemaVersion) return tx.Commit();
  }
  TORCHX_RETURN_IF_ERROR(Exec(kSchema));
  std::set<std::string> columns;
  {
    Stmt info(*statements_, "PRAGMA table_info(apps)");
    while (info.Step() == SQLITE_ROW) columns.insert(info.Text(1));
  }
  for (const AddedColumn& c : kAddedAppColumns) {
    if (!columns.contains(c.name)) TORCHX_RETURN_IF_ERROR(Exec(c.alter));
  }
  TORCHX_RETURN_IF_ERROR(Exec(kIndexes));
  TORCHX_RETURN_IF_ERROR(Exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion).c_str()));
  return tx.Commit();
}

StateStore::StateStore(sqlite3* db, std::string path)
    : db_(db), path_(std::move(path)), statements_(std::make_unique<StatementCache>(db)) {}

StateStore::~StateStore() {
  statements_.reset();  // finalized before the connection closes
  sqlite3_close(db_);
}

// SQLite's autocheckpoint, with the WAL's size kept for CheckpointWal.
int StateStore::OnWalCommit(void* self, sqlite3* db, const char* name, int frames) {
  auto* store = static_cast<StateStore*>(self);
  store->wal_frames_ = frames;
  if (store->checkpoint_pages_ > 0 && frames >= store->checkpoint_pages_) {
    (void)sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  }
  return SQLITE_OK;
}

void StateStore::SetWalCheckpointPages(int pages) {
  checkpoint_pages_ = pages;
  sqlite3_wal_hook(db_, &StateStore::OnWalCommit, this);
}

void StateStore::CheckpointWal() {
  // A WAL checkpointed to its end is started again by the next writer, which syncs its header:
  // a small WAL is left to the threshold, so that this does not happen after every app.
  if (wal_frames_ < kWalCheckpointPages) return;
  (void)sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
}

Status StateStore::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    Status s = UnavailableError(fmt::format("local state store {}: {}", path_, err ? err : "error"));
    sqlite3_free(err);
    return s;
  }
  return OkStatus();
}

Status StateStore::InsertApp(const AppRecord& a) {
  Stmt s(*statements_,
         "INSERT INTO apps (app_id, session, name, appdef_json, plan_json, app_dir, state, num_restarts, msg,"
         " structured_error_msg, supervisor_pid, supervisor_start, created, updated, cancel_requested, end_cause)"
         " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,0,?)");
  if (!s.ok()) return DbError(db_, "insert app");
  s.Bind(1, a.app_id)
      .Bind(2, a.session)
      .Bind(3, a.name)
      .Bind(4, a.appdef_json)
      .Bind(5, a.plan_json)
      .Bind(6, a.app_dir)
      .Bind(7, static_cast<int>(a.state))
      .Bind(8, a.num_restarts)
      .Bind(9, a.msg)
      .Bind(10, a.structured_error_msg)
      .Bind(11, a.supervisor_pid)
      .Bind(12, a.supervisor_start)
      .Bind(13, a.created)
      .Bind(14, a.updated)
      .Bind(15, CauseText(a.end_cause));
  int rc = s.Step();
  if (rc == SQLITE_CONSTRAINT) return AlreadyExistsError(fmt::format("local: app {} already exists", a.app_id));
  if (rc != SQLITE_DONE) return DbError(db_, "insert app");
  return OkStatus();
}

Status StateStore::InsertStartedApp(const AppRecord& app, const std::vector<ReplicaRecord>& replicas) {
  Transaction tx(db_);
  if (!tx.ok()) return DbError(db_, "begin");
  TORCHX_RETURN_IF_ERROR(InsertApp(app));
  TORCHX_RETURN_IF_ERROR(WriteReplicas(replicas));
  return tx.Commit();
}

Result<std::optional<AppRecord>> StateStore::GetApp(const std::string& app_id) {
  Stmt s(*statements_,
         "SELECT app_id, session, name, appdef_json, plan_json, app_dir, state, num_restarts, msg,"
         " structured_error_msg, supervisor_pid, supervisor_start, created, updated, cancel_requested, end_cause"
         " FROM apps WHERE app_id = ?");
  if (!s.ok()) return DbError(db_, "get app");
  s.Bind(1, app_id);
  int rc = s.Step();
  if (rc == SQLITE_DONE) return std::optional<AppRecord>();
  if (rc != SQLITE_ROW) return DbError(db_, "get app");
  return std::optional<AppRecord>(ReadApp(s, true));
}

Result<std::vector<ReplicaRecord>> StateStore::GetReplicas(const std::string& app_id) {
  Stmt s(*statements_,
         "SELECT app_id, role, replica_id, attempt, pid, proc_start, state, exit_code, structured_error_msg"
         " FROM replicas WHERE app_id = ? ORDER BY role, replica_id");
  if (!s.ok()) return DbError(db_, "get replicas");
  s.Bind(1, app_id);
  std::vector<ReplicaRecord> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    ReplicaRecord r;
    r.app_id = s.Text(0);
    r.role = s.Text(1);
    r.replica_id = s.Int(2);
    r.attempt = s.Int(3);
    r.pid = s.Int(4);
    r.proc_start = s.Text(5);
    r.state = static_cast<specs::AppState>(s.Int(6));
    if (!s.IsNull(7)) r.exit_code = s.Int(7);
    r.structured_error_msg = s.Text(8);
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return DbError(db_, "get replicas");
  return out;
}

Result<std::vector<AppRecord>> StateStore::ListApps() {
  // Newest first, from apps_listing alone (kIndexes): the columns a listing needs, not the
  // AppDef, plan, log directory or error file (empty in what this returns).
  Stmt s(*statements_,
         "SELECT app_id, session, name, state, num_restarts, msg, supervisor_pid, supervisor_start, created, updated,"
         " end_cause FROM apps ORDER BY created DESC");
  if (!s.ok()) return DbError(db_, "list apps");
  std::vector<AppRecord> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    AppRecord& a = out.emplace_back();
    int c = 0;
    a.app_id = s.Text(c++);
    a.session = s.Text(c++);
    a.name = s.Text(c++);
    a.state = static_cast<specs::AppState>(s.Int(c++));
    a.num_restarts = s.Int(c++);
    a.msg = s.Text(c++);
    a.supervisor_pid = s.Int(c++);
    a.supervisor_start = s.Text(c++);
    a.created = s.Double(c++);
    a.updated = s.Double(c++);
    a.end_cause = CauseOf(s.Text(c++));
  }
  if (rc != SQLITE_DONE) return DbError(db_, "list apps");
  return out;
}

Status StateStore::SetSupervisor(const std::string& app_id, int pid, const std::string& start) {
  Stmt s(*statements_, "UPDATE apps SET supervisor_pid = ?, supervisor_start = ?, updated = ? WHERE app_id = ?");
  s.Bind(1, pid).Bind(2, start).Bind(3, NowSeconds()).Bind(4, app_id);
  if (s.Step() != SQLITE_DONE) return DbError(db_, "set supervisor");
  return OkStatus();
}

Result<bool> StateStore::SetAppState(const std::string& app_id, specs::AppState state, int num_restarts,
                                     const std::string& msg, const std::string& structured_error_msg,
                                     std::optional<FailureCause> cause) {
  return WriteAppState(app_id, state, num_restarts, msg, structured_error_msg, cause);
}

Result<bool> StateStore::WriteAppState(const std::string& app_id, specs::AppState state, int num_restarts,
                                       const std::string& msg, const std::string& structured_error_msg,
                                       std::optional<FailureCause> cause) {
  // Terminal states are final: a late writer (a reader that detected a lost supervisor racing the
  // supervisor's own last write) must not overwrite the first terminal state.
  Stmt s(*statements_,
         "UPDATE apps SET state = ?, num_restarts = ?, msg = ?, structured_error_msg = ?, updated = ?, end_cause = ?"
         " WHERE app_id = ? AND state NOT IN (4, 5, 6)");
  s.Bind(1, static_cast<int>(state))
      .Bind(2, num_restarts)
      .Bind(3, msg)
      .Bind(4, structured_error_msg)
      .Bind(5, NowSeconds())
      .Bind(6, CauseText(cause))
      .Bind(7, app_id);
  if (s.Step() != SQLITE_DONE) return DbError(db_, "set app state");
  return sqlite3_changes(db_) > 0;
}

Result<bool> StateStore::SetSupervisorAndCheckCancel(const std::string& app_id, int pid, const std::string& start) {
  Transaction tx(db_);
  if (!tx.ok()) return DbError(db_, "begin");
  TORCHX_RETURN_IF_ERROR(SetSupervisor(app_id, pid, start));
  bool cancel = false;
  {
    Stmt s(*statements_, "SELECT cancel_requested FROM apps WHERE app_id = ?");
    s.Bind(1, app_id);
    int rc = s.Step();
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return DbError(db_, "read cancel request");
    cancel = rc == SQLITE_ROW && s.Int(0) != 0;
  }
  TORCHX_RETURN_IF_ERROR(tx.Commit());
  return cancel;
}

Status StateStore::RequestCancel(const std::string& app_id) {
  Stmt s(*statements_, "UPDATE apps SET cancel_requested = 1, updated = ? WHERE app_id = ?");
  s.Bind(1, NowSeconds()).Bind(2, app_id);
  if (s.Step() != SQLITE_DONE) return DbError(db_, "request cancel");
  return OkStatus();
}

Status StateStore::PutReplicas(const std::vector<ReplicaRecord>& replicas) {
  Transaction tx(db_);
  if (!tx.ok()) return DbError(db_, "begin");
  TORCHX_RETURN_IF_ERROR(WriteReplicas(replicas));
  return tx.Commit();
}

Status StateStore::PutReplicasAndState(const std::vector<ReplicaRecord>& replicas, const std::string& app_id,
                                       specs::AppState state, int num_restarts, const std::string& msg,
                                       const std::string& structured_error_msg, std::optional<FailureCause> cause) {
  Transaction tx(db_);
  if (!tx.ok()) return DbError(db_, "begin");
  TORCHX_RETURN_IF_ERROR(WriteReplicas(replicas));
  TORCHX_RETURN_IF_ERROR(WriteAppState(app_id, state, num_restarts, msg, structured_error_msg, cause).status());
  return tx.Commit();
}

Status StateStore::WriteReplicas(const std::vector<ReplicaRecord>& replicas) {
  for (const ReplicaRecord& r : replicas) {
    Stmt row(*statements_,
             "INSERT OR REPLACE INTO replicas (app_id, role, replica_id, attempt, pid, proc_start, state,"
             " exit_code, structured_error_msg) VALUES (?,?,?,?,?,?,?,?,?)");
    row.Bind(1, r.app_id)
        .Bind(2, r.role)
        .Bind(3, r.replica_id)
        .Bind(4, r.attempt)
        .Bind(5, r.pid)
        .Bind(6, r.proc_start)
        .Bind(7, static_cast<int>(r.state))
        .Bind(9, r.structured_error_msg);
    if (r.exit_code)
      row.Bind(8, *r.exit_code);
    else
      row.BindNull(8);
    if (row.Step() != SQLITE_DONE) return DbError(db_, "put replica");
    TORCHX_RETURN_IF_ERROR(RecordAttempt(r));
  }
  return OkStatus();
}

// The retry history, kept beside the replica rows in the same transaction: an attempt starts when
// first written and ends when it is first terminal; a newer attempt ends the older ones.
Status StateStore::RecordAttempt(const ReplicaRecord& r) {
  double now = NowSeconds();
  bool terminal = specs::IsTerminal(r.state);
  Stmt up(*statements_,
          "INSERT INTO attempts (app_id, role, replica_id, attempt, state, exit_code, started, ended)"
          " VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (app_id, role, replica_id, attempt) DO UPDATE SET"
          " state = excluded.state, exit_code = excluded.exit_code, ended = COALESCE(ended, excluded.ended)");
  up.Bind(1, r.app_id)
      .Bind(2, r.role)
      .Bind(3, r.replica_id)
      .Bind(4, r.attempt)
      .Bind(5, static_cast<int>(r.state))
      .Bind(7, now);
  if (r.exit_code)
    up.Bind(6, *r.exit_code);
  else
    up.BindNull(6);
  if (terminal)
    up.Bind(8, now);
  else
    up.BindNull(8);
  if (up.Step() != SQLITE_DONE) return DbError(db_, "record attempt");
  if (r.attempt == 0) return OkStatus();  // no older attempt to end
  Stmt older(*statements_,
             "UPDATE attempts SET ended = ? WHERE app_id = ? AND role = ? AND replica_id = ? AND attempt < ?"
             " AND ended IS NULL");
  older.Bind(1, now).Bind(2, r.app_id).Bind(3, r.role).Bind(4, r.replica_id).Bind(5, r.attempt);
  if (older.Step() != SQLITE_DONE) return DbError(db_, "record attempt");
  return OkStatus();
}

Result<std::vector<AttemptRecord>> StateStore::GetAttempts(const std::string& app_id) {
  Stmt s(*statements_,
         "SELECT role, replica_id, attempt, state, exit_code, started, ended FROM attempts WHERE app_id = ?"
         " ORDER BY role, replica_id, attempt");
  if (!s.ok()) return DbError(db_, "get attempts");
  s.Bind(1, app_id);
  std::vector<AttemptRecord> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    AttemptRecord a;
    a.role = s.Text(0);
    a.replica_id = s.Int(1);
    a.attempt = s.Int(2);
    a.state = static_cast<specs::AppState>(s.Int(3));
    if (!s.IsNull(4)) a.exit_code = s.Int(4);
    a.started = s.Double(5);
    if (!s.IsNull(6)) a.ended = s.Double(6);
    out.push_back(std::move(a));
  }
  if (rc != SQLITE_DONE) return DbError(db_, "get attempts");
  return out;
}

Status StateStore::DeleteApp(const std::string& app_id) {
  Transaction tx(db_);
  if (!tx.ok()) return DbError(db_, "begin");
  Stmt a(*statements_, "DELETE FROM apps WHERE app_id = ?");
  a.Bind(1, app_id);
  Stmt r(*statements_, "DELETE FROM replicas WHERE app_id = ?");
  r.Bind(1, app_id);
  Stmt h(*statements_, "DELETE FROM attempts WHERE app_id = ?");
  h.Bind(1, app_id);
  Stmt u(*statements_, "DELETE FROM usage_samples WHERE app_id = ?");
  u.Bind(1, app_id);
  Stmt m(*statements_, "DELETE FROM usage_meta WHERE app_id = ?");
  m.Bind(1, app_id);
  if (a.Step() != SQLITE_DONE || r.Step() != SQLITE_DONE || h.Step() != SQLITE_DONE || u.Step() != SQLITE_DONE ||
      m.Step() != SQLITE_DONE) {
    return DbError(db_, "delete app");
  }
  return tx.Commit();
}

Status StateStore::PutUsageMeta(const std::string& app_id, double interval, const std::string& host,
                                const std::string& gpu_note) {
  Stmt s(*statements_, "INSERT OR REPLACE INTO usage_meta (app_id, interval, host, gpu_note) VALUES (?,?,?,?)");
  s.Bind(1, app_id).Bind(2, interval).Bind(3, host).Bind(4, gpu_note);
  if (s.Step() != SQLITE_DONE) return DbError(db_, "put usage meta");
  return OkStatus();
}

Status StateStore::PutUsage(const std::string& app_id, const std::vector<UsageRow>& rows, double drop_before) {
  Transaction tx(db_);
  if (!tx.ok()) return DbError(db_, "begin");
  for (const UsageRow& r : rows) {
    Stmt s(*statements_, "INSERT INTO usage_samples (app_id, role, replica_id, time, sample) VALUES (?,?,?,?,?)");
    s.Bind(1, app_id).Bind(2, r.role).Bind(3, r.replica_id).Bind(4, r.time).Bind(5, r.sample_json);
    if (s.Step() != SQLITE_DONE) return DbError(db_, "put usage");
  }
  Stmt old(*statements_, "DELETE FROM usage_samples WHERE app_id = ? AND time < ?");
  old.Bind(1, app_id).Bind(2, drop_before);
  if (old.Step() != SQLITE_DONE) return DbError(db_, "put usage");
  return tx.Commit();
}

Result<std::optional<UsageRecord>> StateStore::GetUsage(const std::string& app_id, double since) {
  UsageRecord out;
  {
    Stmt m(*statements_, "SELECT interval, host, gpu_note FROM usage_meta WHERE app_id = ?");
    m.Bind(1, app_id);
    int rc = m.Step();
    if (rc == SQLITE_DONE) return std::optional<UsageRecord>();
    if (rc != SQLITE_ROW) return DbError(db_, "get usage");
    out.interval = m.Double(0);
    out.host = m.Text(1);
    out.gpu_note = m.Text(2);
  }
  Stmt s(*statements_,
         "SELECT role, replica_id, time, sample FROM usage_samples WHERE app_id = ? AND time >= ?"
         " ORDER BY time, role, replica_id");
  s.Bind(1, app_id).Bind(2, since);
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.rows.push_back({s.Text(0), s.Int(1), s.Double(2), s.Text(3)});
  if (rc != SQLITE_DONE) return DbError(db_, "get usage");
  return std::optional<UsageRecord>(std::move(out));
}

Status StateStore::PutRedirect(const std::string& app_id, const std::string& state_dir) {
  Stmt s(*statements_, "INSERT OR REPLACE INTO redirects (app_id, state_dir) VALUES (?, ?)");
  s.Bind(1, app_id).Bind(2, state_dir);
  if (s.Step() != SQLITE_DONE) return DbError(db_, "put redirect");
  return OkStatus();
}

Result<std::optional<std::string>> StateStore::GetRedirect(const std::string& app_id) {
  Stmt s(*statements_, "SELECT state_dir FROM redirects WHERE app_id = ?");
  s.Bind(1, app_id);
  int rc = s.Step();
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  if (rc != SQLITE_ROW) return DbError(db_, "get redirect");
  return std::optional<std::string>(s.Text(0));
}

Status StateStore::DeleteRedirect(const std::string& app_id) {
  Stmt s(*statements_, "DELETE FROM redirects WHERE app_id = ?");
  s.Bind(1, app_id);
  if (s.Step() != SQLITE_DONE) return DbError(db_, "delete redirect");
  return OkStatus();
}

}  // namespace torchx::schedulers::local

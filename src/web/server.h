// `ratchet serve`: the dashboard's HTTP server. Serves the embedded page and
// a read-only JSON/SSE API over a LoopSource, and nothing else: no request
// names a file, and no handler writes anything.
//
//   GET /, /index.html, /app.js, /app.css   the page (embedded at build time)
//   GET /api/state?from=ID                  settings, sessions, live, rows >= ID
//   GET /api/experiment/ID                  one row with runs, diff, log tail
//   GET /api/events                         server-sent events: `ledger`
//                                           {"version":N} when the ledger
//                                           changed, `live` {...} when
//                                           live.json changed
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "web/loop_source.h"

namespace httplib {
class Server;
}

namespace ratchet {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8420;  // 0: any free port (see DashboardServer::port())
  /// Required for a non-loopback host. When set, every request must carry it
  /// as `Authorization: Bearer TOKEN` or as the query parameter `token=TOKEN`.
  std::string token;
  double poll_s = 0.25;     // how often the ledger and live.json are checked
  double keepalive_s = 10;  // SSE comment interval (also notices gone clients)
  int max_streams = 16;     // concurrent SSE clients
};

class DashboardServer {
 public:
  DashboardServer(ServeOptions options, std::unique_ptr<LoopSource> source);
  ~DashboardServer();
  DashboardServer(const DashboardServer&) = delete;
  DashboardServer& operator=(const DashboardServer&) = delete;

  /// Checks the bind policy, loads the loop once, binds and starts serving in
  /// background threads. False with a message (nothing left running) on error.
  bool Start(std::string* err);
  /// The port listened on (useful with port 0).
  int port() const { return port_; }
  /// Stops serving and joins every thread. Safe to call twice; call it from
  /// the thread that called Start().
  void Stop();

 private:
  struct Snapshot;
  void Route();
  void PollOnce();
  void WatchLoop();
  std::shared_ptr<const Snapshot> Current();

  ServeOptions options_;
  std::unique_ptr<LoopSource> source_;
  std::mutex source_mu_;  // the source is not thread-safe (one SQLite connection)
  std::unique_ptr<httplib::Server> http_;
  std::thread listener_, watcher_;
  int port_ = 0;

  std::mutex mu_;
  std::condition_variable changed_;
  std::shared_ptr<const Snapshot> snapshot_;
  std::string ledger_stamp_, live_stamp_;
  bool stopping_ = false;
  int streams_ = 0;
  std::atomic<bool> started_{false};
};

}  // namespace ratchet

#include "web/server.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "web/access.h"
#include "web/assets.h"
#include "web/state_json.h"

namespace ratchet {
namespace {

double WallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Sends `body` as is. A body set with set_content() is compressed by
// cpp-httplib whenever the client accepts gzip or brotli, which costs
// seconds on a large state and buys nothing on loopback; a content
// provider of known length is sent uncompressed.
void SendBody(httplib::Response& res, std::string body, const char* type) {
  auto data = std::make_shared<const std::string>(std::move(body));
  res.set_content_provider(data->size(), type,
                           [data](size_t offset, size_t length, httplib::DataSink& sink) {
                             return sink.write(data->data() + offset, length);
                           });
}

void SendError(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  SendBody(res, nlohmann::json({{"error", message}}).dump(), "application/json");
}

// Percent-encodes a token for a query string.
std::string UrlEncode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace

// What the ledger held at one version. Shared, never copied: a live.json
// change (twice a second while a run prints progress) makes a new Snapshot
// that points at the same LedgerData.
struct LedgerData {
  LedgerView view;
  std::string all_rows;  // StateRowsMembers(.., 1): what a first load asks for
};

struct DashboardServer::Snapshot {
  long long ledger_version = 0;
  long long live_version = 0;
  std::shared_ptr<const LedgerData> ledger = std::make_shared<LedgerData>();
  LiveView live;
  std::string ledger_error;  // the last load failed: shown, previous rows kept
};

DashboardServer::DashboardServer(ServeOptions options, std::unique_ptr<LoopSource> source)
    : options_(std::move(options)), source_(std::move(source)) {}

DashboardServer::~DashboardServer() { Stop(); }

std::shared_ptr<const DashboardServer::Snapshot> DashboardServer::Current() {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshot_;
}

// Reloads what changed since the last poll and wakes the event streams.
void DashboardServer::PollOnce() {
  std::string ledger_stamp, live_stamp;
  LedgerView ledger;
  LiveView live;
  std::string err;
  LoopSettings settings;
  bool ledger_changed = false, live_changed = false, load_ok = true;
  {
    std::lock_guard<std::mutex> lock(source_mu_);
    settings = source_->Settings();
    ledger_stamp = source_->LedgerStamp();
    live_stamp = source_->LiveStamp();
    ledger_changed = ledger_stamp != ledger_stamp_ || !snapshot_;
    live_changed = live_stamp != live_stamp_ || !snapshot_;
    if (ledger_changed) load_ok = source_->LoadLedger(&ledger, &err);
    if (live_changed) live = source_->LoadLive();
  }
  std::shared_ptr<LedgerData> data;
  if (ledger_changed && load_ok) {
    data = std::make_shared<LedgerData>();
    // Serialised once per change, not once per page load.
    data->all_rows = StateRowsMembers(settings, ledger, 1);
    data->view = std::move(ledger);
  }
  std::lock_guard<std::mutex> lock(mu_);
  // A load that fails again the same way is not news (it is retried each poll).
  if (ledger_changed && !load_ok && snapshot_ && snapshot_->ledger_error == err) {
    ledger_changed = false;
  }
  if (!ledger_changed && !live_changed) return;
  auto next = snapshot_ ? std::make_shared<Snapshot>(*snapshot_) : std::make_shared<Snapshot>();
  if (ledger_changed) {
    if (load_ok) {
      next->ledger = std::move(data);
      next->ledger_error.clear();
      ledger_stamp_ = ledger_stamp;
    } else {
      // Keep the rows we had; try again next poll (the stamp is not taken).
      next->ledger_error = err;
    }
    ++next->ledger_version;
  }
  if (live_changed) {
    next->live = std::move(live);
    live_stamp_ = live_stamp;
    ++next->live_version;
  }
  snapshot_ = std::move(next);
  changed_.notify_all();
}

void DashboardServer::WatchLoop() {
  const auto period = std::chrono::duration<double>(options_.poll_s);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    PollOnce();
    lock.lock();
    changed_.wait_for(lock, period, [this] { return stopping_; });
  }
}

void DashboardServer::Route() {
  httplib::Server& http = *http_;
  // Every SSE client holds a worker thread; leave room for page requests.
  const int workers = options_.max_streams + 8;
  http.new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
  http.set_keep_alive_timeout(2);
  http.set_payload_max_length(64 << 10);  // nothing here takes a body

  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("Cache-Control", "no-store");
    res.set_header("Content-Security-Policy",
                   "default-src 'self'; img-src 'self' data:; base-uri 'none'; "
                   "form-action 'none'; frame-ancestors 'none'");
    RequestAuth auth;
    auth.authorization = req.get_header_value("Authorization");
    auth.query_token = req.get_param_value("token");
    auth.host_header = req.get_header_value("Host");
    switch (CheckRequest(auth, options_.token)) {
      case AccessDecision::kAllow:
        break;
      case AccessDecision::kUnauthorized:
        res.set_header("WWW-Authenticate", "Bearer");
        SendError(res, 401, "this dashboard needs its token (?token=... or Authorization: Bearer)");
        return httplib::Server::HandlerResponse::Handled;
      case AccessDecision::kForbidden:
        SendError(res, 403, "Host must be a loopback name (127.0.0.1, localhost, [::1])");
        return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method != "GET" && req.method != "HEAD") {
      res.set_header("Allow", "GET, HEAD");
      SendError(res, 405, "the dashboard is read-only");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  http.Get("/api/state", [this](const httplib::Request& req, httplib::Response& res) {
    int from = 1;
    if (req.has_param("from")) {
      const std::string v = req.get_param_value("from");
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 1 || n > 1000000000) {
        return SendError(res, 400, "from must be a positive experiment id");
      }
      from = static_cast<int>(n);
    }
    auto snap = Current();
    LoopSettings settings;
    {
      std::lock_guard<std::mutex> lock(source_mu_);
      settings = source_->Settings();
    }
    SendBody(res,
             StateJson(settings, snap->ledger->view, snap->live, snap->ledger_version, from,
                       WallNow(), from == 1 ? snap->ledger->all_rows : std::string()),
             "application/json");
  });

  http.Get(R"(/api/experiment/(\d{1,9}))",
           [this](const httplib::Request& req, httplib::Response& res) {
             int id = std::stoi(req.matches[1].str());
             // The row comes from the snapshot: loading the whole ledger for
             // one click would take as long as a reload.
             auto snap = Current();
             const auto& all = snap->ledger->view.experiments;
             auto it = std::lower_bound(all.begin(), all.end(), id,
                                        [](const Experiment& e, int v) { return e.id < v; });
             if (it == all.end() || it->id != id) {
               return SendError(res, 404, "no experiment " + std::to_string(id));
             }
             // The keep it was proposed from: its curve is drawn beside this one's.
             const Experiment* reference = nullptr;
             for (auto k = all.begin(); k != it && !it->parent_commit.empty(); ++k)
               if (k->status == Status::kKeep && k->candidate_commit == it->parent_commit)
                 reference = &*k;
             ExperimentDetail detail;
             std::string err;
             bool ok;
             {
               std::lock_guard<std::mutex> lock(source_mu_);
               ok = source_->LoadDetail(*it, reference, &detail, &err);
             }
             if (!ok) return SendError(res, 500, err);
             SendBody(res, DetailJson(detail), "application/json");
           });

  http.Get("/api/events", [this](const httplib::Request&, httplib::Response& res) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (streams_ >= options_.max_streams) {
        return SendError(res, 503, "too many open dashboards");
      }
      ++streams_;
    }
    res.set_header("X-Accel-Buffering", "no");
    // State per stream: what this client has been told.
    auto seen_ledger = std::make_shared<long long>(-1);
    auto seen_live = std::make_shared<long long>(-1);
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, seen_ledger, seen_live](size_t, httplib::DataSink& sink) {
          std::shared_ptr<const Snapshot> snap;
          {
            std::unique_lock<std::mutex> lock(mu_);
            auto fresh = [&] {
              return stopping_ || snapshot_->ledger_version != *seen_ledger ||
                     snapshot_->live_version != *seen_live;
            };
            bool woke =
                changed_.wait_for(lock, std::chrono::duration<double>(options_.keepalive_s), fresh);
            if (stopping_) return false;
            if (!woke) {
              // A comment line: keeps proxies open and notices gone clients.
              static const char kPing[] = ": ping\n\n";
              return sink.write(kPing, sizeof kPing - 1);
            }
            snap = snapshot_;
          }
          std::string out;
          if (snap->ledger_version != *seen_ledger) {
            nlohmann::json data = {{"version", snap->ledger_version}};
            if (!snap->ledger_error.empty()) data["error"] = snap->ledger_error;
            out += "event: ledger\ndata: " + data.dump() + "\n\n";
            *seen_ledger = snap->ledger_version;
          }
          if (snap->live_version != *seen_live) {
            out += "event: live\ndata: " + LiveJson(snap->live) + "\n\n";
            *seen_live = snap->live_version;
          }
          return sink.write(out.data(), out.size());
        },
        [this](bool) {
          std::lock_guard<std::mutex> lock(mu_);
          --streams_;
        });
  });

  // The page. Exact paths only: whatever is not an embedded file is 404.
  http.Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
    const Asset* asset = FindAsset(req.path);
    if (!asset) return SendError(res, 404, "not found");
    std::string body(asset->body);
    if (asset->path == "/index.html" || asset->path == "/demo") {
      // The page's own script, style and first state request carry the token
      // too (the browser fetches them before any script runs).
      // {{Q}} starts a query string, {{A}} extends one.
      std::string t = options_.token.empty() ? "" : "token=" + UrlEncode(options_.token);
      for (size_t at; (at = body.find("{{Q}}")) != std::string::npos;) {
        body.replace(at, 5, t.empty() ? "" : "?" + t);
      }
      for (size_t at; (at = body.find("{{A}}")) != std::string::npos;) {
        body.replace(at, 5, t.empty() ? "" : "&" + t);
      }
    }
    SendBody(res, std::move(body), std::string(asset->content_type).c_str());
  });
}

bool DashboardServer::Start(std::string* err) {
  if (!CheckBindPolicy(options_.host, options_.token, err)) return false;
  PollOnce();
  if (!snapshot_->ledger_error.empty()) {
    *err = snapshot_->ledger_error;
    return false;
  }
  http_ = std::make_unique<httplib::Server>();
  Route();
  if (options_.port == 0) {
    port_ = http_->bind_to_any_port(options_.host);
    if (port_ < 0) port_ = 0;
  } else {
    port_ = http_->bind_to_port(options_.host, options_.port) ? options_.port : 0;
  }
  if (port_ == 0) {
    *err = "cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
           " (in use? try --port 0 for any free port)";
    http_.reset();
    return false;
  }
  started_ = true;
  listener_ = std::thread([this] { http_->listen_after_bind(); });
  watcher_ = std::thread([this] { WatchLoop(); });
  return true;
}

void DashboardServer::Stop() {
  if (!started_.exchange(false)) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  http_->stop();
  if (listener_.joinable()) listener_.join();
  if (watcher_.joinable()) watcher_.join();
}

}  // namespace ratchet

#include "notify/ledger_steering.h"

#include <chrono>
#include <ctime>
#include <limits>
#include <set>
#include <nlohmann/json.hpp>

namespace ratchet {

PauseState PauseStateOf(const std::vector<LedgerEvent>& events, PauseState start) {
  for (const LedgerEvent& e : events) {
    if (e.kind == "pause") start = PauseState{true, e.at};
    else if (e.kind == "resume") start = PauseState{false, e.at};
  }
  return start;
}

std::string FormatUtcMinute(double unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

std::string NoteGuidanceLine(const LedgerEvent& note) {
  nlohmann::json j = nlohmann::json::parse(note.detail_json, nullptr, false);
  if (!j.is_object() || !j.contains("text") || !j["text"].is_string()) return "";
  std::string text = j["text"].get<std::string>();
  if (text.empty()) return "";
  return "note from the user (" + FormatUtcMinute(note.at) + "): " + text;
}

std::string NoteDetail(const std::string& text) { return nlohmann::json{{"text", text}}.dump(); }
std::string PauseDetail(const std::string& by) { return nlohmann::json{{"by", by}}.dump(); }
std::string RerunDetail(int experiment_id) {
  return nlohmann::json{{"experiment", experiment_id}, {"by", "ratchet rerun"}}.dump();
}

namespace {

// The integer `key` of an event's detail, or 0.
long long DetailNumber(const LedgerEvent& e, const char* key) {
  nlohmann::json j = nlohmann::json::parse(e.detail_json, nullptr, false);
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) return 0;
  return j[key].get<long long>();
}

}  // namespace

std::vector<RerunRequest> PendingReruns(const std::vector<LedgerEvent>& events) {
  std::vector<RerunRequest> pending;
  std::set<long long> taken;
  for (const LedgerEvent& e : events)
    if (e.kind == "rerun_taken") taken.insert(DetailNumber(e, "request"));
  for (const LedgerEvent& e : events) {
    if (e.kind != "rerun" || taken.count(e.seq)) continue;
    const long long id = DetailNumber(e, "experiment");
    if (id > 0 && id <= std::numeric_limits<int>::max())
      pending.push_back(RerunRequest{e.seq, static_cast<int>(id)});
  }
  return pending;
}

bool LedgerSteering::Refresh(std::string* err) {
  std::vector<LedgerEvent> events;
  if (!ledger_->LoadEvents(seen_seq_, &events, err)) return false;
  for (const LedgerEvent& e : events) {
    seen_seq_ = std::max(seen_seq_, e.seq);
    if (e.kind == "rerun" || e.kind == "rerun_taken") rerun_events_.push_back(e);
    if (e.kind != "note") continue;
    std::string line = NoteGuidanceLine(e);
    if (!line.empty()) notes_.push_back(line);
  }
  pause_ = PauseStateOf(events, pause_);
  return true;
}

std::vector<std::string> LedgerSteering::Guidance() {
  std::string err;
  if (!Refresh(&err)) last_error_ = err;  // keep the notes read so far
  size_t from = notes_.size() > options_.max_notes ? notes_.size() - options_.max_notes : 0;
  return std::vector<std::string>(notes_.begin() + static_cast<long>(from), notes_.end());
}

bool LedgerSteering::Paused(const std::function<void(const std::string&)>& note) {
  std::string err;
  if (!Refresh(&err)) {
    // A ledger that cannot be read cannot hold the loop: go on, say so once.
    if (err != last_error_) note("could not read the ledger's pause events: " + err);
    last_error_ = err;
    return false;
  }
  if (pause_.paused && !told_paused_)
    note("paused by the user at " + FormatUtcMinute(pause_.since) +
         "; no new experiment starts (`ratchet resume DIR` goes on)");
  if (!pause_.paused && told_paused_) note("resumed by the user");
  told_paused_ = pause_.paused;
  return pause_.paused;
}

bool LedgerSteering::TakeRerun(RerunRequest* request) {
  std::string err;
  if (!Refresh(&err)) {
    last_error_ = err;
    return false;
  }
  std::vector<RerunRequest> pending = PendingReruns(rerun_events_);
  if (pending.empty()) return false;
  LedgerEvent taken;
  taken.at = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  taken.kind = "rerun_taken";
  taken.detail_json =
      nlohmann::json{{"request", pending[0].seq}, {"experiment", pending[0].experiment_id}}.dump();
  // Marked first: a crash now loses the request rather than serving it twice.
  if (!ledger_->AddEvent(taken, &err)) {
    last_error_ = err;
    return false;
  }
  *request = pending[0];  // the next Refresh reads `taken` back
  return true;
}

}  // namespace ratchet

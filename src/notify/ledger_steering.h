// The real Steering port (core/steering.h): the user's notes and pauses are
// ledger events written by `ratchet note` / `ratchet pause` / `ratchet
// resume` (a second SQLite writer; WAL and a busy timeout make that safe),
// and `ratchet run` reads the new ones before each experiment and proposal.
//   kind "note"    detail {"text": "try a wider MLP"}
//   kind "pause"   detail {"by": "ratchet pause"}
//   kind "resume"  detail {"by": "ratchet resume"}
//   kind "rerun"   detail {"experiment": 7, "by": "ratchet rerun"}
//   kind "rerun_taken"  detail {"request": <seq of the rerun event>, "experiment": 7}
//                  (written by `ratchet run` when it serves the request)
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/ledger.h"
#include "core/steering.h"

namespace ratchet {

/// Whether the loop is paused after a list of events: the last "pause" or
/// "resume" wins.
struct PauseState {
  bool paused = false;
  double since = 0;  // unix seconds of the pause event
};
PauseState PauseStateOf(const std::vector<LedgerEvent>& events, PauseState start = {});

/// "2026-12-03 14:05 UTC".
std::string FormatUtcMinute(double unix_seconds);
/// The guidance line of a "note" event: "note from the user (<time>): <text>";
/// "" when the event carries no text.
std::string NoteGuidanceLine(const LedgerEvent& note);
/// The detail_json of a note, a pause or a resume.
std::string NoteDetail(const std::string& text);
std::string PauseDetail(const std::string& by);
std::string RerunDetail(int experiment_id);
/// The requests among `events` (oldest first) that no "rerun_taken" event
/// answers yet.
std::vector<RerunRequest> PendingReruns(const std::vector<LedgerEvent>& events);

class LedgerSteering : public Steering {
 public:
  struct Options {
    size_t max_notes = 10;  // the most recent notes every proposal sees
  };
  LedgerSteering(Ledger* ledger, Options options) : ledger_(ledger), options_(options) {}
  explicit LedgerSteering(Ledger* ledger) : LedgerSteering(ledger, Options()) {}

  std::vector<std::string> Guidance() override;
  bool Paused(const std::function<void(const std::string&)>& note) override;
  bool TakeRerun(RerunRequest* request) override;

 private:
  /// Reads the events added since the last call; false with *err on failure.
  bool Refresh(std::string* err);

  Ledger* ledger_;
  Options options_;
  bool told_paused_ = false;
  long long seen_seq_ = 0;
  std::vector<std::string> notes_;
  PauseState pause_;
  std::vector<LedgerEvent> rerun_events_;  // "rerun" and "rerun_taken", in order
  std::string last_error_;  // reported once, not on every poll
};

}  // namespace ratchet

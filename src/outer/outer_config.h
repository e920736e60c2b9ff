// The [outer] section of ratchet.toml, read strictly (docs/outer.md lists
// every key):
//
//   [outer]
//   every = 5                  # level 1.5: adjust the search every 5 experiments (0 = never)
//   mechanism_every = 10       # level 2: judge and switch mechanisms every 10 (0 = never)
//   mechanisms = ["tabu", "explore", "restart"]   # built-ins on at the start
//   pool = ["tabu", "bandit", "explore", "restart"] # built-ins level 2 may switch on
//   stuck_after = 8            # no new best for this long = stuck
//   explore_steps = 5          # an episode: this many exploration points,
//   restart_steps = 8          # then this many steps from an elite point
//   stuck_spread = 0.25        # ... only while the search's own proposals stay this near the best
//   min_acted = 12             # level 2 judges a mechanism after it acted this often
//   max_trials = 2             # times level 2 switches a built-in on again
//   answer_timeout = "5s"      # each answer of an external mechanism
//
//   [outer.tabu]     tenure = 10, failure_tenure = 30, radius = 0.05, veto = true
//   [outer.bandit]   over = "step", steps = [...], explorations = [...], families = [...], c = 0.5
//   [outer.restart]  min_distance = 0.25, step = 0.05
//
//   [[outer.external]]         # a mechanism in another program (protocol.h)
//   name = "my-tabu"
//   command = ["python3", "my_tabu.py"]
//
//   [outer.author]             # a coding agent that writes new mechanisms when stuck
//   command = ["claude", "-p", "--permission-mode", "acceptEdits"]
//   input = "stdin"            # or "file" with {prompt_file}
//   timeout = "10m"
//   max = 2                    # mechanisms it may write in one loop
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/config_section.h"
#include "outer/bandit.h"
#include "outer/builtin_context.h"
#include "outer/explore.h"
#include "outer/external_mechanism.h"
#include "outer/tabu.h"
#include "propose/agent_command.h"

namespace ratchet {

struct AuthorConfig {
  AgentCommand command;
  int max = 2;
  bool network = true;  // in the sandbox, the agent may reach its model's API
};

struct OuterConfig {
  int every = 5;
  int mechanism_every = 10;
  std::vector<std::string> mechanisms = {"tabu", "explore", "restart"};
  std::vector<std::string> pool = {"tabu", "bandit", "explore", "restart"};
  StuckSchedule schedule;
  double stuck_spread = 0.25;
  int min_acted = 12;
  int max_trials = 2;
  double answer_timeout_s = 5;
  TabuOptions tabu;
  BanditOptions bandit;
  RestartOptions restart;
  std::vector<ExternalSpec> external;  // cwd and stderr_path set by the outer loop
  std::optional<AuthorConfig> author;
};

/// The built-in mechanisms' names.
const std::vector<std::string>& BuiltinNames();

/// Reads [outer] (`section`; absent: the defaults) and calls Finish() on it.
/// False with "ratchet.toml:LINE:COL: [outer] ..." on a bad key or value.
bool ReadOuterConfig(ConfigSection& section, OuterConfig* out, std::string* err);

}  // namespace ratchet

#include "propose/agent_proposer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/runner.h"
#include "core/workspace.h"
#include "propose/agent_output.h"
#include "propose/prompt_inputs.h"

namespace fs = std::filesystem;

namespace ratchet {
namespace {

const std::vector<std::string> kPlaceholders = {"prompt_file", "prompt",     "model",
                                                "run_dir",     "experiment", "worktree"};

// Where the agent's scratch $HOME goes when the engine gives none: not in
// the run folder, which the legacy sandbox binds read-only with the rest of
// .ratchet, and an agent CLI needs a home it can write (Codex will not start
// without one).
const char kHomes[] = ".ratchet/homes";

std::string Cut(const std::string& text, size_t max) {
  std::string out;
  for (char c : text) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  if (out.size() > max) out = out.substr(0, max) + "...";
  return out;
}

// The last line of plain output (not a JSON event): what a CLI that failed
// without a report said last, e.g. "Error: invalid API key".
std::string LastPlainLine(const std::string& tail) {
  size_t end = tail.size();
  while (end > 0) {
    size_t start = tail.rfind('\n', end - 1);
    start = start == std::string::npos ? 0 : start + 1;
    std::string line = tail.substr(start, end - start);
    size_t b = line.find_first_not_of(" \t\r");
    if (b != std::string::npos && line[b] != '{') return line.substr(b);
    if (start == 0) break;
    end = start - 1;
  }
  return "";
}

// Reads a regular file the agent may have planted anything at (a FIFO, a
// symlink to a device): never blocks, never follows a link, at most `max`.
bool ReadPlainFile(const fs::path& path, size_t max, std::string* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  char buf[65536];
  while (ok && out->size() < max) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return ok;
}

// Codex keeps its thread in $HOME/.codex/sessions/.../rollout-*.jsonl, with
// the running token count: the spend of a Codex that was killed mid-turn.
std::string CodexSession(const std::string& home) {
  std::error_code ec;
  fs::path newest;
  fs::file_time_type newest_time;
  int seen = 0;
  for (fs::recursive_directory_iterator it(fs::path(home) / ".codex" / "sessions", ec), end;
       !ec && it != end && ++seen < 10000; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!it->is_regular_file(ec) || it->is_symlink(ec) || name.rfind("rollout-", 0) != 0) continue;
    fs::file_time_type t = it->last_write_time(ec);
    if (!ec && (newest.empty() || t > newest_time)) newest = it->path(), newest_time = t;
  }
  std::string text;
  if (!newest.empty()) ReadPlainFile(newest, 64u << 20, &text);
  return text;
}

class AgentProposer : public Proposer {
 public:
  AgentProposer(AgentConfig config, double grace_s, const ProposerDeps& deps)
      : config_(std::move(config)), grace_s_(grace_s), deps_(deps) {}

  std::string kind() const override { return "agent"; }

  Proposal Propose(const ProposalRequest& request) override {
    Proposal p;
    const std::string id = std::to_string(request.experiment_id);
    const std::string rel_dir = ".ratchet/runs/" + id;
    const std::string log = " (log: " + rel_dir + "/agent.log)";
    std::string prompt, err;
    if (!RenderAgentPrompt(config_, request, deps_.workspace, &prompt, &err)) {
      p.reason = err;
      return p;
    }
    if (!deps_.workspace->WriteFile(rel_dir + "/prompt.md", prompt, &err)) {
      p.reason = "cannot write the agent's prompt: " + err;
      return p;
    }

    // A scratch $HOME for this experiment alone, so that nothing carries
    // from one experiment to the next behind ratchet's back (Claude Code's
    // sessions and its memory folder, Codex's threads): the engine's, or one
    // made here and removed afterwards.
    // Without the sandbox the engine's home (in the run folder) would be
    // read-only with the rest of .ratchet: the agent gets one of its own.
    std::string home = request.sandbox.enabled ? request.sandbox.home : "";
    std::string own_home;
    if (home.empty()) {
      own_home = std::string(kHomes) + "/" + id;
      home = deps_.workspace->root() + "/" + own_home;  // never inside the copy
      std::error_code ec;
      fs::remove_all(home, ec);  // left by a ratchet that was killed
      if (!deps_.workspace->MakeDirs(own_home, &err)) {
        p.reason = "cannot make the agent's home folder " + own_home + ": " + err;
        return p;
      }
    }

    const std::string prompt_file = request.run_dir + "/prompt.md";
    const std::map<std::string, std::string> values = {
        {"prompt_file", prompt_file},
        {"prompt", prompt},
        {"model", config_.model},
        {"run_dir", request.run_dir},
        {"experiment", id},
        {"worktree", request.worktree},
    };
    RunSpec spec;
    spec.argv = ExpandArgv(config_.command.argv, values);
    spec.cwd = request.worktree;
    spec.env = config_.env;  // the loop's own settings first: ratchet's win
    // In the sandbox, the runner binds the home at $HOME and sets HOME.
    if (!request.sandbox.enabled) spec.env.emplace_back("HOME", home);
    spec.env.insert(spec.env.end(), {
                                        {"RATCHET_EXPERIMENT", id},
                                        {"RATCHET_RUN_DIR", request.run_dir},
                                        {"RATCHET_PROMPT_FILE", prompt_file},
                                        {"RATCHET_MODEL", config_.model},
                                        // git run in the working copy must not
                                        // find the loop's repository above it.
                                        {"GIT_CEILING_DIRECTORIES",
                                         deps_.workspace->root() + "/.ratchet/work"},
                                    });
    spec.timeout_s = config_.command.timeout_s;
    spec.grace_s = grace_s_;  // [run] grace: how long any command gets to stop
    // Interrupted as on Ctrl-C, Claude Code prints its report, spend included.
    spec.stop_signal = SIGINT;
    spec.log_path = request.run_dir + "/agent.log";
    if (config_.command.input == AgentCommand::Input::kStdin) spec.stdin_data = prompt;
    spec.cancel = request.cancel;
    spec.tail_bytes = 1 << 20;  // a JSON report can be long; it comes last
    AgentOutputParser parser(&config_.prices);
    spec.on_line = [&parser](std::string_view line) { parser.Feed(line); };

    // Recorded before the agent starts, checked after it is gone: holds
    // whether or not the sandbox works here.
    std::unique_ptr<StateGuard> guard = deps_.state_guards();
    // The loop's own state, not the working copy's (which has no .git).
    const std::string root = deps_.workspace->root();
    if (!guard->Capture(root, {rel_dir + "/agent.log", kHomes}, &err)) {
      p.reason = "cannot record ratchet's state before running the agent: " + err;
      return p;
    }
    spec.sandbox = request.sandbox;
    if (spec.sandbox.enabled) {
      spec.sandbox.home = home;
      spec.sandbox.network = config_.network;  // it must reach its model's API
      spec.sandbox.nested_namespaces = config_.tool_sandbox;
    } else {
      // After Capture: its aside links (.ratchet/guard) are read-only too.
      spec.readonly_paths = LegacyReadonly(root);
    }
    RunResult result = deps_.runner->Run(spec);
    GuardReport report = guard->CheckAndRestore();

    parser.FeedCodexSession(CodexSession(home));
    AgentOutput out = parser.Finish(result.tail);
    p.usage = out.usage;
    AgentSummary summary = ExtractSummary(out.final_text);
    Warn(request, out, &p);

    const std::string ending = result.Describe();
    if (!report.clean()) {
      p.reason = "the agent " + report.Describe() +
                 "; .git and .ratchet are ratchet's, the agent must not write them" + log;
      p.stop_loop = report.fatal;
    } else if (result.end == RunResult::End::kFailedToStart) {
      p.reason = "could not start the agent (" + spec.argv[0] + "): " + result.error;
      if (spec.sandbox.enabled)
        p.reason += "; the sandbox shows only the system folders (/usr, /bin, /lib, /etc, /opt), "
                    "the working copy and what [sandbox] readable lists: add the folder the "
                    "agent CLI is installed in (e.g. \"~/.local\") there";
    } else if (result.end == RunResult::End::kTimedOut ||
               result.end == RunResult::End::kCancelled) {
      p.reason = "the agent " + ending;
      if (!out.last_retry.empty()) p.reason += "; its API was failing: " + Cut(out.last_retry, 300);
      p.reason += log;
    } else if (out.is_error) {
      // The CLI's own words first: they say what the user must fix.
      std::string kind = out.error_kind;
      if (out.api_status && kind.find("HTTP") == std::string::npos)
        kind += ", HTTP " + std::to_string(out.api_status);
      p.reason = "the agent failed" +
                 (out.error_text.empty() ? std::string() : ": " + Cut(out.error_text, 400)) +
                 " (" + kind + "; " + ending + ")" + log;
    } else if (!result.ok()) {
      std::string said = out.last_error.empty() ? LastPlainLine(result.tail) : out.last_error;
      p.reason = "the agent " + ending + (said.empty() ? "" : ": " + Cut(said, 300)) + log;
    } else {
      p.outcome = Proposal::Outcome::kCandidate;
      p.description =
          summary.description.empty() ? "(the agent gave no description)" : summary.description;
      p.hypothesis = summary.hypothesis;
      // Used by the engine only when the tree is unchanged.
      p.reason = "the agent changed nothing; it said: " + p.description;
    }
    WriteRecord(request, rel_dir, spec, result, out, summary, report, home, p);
    if (!own_home.empty()) {
      std::error_code ec;
      fs::remove_all(home, ec);  // scratch: what it holds is in agent.log
    }
    return p;
  }

 private:
  // Without the engine's sandbox: .git and .ratchet read-only over the whole
  // host, except the working copies (the agent edits its own) and the
  // agents' homes: each entry of .ratchet but those two.
  std::vector<std::string> LegacyReadonly(const std::string& root) {
    std::vector<std::string> paths = {root + "/.git"};
    std::error_code ec;
    for (fs::directory_iterator it(root + "/.ratchet", ec), end; !ec && it != end;
         it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name != "homes" && name != "work") paths.push_back(it->path().string());
    }
    return paths;
  }

  // Spend that cannot be counted while a cost or token stop is set.
  void Warn(const ProposalRequest& request, const AgentOutput& out, Proposal* p) {
    const LoopConfig* c = request.config;
    bool cost_stop = c && c->max_cost_usd;
    bool stop = cost_stop || (c && c->max_tokens);
    if (stop && !out.has_usage)
      p->warnings.push_back(
          "the agent printed no usage report, so its spend is not counted towards " +
          std::string(cost_stop ? "stop.cost_usd" : "stop.tokens") +
          ": use a JSON output (Claude Code: --output-format stream-json --verbose; Codex: "
          "exec --json)");
    if (cost_stop && !out.unpriced_models.empty()) {
      std::string names;
      for (const std::string& m : out.unpriced_models) names += (names.empty() ? "" : ", ") + m;
      p->warnings.push_back("the agent stopped before its report, and ratchet has no price for " +
                            names +
                            ": those tokens are counted, their cost is not (add them to "
                            "[propose.agent] prices)");
    }
  }

  // .ratchet/runs/<id>/agent.json: the facts of this run, for audits.
  void WriteRecord(const ProposalRequest& request, const std::string& rel_dir, const RunSpec& spec,
                   const RunResult& result, const AgentOutput& out, const AgentSummary& summary,
                   const GuardReport& report, const std::string& home, const Proposal& p) {
    nlohmann::json argv = nlohmann::json::array();
    for (size_t i = 0; i < spec.argv.size(); ++i) {
      // The prompt itself is in prompt.md; keep the record small.
      bool is_prompt = i < config_.command.argv.size() &&
                       config_.command.argv[i].find("{prompt}") != std::string::npos;
      argv.push_back(is_prompt ? config_.command.argv[i] : spec.argv[i]);
    }
    nlohmann::json models = nlohmann::json::object();
    for (const auto& [name, m] : out.models)
      models[name] = {{"input_tokens", m.tokens.input},
                      {"output_tokens", m.tokens.output},
                      {"cache_read_tokens", m.tokens.cache_read},
                      {"cache_write_tokens", m.tokens.cache_write},
                      {"cost_usd", m.priced ? nlohmann::json(m.cost_usd) : nlohmann::json()}};
    nlohmann::json record = {
        {"experiment", request.experiment_id},
        {"argv", argv},
        {"model", config_.model},
        {"input", config_.command.input == AgentCommand::Input::kStdin ? "stdin" : "file"},
        {"home", home},
        {"end", result.Describe()},
        {"wall_s", result.wall_s},
        {"sandboxed", result.sandboxed},
        {"usage_reported", out.reported},
        {"usage_streamed", out.streamed},
        {"reports", out.reports},
        {"usage",
         {{"input_tokens", p.usage.input_tokens},
          {"output_tokens", p.usage.output_tokens},
          {"cost_usd", p.usage.cost_usd}}},
        {"models", models},
        {"error", out.is_error ? nlohmann::json{{"text", out.error_text},
                                                {"kind", out.error_kind},
                                                {"status", out.api_status}}
                               : nlohmann::json()},
        {"last_retry", out.last_retry},
        {"description_marked", summary.marked},
        {"outcome", p.outcome == Proposal::Outcome::kCandidate ? "candidate" : "failed"},
        {"reason", p.outcome == Proposal::Outcome::kCandidate ? "" : p.reason},
        {"warnings", p.warnings},
        {"guard", report.clean() ? "clean" : report.Describe()},
    };
    std::string err;
    deps_.workspace->WriteFile(rel_dir + "/agent.json",
                               record.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                                   "\n",
                               &err);
  }

  AgentConfig config_;
  double grace_s_;
  ProposerDeps deps_;
};

}  // namespace

void ReadAgentConfig(ConfigSection& section, AgentConfig* config) {
  ReadAgentCommand(section, kPlaceholders, 900, &config->command);
  if (auto v = section.String("model")) config->model = *v;
  if (auto v = section.String("program")) {
    if (v->empty())
      section.Fail("program", "must name a file in the loop, e.g. \"program.md\"");
    else
      config->program = *v;
  }
  auto count = [&](const char* key, int* out) {
    if (auto v = section.Integer(key)) {
      if (*v < 0 || *v > 10000)
        section.Fail(key, "must be between 0 and 10000");
      else
        *out = static_cast<int>(*v);
    }
  };
  count("history", &config->limits.history_rows);
  count("notes_lines", &config->limits.notes_lines);
  count("log_lines", &config->limits.log_lines);
  if (auto env = section.StringMap("env")) {
    for (const auto& [key, value] : *env) {
      if (key == "HOME" || key.rfind("RATCHET_", 0) == 0)
        section.Fail("env", key + " is ratchet's to set for the agent");
      else
        config->env.emplace_back(key, value);
    }
  }
  if (auto v = section.Bool("network")) config->network = *v;
  if (auto v = section.Bool("tool_sandbox")) config->tool_sandbox = *v;
  ReadPrices(section, &config->prices);
}

bool RenderAgentPrompt(const AgentConfig& config, const ProposalRequest& request,
                       Workspace* workspace, std::string* prompt, std::string* err) {
  return RenderPrompt(request, workspace, config.program, config.limits, prompt, err);
}

std::unique_ptr<Proposer> MakeAgentProposer(ConfigSection& section, const LoopConfig& loop,
                                            const ProposerDeps& deps, std::string* err) {
  AgentConfig config;
  ReadAgentConfig(section, &config);
  if (section.ok() && deps.workspace && !deps.workspace->Exists(config.program))
    section.Fail(section.Has("program") ? "program" : "",
                 config.program +
                     " is not in the loop directory; write the agent's "
                     "instructions there (or name another file with program = ...)");
  if (!section.ok()) {
    *err = section.error();
    return nullptr;
  }
  if (!deps.state_guards) {
    *err = "internal: the agent proposer was given no state guard";
    return nullptr;
  }
  return std::make_unique<AgentProposer>(std::move(config), loop.grace_s, deps);
}

}  // namespace ratchet

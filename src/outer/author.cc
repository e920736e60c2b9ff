#include "outer/author.h"

#include <sys/stat.h>

#include <map>

#include "core/accept.h"
#include "outer/protocol.h"
#include "propose/prompt_builder.h"

namespace ratchet {

namespace {

constexpr int kTraceRows = 40;

std::string ExperimentRow(const Experiment& e) {
  std::string row = '#' + std::to_string(e.id) + " " + StatusName(e.status);
  if (e.metric) row += " " + FormatMetric(*e.metric);
  row += e.params_json.empty() ? "  " + e.description : "  " + e.params_json;
  return row;
}

}  // namespace

std::string BuildAuthorPrompt(const AuthorRequest& r) {
  const LoopConfig& c = *r.config;
  std::string p;
  p += "You are writing a search mechanism for ratchet, a loop that proposes changes, runs "
       "them and keeps those that improve `" + c.metric_name + "` (" +
       (c.goal == Goal::kMin ? "lower" : "higher") + " is better). The loop is stuck: " +
       std::to_string(r.stats.since_best) + " experiments since the last improvement. A "
       "mechanism is a program that ratchet calls at fixed points of each experiment to steer "
       "the search: before a proposal (give guidance or search hints), on a candidate (veto "
       "it or rewrite its parameters), on a result (learn), on acceptance (decide keep or "
       "discard).\n\n";
  p += "## What to write\n\nOne executable file named `mechanism` in the current directory, "
       "starting with a #! line, using only what this machine has (/bin/sh, or python3 if "
       "present; no network, no packages to install). Do not read or change anything outside "
       "the current directory. It reads requests from stdin, one JSON object per line, and "
       "must write exactly one JSON object per request to stdout, on one line, flushed at "
       "once, within " + FormatMetric(r.answer_timeout_s) + " seconds. Anything else on "
       "stdout, a late answer or an exit ends it. Write notes to stderr if you like.\n\n";
  p += "## Protocol\n\n";
  p += "  {\"type\":\"hello\",\"protocol\":1,\"metric\":...,\"goal\":\"min\"|\"max\","
       "\"params\":[...]}\n"
       "    -> {\"hooks\":[\"before_propose\",\"on_result\"]}   (the hooks you answer; "
       "non-empty)\n"
       "  {\"type\":\"before_propose\",\"experiment\":N,\"since_best\":K,\"incumbent\":{E}|null}\n"
       "    -> {\"guidance\":[\"text\"],\"search_hints\":{...}}   (each optional; {} adds "
       "nothing)\n"
       "  {\"type\":\"on_candidate\",\"candidate\":{\"id\":N,\"description\":...,\"params\":{...}"
       "|null,\"files\":[...],\"diff\":...}}\n"
       "    -> {\"veto\":true,\"reason\":\"...\"} | {\"params\":{...}} (a rewrite) | {}\n"
       "  {\"type\":\"on_result\",\"result\":{E},\"replay\":false}   -> {}\n"
       "  {\"type\":\"accept\",\"candidate\":{E},\"incumbent\":{E}}\n"
       "    -> {\"decision\":\"keep\"|\"discard\"|\"default\",\"reason\":\"...\"}\n\n"
       "{E} is an experiment: {\"id\",\"status\" (keep, discard, crash, timeout, rejected, ...),"
       "\"metric\" (or null),\"params\" (object or null),\"description\",\"reason\",\"baseline\","
       "\"mechanisms\"}. On start you get on_result with \"replay\": true for every experiment "
       "so far (when you answer on_result). Answers with other keys are refused.\n\n";
  if (r.space) {
    p += "The proposer is a parameter search. search_hints keys (all optional): "
         "\"exploration\" (0..1), \"step\" (0..1, fraction of each range, for local steps), "
         "\"active\"/\"frozen\" (lists of parameter names), \"region\" ({name: [low, high]} or "
         "{name: [values]}), \"avoid\" (list of points), \"avoid_radius\" (0..1), \"next\" "
         "(a point to try next: it must be new and inside the space).\n\n";
    p += "## The search space\n\n" + HelloRequest(c, r.space)["params"].dump(1) + "\n\n";
  } else {
    p += "The proposer is a coding agent: give it guidance text; search_hints must be "
         "empty.\n\n";
  }
  p += "## The trace so far\n\n" + TraceStatsJson(r.stats, true) + "\n\n";
  if (r.history) {
    const size_t n = r.history->size();
    const size_t from = n > kTraceRows ? n - kTraceRows : 0;
    std::string rows;
    for (size_t i = from; i < n; ++i) rows += ExperimentRow((*r.history)[i]) + "\n";
    p += FenceData("experiments", "ledger", rows) + "\n\n";
  }
  if (!r.mechanisms.empty()) {
    p += "## Mechanisms tried so far, and their effect\n\n";
    for (const std::string& m : r.mechanisms) p += "- " + m + "\n";
    p += "\n";
  }
  p += "Write a mechanism that gets the loop unstuck in a way the mechanisms above do not. "
       "ratchet checks it on a recorded trace before use, runs it on live experiments, "
       "counts every call, and retires it if it fails or does not help.\n";
  return p;
}

bool WriteMechanismWithAgent(const AuthorConfig& author, const AuthorRequest& request,
                             ProcessRunner* runner, Workspace* workspace, MechanismStore* store,
                             ExternalSpec* spec, std::string* err) {
  if (!runner || !workspace || !store->enabled()) {
    *err = "no runner or loop directory to write a mechanism in";
    return false;
  }
  const std::string& name = request.name;
  const std::string dir = store->AbsDir(name);
  const std::string prompt = BuildAuthorPrompt(request);
  if (!store->Write(name, "author-prompt.md", prompt, err)) return false;

  // The loop's files, to see (and undo) any change the agent makes to them.
  std::vector<std::string> globs = request.config->edit_files;
  globs.insert(globs.end(), request.config->protected_files.begin(),
               request.config->protected_files.end());
  std::map<std::string, std::string> before, after, contents;
  if (!workspace->HashFiles(globs, &before, err)) return false;
  for (const auto& [path, hash] : before) {
    std::string text;
    if (!workspace->ReadFile(path, &text, err)) return false;
    contents[path] = text;
  }

  RunSpec run;
  run.argv = ExpandArgv(author.command.argv, {{"prompt_file", dir + "/author-prompt.md"},
                                              {"prompt", prompt},
                                              {"dir", dir}});
  run.cwd = dir;
  run.env = {{"RATCHET_MECHANISM", name}, {"RATCHET_PROMPT_FILE", dir + "/author-prompt.md"}};
  run.timeout_s = author.command.timeout_s;
  run.log_path = dir + "/author.log";
  if (author.command.input == AgentCommand::Input::kStdin) run.stdin_data = prompt;
  if (request.sandbox.enabled) {
    // Its folder is all it sees of the loop (the prompt holds the rest), so
    // it can change nothing else; the hashes below check that all the same.
    run.sandbox = request.sandbox;
    run.sandbox.network = author.network;
    if (!workspace->MakeDirs(MechanismStore::Dir(name) + "/home", err)) return false;
    run.sandbox.home = dir + "/home";
  } else {
    run.readonly_paths = {workspace->root() + "/.git"};
  }
  const RunResult result = runner->Run(run);
  const std::string log = " (log: " + MechanismStore::Dir(name) + "/author.log)";

  if (!workspace->HashFiles(globs, &after, err)) return false;
  std::string touched;
  for (const auto& [path, hash] : after) {
    auto it = before.find(path);
    if (it != before.end() && it->second == hash) continue;
    touched += (touched.empty() ? "" : ", ") + path;
    if (it != before.end()) workspace->WriteFile(path, contents[path], err);
  }
  if (!touched.empty()) {
    *err = "the agent changed the loop's files (" + touched +
           "); they were put back and its mechanism is refused" + log;
    return false;
  }
  if (!result.ok()) {
    *err = "the agent failed: " + result.Describe() + log;
    return false;
  }
  const std::string file = dir + "/mechanism";
  if (!store->Exists(name, "mechanism")) {
    *err = "the agent wrote no `mechanism` file" + log;
    return false;
  }
  // Agents often forget the executable bit.
  ::chmod(file.c_str(), 0755);
  spec->name = name;
  spec->command = {file};
  spec->cwd = dir;
  spec->stderr_path = dir + "/stderr.log";
  spec->timeout_s = request.answer_timeout_s;
  return true;
}

}  // namespace ratchet

#include "propose/judge.h"

#include <cctype>
#include <cstdio>

#include "propose/agent_command.h"
#include "propose/agent_proposer.h"

namespace ratchet {
namespace {

std::vector<std::string> WithModel(const std::vector<std::string>& argv, const std::string& model) {
  return ExpandArgv(argv, {{"model", model}});
}

std::string Joined(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

}  // namespace

bool ReadJudgeConfig(ConfigSection& section, JudgeConfig* judge, std::string* err) {
  JudgeConfig j;
  AgentCommand command;
  ReadAgentCommand(section, {"model"}, 300, &command);  // a missing command is an error there
  if (command.input != AgentCommand::Input::kStdin)
    section.Fail("input", "the judge reads its request on stdin");
  if (auto v = section.String("model")) j.model = *v;
  if (!section.Finish(err)) return false;
  j.argv = WithModel(command.argv, j.model);
  j.timeout_s = command.timeout_s;
  *judge = std::move(j);
  return true;
}

std::string ModelInArgv(const std::vector<std::string>& argv) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if ((a == "--model" || a == "-m") && i + 1 < argv.size()) return argv[i + 1];
    if (a.rfind("--model=", 0) == 0) return a.substr(8);
  }
  return "";
}

bool WriterIdentity(const LoopConfig& config, CommandIdentity* writer, bool* known,
                    std::string* err) {
  *known = false;
  auto it = config.propose_sections.find(config.propose_kind);
  if (it == config.propose_sections.end()) return true;
  ConfigSection section = it->second;
  if (config.propose_kind == "agent") {
    AgentConfig agent;
    ReadAgentConfig(section, &agent);
    if (!section.ok()) {
      *err = section.error();
      return false;
    }
    writer->argv = WithModel(agent.command.argv, agent.model);
    writer->model = agent.model.empty() ? ModelInArgv(writer->argv) : agent.model;
    *known = !writer->argv.empty();
  } else if (config.propose_kind == "script") {
    std::optional<std::string> line = section.String("command");
    if (!line) return true;
    if (!SplitWords(*line, &writer->argv, err)) return false;
    writer->model = ModelInArgv(writer->argv);
    *known = true;
  }
  return true;
}

std::string JudgeIsWriter(const CommandIdentity& judge, const CommandIdentity& writer) {
  const std::string model = judge.model.empty() ? ModelInArgv(judge.argv) : judge.model;
  if (judge.argv == writer.argv)
    return "[judge] command is the writer's own command (" + Joined(writer.argv) +
           "): a writer must not grade its own work; give the judge another command or model";
  if (!model.empty() && model == writer.model)
    return "[judge] uses the writer's model (" + model +
           "): a writer must not grade its own work; give the judge a different model";
  return "";
}

std::string ShellQuoteWords(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += ' ';
    bool plain = !w.empty();
    for (char c : w)
      plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || std::string("-_./=:,@%+").find(c) != std::string::npos);
    if (plain) {
      out += w;
      continue;
    }
    out += '\'';
    for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> JudgeEnv(const JudgeConfig& judge) {
  char timeout[32];
  std::snprintf(timeout, sizeof timeout, "%.0f", judge.timeout_s);
  return {{"RATCHET_JUDGE", ShellQuoteWords(judge.argv)},
          {"RATCHET_JUDGE_MODEL", judge.model},
          {"RATCHET_JUDGE_TIMEOUT", timeout}};
}

bool ApplyJudge(LoopConfig* config, std::string* err) {
  if (!config->judge.present()) return true;
  ConfigSection section = config->judge;
  JudgeConfig judge;
  if (!ReadJudgeConfig(section, &judge, err)) return false;
  CommandIdentity writer;
  bool known = false;
  if (!WriterIdentity(*config, &writer, &known, err)) return false;
  if (known) {
    std::string why = JudgeIsWriter(CommandIdentity{judge.argv, judge.model}, writer);
    if (!why.empty()) {
      *err = section.Where() + ": " + why;
      return false;
    }
  }
  for (auto& kv : JudgeEnv(judge)) config->env.push_back(std::move(kv));
  return true;
}

}  // namespace ratchet

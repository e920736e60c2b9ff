#include "propose/agent_command.h"

#include <algorithm>

namespace ratchet {

bool SplitWords(const std::string& line, std::vector<std::string>* words, std::string* err) {
  words->clear();
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote == '\'') {
      if (c == '\'')
        quote = 0;
      else
        word += c;
    } else if (quote == '"') {
      if (c == '"') {
        quote = 0;
      } else if (c == '\\' && i + 1 < line.size() && (line[i + 1] == '"' || line[i + 1] == '\\')) {
        word += line[++i];
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words->push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) {
    *err = std::string("unterminated ") + quote + " quote";
    return false;
  }
  if (in_word) words->push_back(word);
  return true;
}

bool PlaceholdersIn(const std::string& arg, std::vector<std::string>* names, std::string* err) {
  for (size_t i = 0; i < arg.size(); ++i) {
    if (arg[i] == '{') {
      if (i + 1 < arg.size() && arg[i + 1] == '{') {
        ++i;
        continue;
      }
      size_t close = arg.find('}', i);
      if (close == std::string::npos) {
        *err = "'{' without '}' in \"" + arg + "\" (write {{ for a literal brace)";
        return false;
      }
      names->push_back(arg.substr(i + 1, close - i - 1));
      i = close;
    } else if (arg[i] == '}') {
      if (i + 1 < arg.size() && arg[i + 1] == '}') {
        ++i;
        continue;
      }
      *err = "'}' without '{' in \"" + arg + "\" (write }} for a literal brace)";
      return false;
    }
  }
  return true;
}

std::vector<std::string> ExpandArgv(const std::vector<std::string>& argv,
                                    const std::map<std::string, std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& arg : argv) {
    std::string s;
    for (size_t i = 0; i < arg.size(); ++i) {
      char c = arg[i];
      if ((c == '{' || c == '}') && i + 1 < arg.size() && arg[i + 1] == c) {
        s += c;
        ++i;
      } else if (c == '{') {
        size_t close = arg.find('}', i);
        if (close == std::string::npos) {
          s += arg.substr(i);
          break;
        }
        std::string name = arg.substr(i + 1, close - i - 1);
        auto it = values.find(name);
        s += it == values.end() ? arg.substr(i, close - i + 1) : it->second;
        i = close;
      } else {
        s += c;
      }
    }
    out.push_back(s);
  }
  return out;
}

void ReadAgentCommand(ConfigSection& section, const std::vector<std::string>& placeholders,
                      double default_timeout_s, AgentCommand* command) {
  auto list = section.StringList("command");
  if (!list) {
    if (section.ok())
      section.Fail("command", section.present()
                                  ? "missing: the agent's command, e.g. [\"claude\", \"-p\", "
                                    "\"--output-format\", \"json\"]"
                                  : "missing: add the table with command = [...]");
  } else if (list->size() == 1) {
    // One string: words, as a shell would split them (without a shell).
    std::string err;
    if (!SplitWords((*list)[0], &command->argv, &err)) section.Fail("command", err);
  } else {
    command->argv = *list;
  }
  if (list && section.ok() && command->argv.empty()) section.Fail("command", "is empty");
  for (const std::string& arg : command->argv) {
    std::vector<std::string> names;
    std::string err;
    if (!PlaceholdersIn(arg, &names, &err)) {
      section.Fail("command", err);
      break;
    }
    for (const std::string& name : names) {
      if (std::find(placeholders.begin(), placeholders.end(), name) != placeholders.end()) continue;
      std::string known;
      for (const std::string& p : placeholders) known += (known.empty() ? "{" : ", {") + p + "}";
      section.Fail("command", "unknown placeholder {" + name + "}; known: " + known);
      break;
    }
  }
  if (auto input = section.String("input")) {
    if (*input == "stdin")
      command->input = AgentCommand::Input::kStdin;
    else if (*input == "file")
      command->input = AgentCommand::Input::kFile;
    else
      section.Fail("input", "must be \"stdin\" or \"file\" (the prompt file is {prompt_file})");
  }
  command->timeout_s = section.Duration("timeout").value_or(default_timeout_s);
}

}  // namespace ratchet

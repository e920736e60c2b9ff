// `ratchet init --template NAME DIR`: a new loop directory from a template,
// as its own git repository with one commit.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/loop_dir.h"
#include "exec/local_runner.h"

#ifndef RATCHET_SOURCE_DIR
#error "RATCHET_SOURCE_DIR must name the ratchet source tree (set by CMake)"
#endif

namespace fs = std::filesystem;

namespace ratchet {
namespace {

// Where templates live: $RATCHET_HOME, else the source tree ratchet was built from.
fs::path RatchetHome() {
  const char* home = std::getenv("RATCHET_HOME");
  return home && *home ? fs::path(home) : fs::path(RATCHET_SOURCE_DIR);
}

std::vector<std::string> TemplateNames() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(RatchetHome() / "templates", ec))
    if (entry.is_directory()) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

bool Copy(const fs::path& from, const fs::path& to, std::string* err) {
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  if (fs::is_directory(from)) {
    fs::copy(from, to, fs::copy_options::recursive, ec);
  } else {
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  }
  if (ec) {
    *err = "cannot copy " + from.string() + " to " + to.string() + ": " + ec.message();
    return false;
  }
  return true;
}

// Copies the template: its own files, then the files its `include` list
// names from the ratchet tree ("<path in ratchet> <path in the loop>").
bool CopyTemplate(const fs::path& tmpl, const fs::path& dest, std::string* err) {
  for (const auto& entry : fs::directory_iterator(tmpl)) {
    if (entry.path().filename() == "include") continue;
    if (!Copy(entry.path(), dest / entry.path().filename(), err)) return false;
  }
  std::ifstream include(tmpl / "include");
  std::string line;
  int number = 0;
  while (std::getline(include, line)) {
    ++number;
    std::istringstream words(line);
    std::string from, to;
    if (!(words >> from) || from[0] == '#') continue;
    if (!(words >> to)) to = fs::path(from).filename();
    fs::path source = RatchetHome() / from;
    if (!fs::exists(source)) {
      *err = (tmpl / "include").string() + ":" + std::to_string(number) + ": " +
             source.string() + " does not exist";
      return false;
    }
    if (!Copy(source, dest / to, err)) return false;
  }
  return true;
}

RunResult RunGit(const std::vector<std::string>& args, const fs::path& dir) {
  LocalProcessRunner runner;
  RunSpec spec;
  spec.argv = {"git"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = dir;
  spec.timeout_s = 60;
  return runner.Run(spec);
}

bool Git(std::vector<std::string> args, const fs::path& dir, std::string* err) {
  // A fresh machine may have no git identity; the loop's first commit needs one.
  if (!RunGit({"config", "user.email"}, dir).ok())
    args.insert(args.begin(), {"-c", "user.name=ratchet", "-c", "user.email=ratchet@localhost"});
  RunResult result = RunGit(args, dir);
  if (result.ok()) return true;
  std::string line = "git";
  for (const std::string& a : args) line += " " + a;
  *err = line + " failed (" + result.Describe() + "): " + result.tail;
  return false;
}

struct InitOptions {
  std::string name = "toy";
  std::string dir;
};

int Init(const InitOptions& options) {
  fs::path tmpl = RatchetHome() / "templates" / options.name;
  if (!fs::is_directory(tmpl)) {
    std::string known;
    for (const std::string& n : TemplateNames()) known += (known.empty() ? "" : ", ") + n;
    return Fail("no template '" + options.name + "'; known: " + known);
  }
  fs::path dest = fs::absolute(options.dir);
  std::error_code ec;
  if (fs::exists(dest) && !fs::is_empty(dest, ec))
    return Fail(options.dir + " already exists and is not empty");
  fs::create_directories(dest, ec);
  if (ec) return Fail("cannot create " + dest.string() + ": " + ec.message());
  std::string err;
  if (!CopyTemplate(tmpl, dest, &err)) {
    fs::remove_all(dest, ec);  // leave nothing half-made behind
    return Fail(err);
  }
  std::ofstream ignore(dest / ".gitignore", std::ios::app);
  ignore << ".ratchet/\nresults.tsv\n";
  ignore.close();
  if (!Git({"init", "-q", "-b", "main"}, dest, &err) || !Git({"add", "-A"}, dest, &err) ||
      !Git({"commit", "-q", "-m", "ratchet init --template " + options.name}, dest, &err)) {
    fs::remove_all(dest, ec);
    return Fail(err);
  }
  std::cout << "created " << dest.string() << " from the " << options.name << " template\n"
            << "next: ratchet run " << options.dir << "\n";
  return 0;
}

}  // namespace

void AddInitCommand(CLI::App& app) {
  auto options = std::make_shared<InitOptions>();
  CLI::App* cmd = app.add_subcommand(
      "init", "Create a loop directory DIR from a template, as a new git repository");
  cmd->add_option("--template,-t", options->name, "Template name (templates/ in ratchet)")
      ->capture_default_str();
  cmd->add_option("dir", options->dir, "The new loop directory (must not exist or be empty)")
      ->required();
  cmd->callback([options] { ExitCode() = Init(*options); });
}

}  // namespace ratchet

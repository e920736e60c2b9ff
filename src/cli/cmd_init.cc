// `ratchet init --template NAME DIR`: a new loop directory from a template,
// as its own git repository with one commit.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/loop_dir.h"
#include "cli/ratchet_home.h"
#include "exec/local_runner.h"

namespace fs = std::filesystem;

namespace ratchet {
namespace {

std::vector<std::string> TemplateNames(const fs::path& home) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(home / "templates", ec))
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

// Copies the template into `dest`. With a MANIFEST ("SOURCE DESTINATION"
// lines, SOURCE relative to `home`, the ratchet tree), exactly what it lists;
// without one, the template folder's files but its README.md (which
// documents the template). *copied gets the loop-relative paths written.
bool CopyTemplate(const fs::path& home, const fs::path& tmpl, const fs::path& dest,
                  std::vector<std::string>* copied, std::string* err) {
  const fs::path manifest = tmpl / "MANIFEST";
  if (!fs::exists(manifest)) {
    for (const auto& entry : fs::directory_iterator(tmpl)) {
      const std::string name = entry.path().filename();
      if (name == "README.md") continue;
      if (!Copy(entry.path(), dest / name, err)) return false;
      copied->push_back(name);
    }
    return true;
  }
  std::ifstream in(manifest);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::istringstream words(line);
    std::string from, to;
    if (!(words >> from) || from[0] == '#') continue;
    if (!(words >> to)) to = fs::path(from).filename();
    fs::path source = home / from;
    if (!fs::exists(source)) {
      *err = manifest.string() + ":" + std::to_string(number) + ": " + source.string() +
             " does not exist";
      return false;
    }
    if (!Copy(source, dest / to, err)) return false;
    copied->push_back(fs::path(to).lexically_normal().string());
  }
  return true;
}

// Adds the lines ratchet needs to .gitignore, unless they are there.
void IgnoreRatchetFiles(const fs::path& dest) {
  std::string text;
  std::string err;
  ReadWholeFile((dest / ".gitignore").string(), &text, &err);
  std::ofstream ignore(dest / ".gitignore", std::ios::app);
  if (!text.empty() && text.back() != '\n') ignore << "\n";
  for (const char* line : {".ratchet/", "results.tsv"})
    if (text.find(line) == std::string::npos) ignore << line << "\n";
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
  std::string err;
  const fs::path home = FindRatchetHome(&err);
  if (home.empty()) return Fail(err);
  fs::path tmpl = home / "templates" / options.name;
  if (!fs::is_directory(tmpl)) {
    std::string known;
    for (const std::string& n : TemplateNames(home)) known += (known.empty() ? "" : ", ") + n;
    return Fail("no template '" + options.name + "' in " + (home / "templates").string() +
                "; known: " + known);
  }
  fs::path dest = fs::absolute(options.dir).lexically_normal();
  std::error_code ec;
  std::vector<std::string> copied;
  const std::string message = "ratchet init --template " + options.name;

  if (fs::exists(dest) && !fs::is_empty(dest, ec)) {
    // Adopting an existing project (e.g. a checkout of autoresearch): only a
    // clean git repository, so the template's files form one commit of their own.
    RunResult status = RunGit({"status", "--porcelain"}, dest);
    if (!fs::exists(dest / ".git") || !status.ok())
      return Fail(options.dir + " is not empty and not a git repository; give a new directory");
    if (!status.tail.empty())
      return Fail(options.dir + " has uncommitted changes; commit or stash them first");
    if (!CopyTemplate(home, tmpl, dest, &copied, &err)) return Fail(err);
    IgnoreRatchetFiles(dest);
    std::vector<std::string> add = {"add", "--", ".gitignore"};
    add.insert(add.end(), copied.begin(), copied.end());
    if (!Git(add, dest, &err) || !Git({"commit", "-q", "-m", message}, dest, &err))
      return Fail(err);
    std::cout << "added the " << options.name << " template to " << dest.string()
              << " (one commit: " << copied.size() << " files and .gitignore)\n";
  } else {
    fs::create_directories(dest, ec);
    if (ec) return Fail("cannot create " + dest.string() + ": " + ec.message());
    if (!CopyTemplate(home, tmpl, dest, &copied, &err)) {
      fs::remove_all(dest, ec);  // leave nothing half-made behind
      return Fail(err);
    }
    IgnoreRatchetFiles(dest);
    if (!Git({"init", "-q", "-b", "main"}, dest, &err) || !Git({"add", "-A"}, dest, &err) ||
        !Git({"commit", "-q", "-m", message}, dest, &err)) {
      fs::remove_all(dest, ec);
      return Fail(err);
    }
    std::cout << "created " << dest.string() << " from the " << options.name << " template\n";
  }
  std::cout << "next: ratchet run " << options.dir << "\n";
  return 0;
}

}  // namespace

void AddInitCommand(CLI::App& app) {
  auto options = std::make_shared<InitOptions>();
  CLI::App* cmd = app.add_subcommand(
      "init",
      "Create a loop directory DIR from a template, as a new git repository; or, when DIR is "
      "a clean git repository already (e.g. a checkout of autoresearch), add the template's "
      "files to it in one commit");
  cmd->add_option("--template,-t", options->name, "Template name (templates/ in ratchet)")
      ->capture_default_str();
  cmd->add_option("dir", options->dir,
                  "The loop directory: new, empty, or a clean git repository to adopt")
      ->required();
  cmd->callback([options] { ExitCode() = Init(*options); });
}

}  // namespace ratchet

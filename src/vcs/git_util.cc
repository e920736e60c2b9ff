#include "vcs/git_util.h"

namespace ratchet::git {

bool Fail(const std::string& what, std::string* err) {
  const git_error* e = git_error_last();
  *err = what + ": " + (e && e->message ? e->message : "unknown libgit2 error");
  return false;
}

std::string ShortSha(const std::string& sha) { return sha.substr(0, 7); }

std::string Hex(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, &oid);
  return buf;
}

bool LookupCommit(git_repository* repo, const std::string& rev, CommitPtr* out, std::string* err) {
  git_object* obj = nullptr;
  if (git_revparse_single(&obj, repo, rev.c_str()) != 0)
    return Fail("cannot resolve revision '" + rev + "'", err);
  ObjectPtr holder(obj);
  git_object* peeled = nullptr;
  if (git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) != 0)
    return Fail("'" + rev + "' is not a commit", err);
  out->reset(reinterpret_cast<git_commit*>(peeled));
  return true;
}

}  // namespace ratchet::git

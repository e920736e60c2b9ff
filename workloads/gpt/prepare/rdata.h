// A small reader for R's data files, enough to take text out of an R data
// package without R: the serialisation format (XDR, versions 2 and 3) for
// the object types data packages use, .rds files, and lazy-load databases
// (data/Rdata.rdx + data/Rdata.rdb). Not supported, with a clear error:
// closures, environments, ALTREP, bzip2/xz-compressed databases.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpt {

struct RAttribute;  // below: a name and an RObject

/// One unserialised R object. `type` is R's SEXPTYPE number.
struct RObject {
  enum Type : int {
    kNull = 0,
    kSymbol = 1,
    kPairList = 2,
    kChar = 9,
    kLogical = 10,
    kInteger = 13,
    kReal = 14,
    kString = 16,
    kList = 19,
  };
  int type = kNull;
  /// kString: the elements (nullopt = NA); kChar and kSymbol: one element.
  std::vector<std::optional<std::string>> strings;
  std::vector<int32_t> ints;      // kInteger, kLogical (NA = INT32_MIN)
  std::vector<double> reals;      // kReal
  std::vector<RObject> items;     // kList elements; kPairList values
  std::vector<std::string> tags;  // kPairList tags ("" when untagged)
  std::vector<RAttribute> attributes;  // (a std::pair of an incomplete type is ill-formed)

  /// The attribute called `name`, or null.
  const RObject* Attribute(const std::string& name) const;
  /// The "names" attribute as strings (empty if absent).
  std::vector<std::string> Names() const;
};

struct RAttribute {
  std::string name;
  RObject value;
};

/// Parses one serialised object (a stream starting "X\n"). Strings marked
/// latin1 are converted to UTF-8.
bool Unserialize(std::string_view bytes, RObject* out, std::string* err);

/// Decompresses a zlib or gzip stream whose decompressed size is at most
/// `limit` bytes.
bool Inflate(std::string_view compressed, size_t limit, std::string* out, std::string* err);

/// Reads an .rds file (gzip-compressed or plain serialisation).
bool ReadRds(const std::string& path, RObject* out, std::string* err);

/// Reads every object of the lazy-load database `base`.rdx / `base`.rdb, in
/// index order, with its name.
bool ReadLazyLoadDb(const std::string& base, std::vector<std::pair<std::string, RObject>>* out,
                    std::string* err);

}  // namespace gpt

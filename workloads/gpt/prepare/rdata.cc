#include "rdata.h"

#include <zlib.h>

#include <cstring>

#include "files.h"

namespace gpt {
namespace {

// Serialisation codes for the special objects and references (R's serialize.c).
constexpr int kRefSxp = 255;
constexpr int kNilValueSxp = 254;
constexpr int kPersistSxp = 247;
constexpr int kPackageSxp = 248;
constexpr int kNamespaceSxp = 249;
constexpr int kAltrepSxp = 238;
constexpr int kLangSxp = 6;
constexpr int kExprSxp = 20;
constexpr int kHasAttrBit = 1 << 9;
constexpr int kHasTagBit = 1 << 10;
constexpr int kLatin1Level = 1 << 2;
constexpr int kMaxDepth = 2000;

uint32_t BigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

std::string Latin1ToUtf8(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

// A cursor over one XDR stream. Every read checks the bounds, so a truncated
// or corrupt file gives an error instead of undefined behaviour.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  bool Header(std::string* err) {
    if (bytes_.substr(0, 2) != "X\n") {
      if (bytes_.substr(0, 2) == "A\n" || bytes_.substr(0, 2) == "B\n") {
        return Fail(
            "only the XDR serialisation format is supported (this stream is ASCII or "
            "native binary)",
            err);
      }
      return Fail("not an R serialisation stream (no \"X\\n\" header)", err);
    }
    pos_ = 2;
    int32_t version = 0, writer = 0, min_reader = 0;
    if (!Int(&version, err) || !Int(&writer, err) || !Int(&min_reader, err)) return false;
    if (version != 2 && version != 3) {
      return Fail("unsupported serialisation version " + std::to_string(version), err);
    }
    if (version == 3) {
      int32_t n = 0;
      std::string encoding;
      if (!Int(&n, err) || !Bytes(n, &encoding, err)) return false;
    }
    return true;
  }

  bool Item(RObject* out, int depth, std::string* err) {
    if (depth > kMaxDepth) return Fail("object nested too deeply", err);
    int32_t flags = 0;
    if (!Int(&flags, err)) return false;
    const int type = flags & 0xFF;
    const bool has_attr = flags & kHasAttrBit;
    const bool has_tag = flags & kHasTagBit;
    const int levels = flags >> 12;
    *out = RObject();
    switch (type) {
      case kNilValueSxp:
        return true;
      case kRefSxp: {
        int32_t index = flags >> 8;
        if (index == 0 && !Int(&index, err)) return false;
        if (index < 1 || static_cast<size_t>(index) > refs_.size()) {
          return Fail("reference " + std::to_string(index) + " to an object not yet read", err);
        }
        *out = refs_[index - 1];
        return true;
      }
      case 253:
      case 252:
      case 251:
      case 250:
      case 242:
      case 241:
        // Global/empty/base environments, unbound and missing markers: no payload.
        out->type = RObject::kNull;
        return true;
      case kNamespaceSxp:
      case kPackageSxp:
      case kPersistSxp: {
        RObject info;
        if (!StringVec(&info, depth, err)) return false;
        refs_.push_back(info);
        *out = info;
        return true;
      }
      case RObject::kSymbol: {
        RObject name;
        if (!Item(&name, depth + 1, err)) return false;
        out->type = RObject::kSymbol;
        out->strings = name.strings;
        refs_.push_back(*out);
        return true;
      }
      case RObject::kPairList:
      case kLangSxp:
        return PairList(out, has_attr, has_tag, depth, err);
      case RObject::kChar: {
        int32_t len = 0;
        if (!Int(&len, err)) return false;
        out->type = RObject::kChar;
        if (len == -1) {
          out->strings.push_back(std::nullopt);
          return true;
        }
        std::string s;
        if (!Bytes(len, &s, err)) return false;
        out->strings.push_back((levels & kLatin1Level) ? Latin1ToUtf8(s) : s);
        return true;
      }
      case RObject::kLogical:
      case RObject::kInteger:
      case RObject::kReal:
      case RObject::kString:
      case RObject::kList:
      case kExprSxp: {
        size_t n = 0;
        if (!Length(&n, err)) return false;
        out->type = type == kExprSxp ? RObject::kList : type;
        if (!VectorBody(out, n, depth, err)) return false;
        if (has_attr && !Attributes(out, depth, err)) return false;
        return true;
      }
      case kAltrepSxp:
        return Fail("ALTREP objects are not supported", err);
      default:
        return Fail("unsupported R object type " + std::to_string(type), err);
    }
  }

  size_t pos() const { return pos_; }

 private:
  bool Fail(const std::string& what, std::string* err) {
    *err = what + " (at byte " + std::to_string(pos_) + ")";
    return false;
  }

  bool Int(int32_t* v, std::string* err) {
    if (bytes_.size() - pos_ < 4) return Fail("stream ends inside an integer", err);
    *v = static_cast<int32_t>(BigEndian32(reinterpret_cast<const unsigned char*>(&bytes_[pos_])));
    pos_ += 4;
    return true;
  }

  bool Bytes(int32_t n, std::string* s, std::string* err) {
    if (n < 0 || bytes_.size() - pos_ < static_cast<size_t>(n)) {
      return Fail("stream ends inside a string of " + std::to_string(n) + " bytes", err);
    }
    s->assign(bytes_.substr(pos_, n));
    pos_ += n;
    return true;
  }

  bool Length(size_t* n, std::string* err) {
    int32_t len = 0;
    if (!Int(&len, err)) return false;
    if (len >= 0) {
      *n = static_cast<size_t>(len);
      return true;
    }
    if (len != -1) return Fail("negative vector length", err);
    int32_t hi = 0, lo = 0;
    if (!Int(&hi, err) || !Int(&lo, err)) return false;
    *n = (static_cast<size_t>(static_cast<uint32_t>(hi)) << 32) | static_cast<uint32_t>(lo);
    return true;
  }

  bool VectorBody(RObject* out, size_t n, int depth, std::string* err) {
    // Every element takes at least 4 bytes: reject absurd lengths before allocating.
    if (n > (bytes_.size() - pos_) / 4) return Fail("vector longer than the stream", err);
    switch (out->type) {
      case RObject::kLogical:
      case RObject::kInteger:
        out->ints.resize(n);
        for (size_t i = 0; i < n; ++i) {
          if (!Int(&out->ints[i], err)) return false;
        }
        return true;
      case RObject::kReal:
        out->reals.resize(n);
        for (size_t i = 0; i < n; ++i) {
          if (bytes_.size() - pos_ < 8) return Fail("stream ends inside a double", err);
          const auto* p = reinterpret_cast<const unsigned char*>(&bytes_[pos_]);
          uint64_t bits = (uint64_t{BigEndian32(p)} << 32) | BigEndian32(p + 4);
          std::memcpy(&out->reals[i], &bits, 8);
          pos_ += 8;
        }
        return true;
      case RObject::kString:
        out->strings.resize(n);
        for (size_t i = 0; i < n; ++i) {
          RObject c;
          if (!Item(&c, depth + 1, err)) return false;
          if (c.type != RObject::kChar) return Fail("string vector element is not a string", err);
          out->strings[i] = c.strings[0];
        }
        return true;
      default:  // kList
        out->items.resize(n);
        for (size_t i = 0; i < n; ++i) {
          if (!Item(&out->items[i], depth + 1, err)) return false;
        }
        return true;
    }
  }

  bool Attributes(RObject* out, int depth, std::string* err) {
    RObject list;
    if (!Item(&list, depth + 1, err)) return false;
    if (list.type != RObject::kPairList) return Fail("attributes are not a pairlist", err);
    for (size_t i = 0; i < list.items.size(); ++i) {
      out->attributes.push_back({list.tags[i], std::move(list.items[i])});
    }
    return true;
  }

  // A pairlist is a chain of cells (attributes, tag, value, rest); the chain
  // is followed in a loop so that long lists do not recurse.
  bool PairList(RObject* out, bool has_attr, bool has_tag, int depth, std::string* err) {
    out->type = RObject::kPairList;
    while (true) {
      if (has_attr && !Attributes(out, depth, err)) return false;
      std::string tag;
      if (has_tag) {
        RObject t;
        if (!Item(&t, depth + 1, err)) return false;
        if (!t.strings.empty() && t.strings[0]) tag = *t.strings[0];
      }
      out->tags.push_back(tag);
      out->items.emplace_back();
      if (!Item(&out->items.back(), depth + 1, err)) return false;
      int32_t flags = 0;
      if (!Int(&flags, err)) return false;
      const int type = flags & 0xFF;
      if (type == kNilValueSxp) return true;
      if (type != RObject::kPairList && type != kLangSxp) {
        return Fail("pairlist ends in an object of type " + std::to_string(type), err);
      }
      has_attr = flags & kHasAttrBit;
      has_tag = flags & kHasTagBit;
    }
  }

  bool StringVec(RObject* out, int depth, std::string* err) {
    int32_t zero = 0, n = 0;
    if (!Int(&zero, err) || !Int(&n, err)) return false;
    if (zero != 0 || n < 0) return Fail("malformed namespace or package reference", err);
    out->type = RObject::kString;
    for (int32_t i = 0; i < n; ++i) {
      RObject c;
      if (!Item(&c, depth + 1, err)) return false;
      out->strings.push_back(c.strings.empty() ? std::nullopt : c.strings[0]);
    }
    return true;
  }

  std::string_view bytes_;
  size_t pos_ = 0;
  std::vector<RObject> refs_;
};

// An index or data block may be plain, gzip or zlib with R's 4-byte length prefix.
bool Decode(std::string_view raw, const std::string& what, RObject* out, std::string* err) {
  std::string plain;
  std::string_view stream = raw;
  const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
  if (raw.size() >= 2 && p[0] == 0x1f && p[1] == 0x8b) {
    if (!Inflate(raw, size_t{1} << 31, &plain, err)) {
      *err = what + ": " + *err;
      return false;
    }
    stream = plain;
  }
  if (!Unserialize(stream, out, err)) {
    *err = what + ": " + *err;
    return false;
  }
  return true;
}

}  // namespace

const RObject* RObject::Attribute(const std::string& name) const {
  for (const auto& [key, value] : attributes) {
    if (key == name) return &value;
  }
  return nullptr;
}

std::vector<std::string> RObject::Names() const {
  std::vector<std::string> names;
  if (const RObject* n = Attribute("names")) {
    for (const auto& s : n->strings) names.push_back(s.value_or(""));
  }
  return names;
}

bool Unserialize(std::string_view bytes, RObject* out, std::string* err) {
  Reader reader(bytes);
  return reader.Header(err) && reader.Item(out, 0, err);
}

bool Inflate(std::string_view compressed, size_t limit, std::string* out, std::string* err) {
  z_stream z{};
  // 15 + 32: accept both zlib and gzip headers.
  if (inflateInit2(&z, 15 + 32) != Z_OK) {
    *err = "zlib initialisation failed";
    return false;
  }
  out->clear();
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  z.avail_in = static_cast<uInt>(compressed.size());
  char buffer[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      *err = std::string("corrupt compressed data (zlib: ") + (z.msg ? z.msg : "no detail") + ")";
      inflateEnd(&z);
      return false;
    }
    out->append(buffer, sizeof buffer - z.avail_out);
    if (out->size() > limit) {
      *err = "decompressed data larger than " + std::to_string(limit) + " bytes";
      inflateEnd(&z);
      return false;
    }
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
      *err = "compressed data is truncated";
      inflateEnd(&z);
      return false;
    }
  }
  inflateEnd(&z);
  return true;
}

bool ReadRds(const std::string& path, RObject* out, std::string* err) {
  std::string raw;
  return ReadWholeFile(path, &raw, err) && Decode(raw, path, out, err);
}

bool ReadLazyLoadDb(const std::string& base, std::vector<std::pair<std::string, RObject>>* out,
                    std::string* err) {
  RObject index;
  if (!ReadRds(base + ".rdx", &index, err)) return false;
  const std::string rdx = base + ".rdx";
  const std::vector<std::string> keys = index.Names();
  const RObject* variables = nullptr;
  int compression = 1;
  for (size_t i = 0; i < keys.size() && i < index.items.size(); ++i) {
    if (keys[i] == "variables") variables = &index.items[i];
    if (keys[i] == "compressed" && !index.items[i].ints.empty()) {
      compression = index.items[i].ints[0];
    }
  }
  if (index.type != RObject::kList || variables == nullptr) {
    *err = rdx + ": not a lazy-load index (no \"variables\" list)";
    return false;
  }
  if (compression != 1) {
    *err = rdx + ": compression type " + std::to_string(compression) +
           " (bzip2 or xz) is not supported, only zlib";
    return false;
  }
  std::string rdb;
  if (!ReadWholeFile(base + ".rdb", &rdb, err)) return false;
  const std::vector<std::string> names = variables->Names();
  out->clear();
  for (size_t i = 0; i < variables->items.size(); ++i) {
    const std::string name = i < names.size() ? names[i] : "";
    const std::string what = base + ".rdb object '" + name + "'";
    const RObject& where = variables->items[i];
    if (where.ints.size() != 2 || where.ints[0] < 0 || where.ints[1] < 4 ||
        static_cast<size_t>(where.ints[0]) + where.ints[1] > rdb.size()) {
      *err = what + ": its offset and length lie outside the file";
      return false;
    }
    std::string_view block(rdb.data() + where.ints[0], where.ints[1]);
    const size_t size = BigEndian32(reinterpret_cast<const unsigned char*>(block.data()));
    std::string plain;
    if (!Inflate(block.substr(4), size, &plain, err)) {
      *err = what + ": " + *err;
      return false;
    }
    if (plain.size() != size) {
      *err = what + ": decompressed to " + std::to_string(plain.size()) + " bytes, expected " +
             std::to_string(size);
      return false;
    }
    RObject value;
    if (!Decode(plain, what, &value, err)) return false;
    out->emplace_back(name, std::move(value));
  }
  return true;
}

}  // namespace gpt

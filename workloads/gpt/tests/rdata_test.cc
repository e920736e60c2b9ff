// The R data reader against real files R wrote (tests/testdata) and against
// lazy-load data bases built here, including broken ones.
#include "prepare/rdata.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace gpt {
namespace {

// A writer for R's XDR serialisation, just enough to build test streams.
class Xdr {
 public:
  Xdr& Int(int32_t v) {
    const uint32_t u = static_cast<uint32_t>(v);
    for (int shift = 24; shift >= 0; shift -= 8) bytes += static_cast<char>((u >> shift) & 0xFF);
    return *this;
  }
  Xdr& Header() {
    bytes += "X\n";
    Int(3).Int(0x040201).Int(0x030500).Int(5);
    bytes += "UTF-8";
    return *this;
  }
  // A CHARSXP; `levels` 64 = ASCII, 8 = UTF-8, 4 = latin1.
  Xdr& Char(const std::string& s, int levels = 64) {
    Int(9 | (levels << 12)).Int(static_cast<int32_t>(s.size()));
    bytes += s;
    return *this;
  }
  Xdr& NaString() { return Int(9).Int(-1); }
  Xdr& Strings(const std::vector<std::string>& v, bool has_attr = false) {
    Int(16 | (has_attr ? 0x200 : 0)).Int(static_cast<int32_t>(v.size()));
    for (const std::string& s : v) Char(s);
    return *this;
  }
  Xdr& Nil() { return Int(254); }
  // A names attribute pairlist; the first use writes the symbol, later ones
  // refer to it (R's reference table, index `ref`).
  Xdr& NamesAttr(const std::vector<std::string>& names, int ref) {
    Int(0x402);
    if (ref == 0) {
      Int(1).Char("names");
    } else {
      Int(0xFF | (ref << 8));
    }
    return Strings(names).Nil();
  }
  std::string bytes;
};

std::string Gzip(const std::string& data) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// An .rdb block: big-endian length, then the zlib stream.
std::string RdbBlock(const std::string& serialised) {
  uLongf size = compressBound(serialised.size());
  std::string z(size, '\0');
  compress2(reinterpret_cast<Bytef*>(z.data()), &size,
            reinterpret_cast<const Bytef*>(serialised.data()), serialised.size(), 6);
  z.resize(size);
  return Xdr().Int(static_cast<int32_t>(serialised.size())).bytes + z;
}

// Writes base.rdx / base.rdb holding `objects` (name, serialised stream).
void WriteDb(const std::string& base,
             const std::vector<std::pair<std::string, std::string>>& objects, int compression = 1,
             int32_t corrupt_offset = -1) {
  std::string rdb;
  Xdr index;
  index.Header().Int(0x213).Int(3);
  index.Int(0x213).Int(static_cast<int32_t>(objects.size()));
  std::vector<std::string> names;
  for (const auto& [name, stream] : objects) {
    const std::string block = RdbBlock(stream);
    index.Int(13)
        .Int(2)
        .Int(corrupt_offset >= 0 ? corrupt_offset : static_cast<int32_t>(rdb.size()))
        .Int(static_cast<int32_t>(block.size()));
    rdb += block;
    names.push_back(name);
  }
  index.NamesAttr(names, 0);
  index.Int(19).Int(0);                   // references: empty list
  index.Int(10).Int(1).Int(compression);  // compressed
  index.NamesAttr({"variables", "references", "compressed"}, 1);
  test::WriteFile(base + ".rdx", Gzip(index.bytes));
  test::WriteFile(base + ".rdb", rdb);
}

std::string Book(const std::vector<std::string>& lines) {
  return Xdr().Header().Strings(lines).bytes;
}

TEST(RData, ReadsRealLazyLoadIndex) {
  RObject index;
  std::string err;
  ASSERT_TRUE(ReadRds(test::TestData("janeaustenr_Rdata.rdx"), &index, &err)) << err;
  ASSERT_EQ(index.type, RObject::kList);
  EXPECT_EQ(index.Names(), (std::vector<std::string>{"variables", "references", "compressed"}));
  const RObject& variables = index.items[0];
  EXPECT_EQ(variables.Names(),
            (std::vector<std::string>{"emma", "mansfieldpark", "northangerabbey", "persuasion",
                                      "prideprejudice", "sensesensibility"}));
  ASSERT_EQ(variables.items[0].ints.size(), 2u);
  EXPECT_EQ(variables.items[0].ints[0], 0);
  EXPECT_EQ(variables.items[0].ints[1], 0x55f2b);
  EXPECT_EQ(index.items[2].type, RObject::kLogical);
  EXPECT_EQ(index.items[2].ints, std::vector<int32_t>{1});
}

TEST(RData, ReadsRealCharacterMatrix) {
  RObject m;
  std::string err;
  ASSERT_TRUE(ReadRds(test::TestData("janeaustenr_data.rds"), &m, &err)) << err;
  ASSERT_EQ(m.type, RObject::kString);
  ASSERT_EQ(m.strings.size(), 12u);  // 6 x 2
  EXPECT_EQ(*m.strings[0], "emma");
  EXPECT_EQ(*m.strings[6], "The text of Jane Austen's novel \"Emma\"");
  const RObject* dim = m.Attribute("dim");
  ASSERT_NE(dim, nullptr);
  EXPECT_EQ(dim->ints, (std::vector<int32_t>{6, 2}));
}

TEST(RData, ReadsRealNestedListWithReferences) {
  RObject p;
  std::string err;
  ASSERT_TRUE(ReadRds(test::TestData("janeaustenr_package.rds"), &p, &err)) << err;
  ASSERT_EQ(p.type, RObject::kList);
  ASSERT_FALSE(p.items.empty());
  const RObject& description = p.items[0];
  const std::vector<std::string> keys = description.Names();
  ASSERT_EQ(keys.size(), description.strings.size());
  EXPECT_EQ(keys[0], "Package");
  EXPECT_EQ(*description.strings[0], "janeaustenr");
  EXPECT_EQ(*description.strings[2], "1.0.0");
}

TEST(RData, ReadsLazyLoadDbWithNaAndLatin1) {
  test::TempDir dir;
  Xdr latin;
  latin.Header().Int(16).Int(3).Char("Caf\xe9", 4).NaString().Char("ok", 8);
  WriteDb(dir.path() + "/Rdata",
          {{"first", Book({"Line one", "", "Line three"})}, {"second", latin.bytes}});
  std::vector<std::pair<std::string, RObject>> objects;
  std::string err;
  ASSERT_TRUE(ReadLazyLoadDb(dir.path() + "/Rdata", &objects, &err)) << err;
  ASSERT_EQ(objects.size(), 2u);
  EXPECT_EQ(objects[0].first, "first");
  EXPECT_EQ(*objects[0].second.strings[2], "Line three");
  EXPECT_EQ(objects[1].first, "second");
  EXPECT_EQ(*objects[1].second.strings[0], "Caf\xc3\xa9");  // converted to UTF-8
  EXPECT_FALSE(objects[1].second.strings[1].has_value());   // NA
}

TEST(RData, RejectsTruncatedStream) {
  std::string bytes = Book({"a long enough line of text"});
  bytes.resize(bytes.size() - 5);
  RObject out;
  std::string err;
  EXPECT_FALSE(Unserialize(bytes, &out, &err));
  EXPECT_NE(err.find("stream ends"), std::string::npos) << err;
}

TEST(RData, RejectsOtherFormatsAndTypes) {
  RObject out;
  std::string err;
  EXPECT_FALSE(Unserialize("A\n1\n", &out, &err));
  EXPECT_NE(err.find("only the XDR"), std::string::npos) << err;
  EXPECT_FALSE(Unserialize("hello", &out, &err));
  EXPECT_NE(err.find("not an R serialisation"), std::string::npos) << err;
  const std::string closure = Xdr().Header().Int(3).bytes;  // CLOSXP
  EXPECT_FALSE(Unserialize(closure, &out, &err));
  EXPECT_NE(err.find("unsupported R object type 3"), std::string::npos) << err;
  EXPECT_FALSE(Unserialize("X\n" + Xdr().Int(7).Int(0).Int(0).bytes, &out, &err));
  EXPECT_NE(err.find("version 7"), std::string::npos) << err;
}

TEST(RData, RejectsBadReferenceAndHugeLength) {
  RObject out;
  std::string err;
  EXPECT_FALSE(Unserialize(Xdr().Header().Int(0x3FF).bytes, &out, &err));  // ref 3 of none
  EXPECT_NE(err.find("reference 3"), std::string::npos) << err;
  EXPECT_FALSE(Unserialize(Xdr().Header().Int(13).Int(1 << 30).bytes, &out, &err));
  EXPECT_NE(err.find("longer than the stream"), std::string::npos) << err;
}

TEST(RData, RejectsCorruptDataBases) {
  test::TempDir dir;
  const std::string base = dir.path() + "/Rdata";
  std::vector<std::pair<std::string, RObject>> objects;
  std::string err;

  EXPECT_FALSE(ReadLazyLoadDb(base, &objects, &err));  // nothing there
  EXPECT_NE(err.find("cannot open"), std::string::npos) << err;

  WriteDb(base, {{"book", Book({"text"})}}, /*compression=*/3);
  EXPECT_FALSE(ReadLazyLoadDb(base, &objects, &err));
  EXPECT_NE(err.find("bzip2 or xz"), std::string::npos) << err;

  WriteDb(base, {{"book", Book({"text"})}}, 1, /*corrupt_offset=*/1 << 20);
  EXPECT_FALSE(ReadLazyLoadDb(base, &objects, &err));
  EXPECT_NE(err.find("outside the file"), std::string::npos) << err;

  WriteDb(base, {{"book", Book({"some text to compress"})}});
  std::string rdb = test::ReadFile(base + ".rdb");
  rdb[rdb.size() / 2] ^= 0x55;
  test::WriteFile(base + ".rdb", rdb);
  EXPECT_FALSE(ReadLazyLoadDb(base, &objects, &err));
  EXPECT_NE(err.find("object 'book'"), std::string::npos) << err;
}

TEST(RData, InflateHonoursTheLimit) {
  const std::string text(100000, 'a');
  std::string out, err;
  ASSERT_TRUE(Inflate(Gzip(text), text.size(), &out, &err)) << err;
  EXPECT_EQ(out, text);
  EXPECT_FALSE(Inflate(Gzip(text), 1000, &out, &err));
  EXPECT_NE(err.find("larger than"), std::string::npos) << err;
  EXPECT_FALSE(Inflate(Gzip(text).substr(0, 20), text.size(), &out, &err));
}

}  // namespace
}  // namespace gpt

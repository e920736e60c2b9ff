// The ledger schema, compiled in from schema.sql at build time (see
// CMakeLists.txt), so a ratchet binary never depends on files beside it.
#pragma once

namespace ratchet {

/// The text of src/store/schema.sql.
extern const char kSchemaSql[];
/// meta.schema_version written by this ratchet; a ledger with a higher one is refused.
constexpr int kSchemaVersion = 3;

}  // namespace ratchet

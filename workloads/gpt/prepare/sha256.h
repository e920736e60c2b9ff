// SHA-256 through OpenSSL's libcrypto, for the data manifest.
#pragma once

#include <string>
#include <string_view>

namespace gpt {

/// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

}  // namespace gpt

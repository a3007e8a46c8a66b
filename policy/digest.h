// SHA-256 of bytes in memory, hex-encoded: receipts, policy digests, the
// preview digest and the audit chain. Pure (FIPS 180-4 in plain C++): no
// library is loaded and no syscall made, so it fuzzes and runs anywhere.
// Files are hashed outside policy/ (supervisor/file_digest.h, OpenSSL EVP).
#pragma once

#include <string>
#include <string_view>

namespace cordon::policy {

std::string Sha256Hex(std::string_view data);

// Constant-time comparison of two hex digests.
bool DigestEquals(std::string_view a, std::string_view b);

}  // namespace cordon::policy

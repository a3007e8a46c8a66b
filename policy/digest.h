// SHA-256 with OpenSSL EVP, hex-encoded. Used for receipts, tool pins,
// delete previews and the audit chain.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "policy/result.h"

namespace cordon::policy {

std::string Sha256Hex(std::string_view data);

// Hashes from the current position of `fd` to EOF with pread from offset 0
// (the fd's offset is left alone). At most `max_bytes` are read; more is an
// error (EFBIG), so a hash always covers the whole file.
Result<std::string> Sha256Fd(int fd, uint64_t max_bytes = UINT64_MAX);

// Constant-time comparison of two hex digests.
bool DigestEquals(std::string_view a, std::string_view b);

}  // namespace cordon::policy

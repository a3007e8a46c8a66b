// SHA-256 of a file's bytes with OpenSSL EVP, hex-encoded: tool pins and
// delete previews. libcrypto is opened at the first file hash (dlopen), so
// a launch that hashes no file maps none of it. Bytes in memory are hashed
// by policy::Sha256Hex (policy/digest.h), which needs no library.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace cordon::supervisor {

// Hashes from the current position of `fd` to EOF with pread from offset 0
// (the fd's offset is left alone). At most `max_bytes` are read; more is an
// error (EFBIG), so a hash always covers the whole file.
Result<std::string> Sha256Fd(int fd, uint64_t max_bytes = UINT64_MAX);

}  // namespace cordon::supervisor

#include "supervisor/file_digest.h"

#include <dlfcn.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <mutex>

namespace cordon::supervisor {
namespace {

// libcrypto is loaded on the first hash, not at startup: its ~20,000
// relocations cost a few milliseconds per launch (README, "Speed") and most
// runs hash nothing. The EVP calls are the same; only the binding is late.
// It is initialised without the system's openssl.cnf: a SHA-256 of bytes
// needs no configured provider, and a config naming one that is absent (or
// an OPENSSL_CONF of the caller's) would otherwise stop every hash; the
// config's parse was also ~0.7 ms of the first one.
struct Evp {
  decltype(&::EVP_sha256) sha256;
  decltype(&::EVP_MD_CTX_new) ctx_new;
  decltype(&::EVP_MD_CTX_free) ctx_free;
  decltype(&::EVP_DigestInit_ex) init;
  decltype(&::EVP_DigestUpdate) update;
  decltype(&::EVP_DigestFinal_ex) final;
};

template <typename F>
bool Bind(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(::dlsym(lib, name));
  return *out != nullptr;
}

// A hash that cannot be computed must not be replaced by anything else:
// without libcrypto cordon stops, as it does on an unsupported kernel.
[[noreturn]] void Unavailable(const char* what) {
  std::fprintf(stderr, "cordon: OpenSSL libcrypto cannot hash (%s)\n", what);
  ::_exit(125);
}

const Evp& Crypto() {
  static Evp evp;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = ::dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) Unavailable(::dlerror());
    decltype(&::OPENSSL_init_crypto) init_crypto;
    if (!Bind(lib, "OPENSSL_init_crypto", &init_crypto)) Unavailable(::dlerror());
    if (init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr) != 1) Unavailable("OPENSSL_init_crypto");
    if (!Bind(lib, "EVP_sha256", &evp.sha256) || !Bind(lib, "EVP_MD_CTX_new", &evp.ctx_new) ||
        !Bind(lib, "EVP_MD_CTX_free", &evp.ctx_free) ||
        !Bind(lib, "EVP_DigestInit_ex", &evp.init) ||
        !Bind(lib, "EVP_DigestUpdate", &evp.update) ||
        !Bind(lib, "EVP_DigestFinal_ex", &evp.final)) {
      Unavailable(::dlerror());
    }
  });
  return evp;
}

struct CtxFree {
  void operator()(EVP_MD_CTX* c) const { Crypto().ctx_free(c); }
};
using Ctx = std::unique_ptr<EVP_MD_CTX, CtxFree>;

std::string Hex(const unsigned char* d, unsigned n) {
  static const char* k = "0123456789abcdef";
  std::string s(n * 2, '0');
  for (unsigned i = 0; i < n; ++i) {
    s[2 * i] = k[d[i] >> 4];
    s[2 * i + 1] = k[d[i] & 15];
  }
  return s;
}

Ctx NewSha256() {
  const Evp& e = Crypto();
  Ctx ctx(e.ctx_new());
  if (ctx && e.init(ctx.get(), e.sha256(), nullptr) != 1) ctx.reset();
  return ctx;
}

std::string Finish(EVP_MD_CTX* ctx) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  if (Crypto().final(ctx, md, &n) != 1) Unavailable("EVP_DigestFinal_ex failed");
  return Hex(md, n);
}

}  // namespace

Result<std::string> Sha256Fd(int fd, uint64_t max_bytes) {
  Ctx ctx = NewSha256();
  if (!ctx) return SysError{ENOMEM, "EVP_DigestInit"};
  char buf[1 << 16];
  uint64_t off = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(off));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("pread");
    }
    if (n == 0) break;
    off += static_cast<uint64_t>(n);
    if (off > max_bytes) return SysError{EFBIG, "sha256", "file larger than the limit"};
    if (Crypto().update(ctx.get(), buf, static_cast<size_t>(n)) != 1) {
      return SysError{EIO, "EVP_DigestUpdate"};
    }
  }
  return Finish(ctx.get());
}

}  // namespace cordon::supervisor

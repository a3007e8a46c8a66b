// The one JSON-per-packet transport (supervisor/seqpacket.h) of the
// approval protocol and the control socket, over a real socketpair.
#include "supervisor/seqpacket.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace cordon::supervisor {
namespace {

struct Pair {
  Pair() {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0) {
      a = Fd(sv[0]);
      b = Fd(sv[1]);
    }
  }
  Fd a, b;
};

TEST(Seqpacket, AMessageAndItsDescriptorsArriveTogether) {
  Pair p;
  ASSERT_TRUE(p.a && p.b);
  Fd file(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(SendPacket(p.a.get(), {{"type", "reload"}}, 1024, {file.get()}).ok());
  auto got = RecvPacket(p.b.get(), 1024, kMaxPacketFds);
  ASSERT_TRUE(got.ok()) << Describe(got.error());
  EXPECT_EQ(got->body["type"], "reload");
  ASSERT_EQ(got->fds.size(), 1u);
  EXPECT_EQ(::fcntl(got->fds[0].get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
}

TEST(Seqpacket, TheApprovalProtocolTakesNoDescriptors) {
  Pair p;
  ASSERT_TRUE(p.a && p.b);
  // The honest message: read as it was sent.
  ASSERT_TRUE(SendMessage(p.a.get(), {{"type", "hello"}}).ok());
  auto plain = RecvMessage(p.b.get());
  ASSERT_TRUE(plain.ok()) << Describe(plain.error());
  EXPECT_EQ((*plain)["type"], "hello");
  // One with a descriptor attached is refused, not read as if it had none.
  Fd file(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(SendPacket(p.a.get(), {{"type", "hello"}}, 1024, {file.get()}).ok());
  auto with_fd = RecvMessage(p.b.get());
  ASSERT_FALSE(with_fd.ok());
  EXPECT_EQ(with_fd.error().err, EBADMSG);
}

TEST(Seqpacket, OversizedAndUntypedPacketsAreRefused) {
  Pair p;
  ASSERT_TRUE(p.a && p.b);
  const std::string big(2000, 'x');
  ASSERT_EQ(::send(p.a.get(), big.data(), big.size(), 0), static_cast<ssize_t>(big.size()));
  auto over = RecvPacket(p.b.get(), 1024);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().err, EBADMSG);
  const std::string untyped = R"({"kind":"x"})";
  ASSERT_EQ(::send(p.a.get(), untyped.data(), untyped.size(), 0),
            static_cast<ssize_t>(untyped.size()));
  auto bad = RecvPacket(p.b.get(), 1024);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().err, EBADMSG);
  EXPECT_FALSE(SendPacket(p.a.get(), {{"type", big}}, 1024).ok()) << "over the sender's bound";
  p.a.reset();
  auto eof = RecvPacket(p.b.get(), 1024);
  ASSERT_FALSE(eof.ok());
  EXPECT_EQ(eof.error().err, ECONNRESET);
}

TEST(Seqpacket, AStopThatComesFirstCancelsTheWait) {
  Pair p;
  ASSERT_TRUE(p.a && p.b);
  int stop[2];
  ASSERT_EQ(::pipe2(stop, O_CLOEXEC), 0);
  Fd stop_r(stop[0]);
  ::close(stop[1]);  // readable: EOF
  auto r = RecvPacket(p.b.get(), 1024, 0, stop_r.get());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().err, ECANCELED);
}

}  // namespace
}  // namespace cordon::supervisor

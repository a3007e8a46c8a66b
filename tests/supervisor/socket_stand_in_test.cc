// Stand-in sockets (supervisor/socket_stand_in.h): what the supervisor reads
// of the tool's socket from /proc when it cannot take the socket itself,
// checked against sockets of this process and the kernel's own table.
#include "supervisor/socket_stand_in.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

constexpr char kTable[] =
    "Num       RefCount Protocol Flags    Type St Inode Path\n"
    "0000000000000000: 00000002 00000000 00010000 0001 01 20963 /run/systemd/private\n"
    "0000000000000000: 00000003 00000000 00000000 0001 03 4242\n"
    "0000000000000000: 00000002 00000000 00000000 0005 01 77 @abstract name\n"
    "0000000000000000: 00000002 00000000 0000zz00 0001 01 88\n";

TEST(FindUnixSocketLine, ReadsTypeStateAndName) {
  auto listening = FindUnixSocketLine(kTable, 20963);
  ASSERT_TRUE(listening);
  EXPECT_EQ(listening->type, SOCK_STREAM);
  EXPECT_TRUE(listening->listening);
  EXPECT_TRUE(listening->named);
  auto unnamed = FindUnixSocketLine(kTable, 4242);
  ASSERT_TRUE(unnamed);
  EXPECT_FALSE(unnamed->listening);
  EXPECT_FALSE(unnamed->named);
  auto seqpacket = FindUnixSocketLine(kTable, 77);
  ASSERT_TRUE(seqpacket);
  EXPECT_EQ(seqpacket->type, SOCK_SEQPACKET);
  EXPECT_TRUE(seqpacket->named);
}

TEST(FindUnixSocketLine, AnAbsentInodeOrAMalformedLineIsNone) {
  EXPECT_FALSE(FindUnixSocketLine(kTable, 2096));   // a prefix of one there
  EXPECT_FALSE(FindUnixSocketLine(kTable, 209630));
  EXPECT_FALSE(FindUnixSocketLine(kTable, 88));     // flags not hex
  EXPECT_FALSE(FindUnixSocketLine("", 1));
  EXPECT_FALSE(FindUnixSocketLine("header only", 1));
}

// Against the kernel: this process's own descriptors.
TEST(ReadToolUnixSocket, SaysWhatTheDescriptorIs) {
  Fd stream(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0));
  Fd seq(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  Fd inet(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  Fd file(::open("/proc/self/status", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(stream && seq && inet && file);
  struct stat st;
  ASSERT_EQ(::fstat(stream.get(), &st), 0);
  auto s = ReadToolUnixSocket(::getpid(), stream.get());
  ASSERT_TRUE(s) << Describe(s.error());
  EXPECT_EQ(s->ino, st.st_ino);
  EXPECT_EQ(s->line.type, SOCK_STREAM);
  EXPECT_TRUE(s->nonblock);
  EXPECT_FALSE(s->cloexec);
  auto q = ReadToolUnixSocket(::getpid(), seq.get());
  ASSERT_TRUE(q) << Describe(q.error());
  EXPECT_EQ(q->line.type, SOCK_SEQPACKET);
  EXPECT_FALSE(q->nonblock);
  EXPECT_TRUE(q->cloexec);
  EXPECT_EQ(ReadToolUnixSocket(::getpid(), inet.get()).error().err, EAFNOSUPPORT);
  EXPECT_EQ(ReadToolUnixSocket(::getpid(), file.get()).error().err, ENOTSOCK);
  EXPECT_EQ(ReadToolUnixSocket(::getpid(), 100000).error().err, EBADF);
}

TEST(ReadToolInetSocket, ReadsTheProtocolOfAnUnboundSocket) {
  Fd tcp6(::socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  Fd udp(::socket(AF_INET, SOCK_DGRAM, 0));
  Fd unix_sock(::socket(AF_UNIX, SOCK_STREAM, 0));
  ASSERT_TRUE(tcp6 && udp && unix_sock);
  auto t = ReadToolInetSocket(::getpid(), tcp6.get());
  ASSERT_TRUE(t) << Describe(t.error());
  EXPECT_EQ(t->domain, AF_INET6);
  EXPECT_EQ(t->type, SOCK_STREAM);
  EXPECT_TRUE(t->nonblock);
  EXPECT_TRUE(t->cloexec);
  auto u = ReadToolInetSocket(::getpid(), udp.get());
  ASSERT_TRUE(u) << Describe(u.error());
  EXPECT_EQ(u->domain, AF_INET);
  EXPECT_EQ(u->type, SOCK_DGRAM);
  EXPECT_FALSE(u->nonblock);
  EXPECT_EQ(ReadToolInetSocket(::getpid(), unix_sock.get()).error().err, EAFNOSUPPORT);
  EXPECT_EQ(InetSocketOf("SCTP").domain, 0);
  EXPECT_EQ(InetSocketOf("PINGv6").protocol, IPPROTO_ICMPV6);
}

TEST(StandIns, HandsOverOnceAndKeepsABoundedNumber) {
  StandIns s;
  for (ino_t i = 1; i <= 65; ++i) s.Keep(i, Fd(::dup(0)));
  EXPECT_FALSE(s.Take(1)) << "the oldest went first";
  auto two = s.Take(2);
  ASSERT_TRUE(two);
  EXPECT_TRUE(two->valid());
  EXPECT_FALSE(s.Take(2)) << "handed over once";
  EXPECT_TRUE(s.Take(65));
}

}  // namespace
}  // namespace cordon::supervisor

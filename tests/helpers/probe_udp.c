/* probe udp ...: the tool's UDP (probe.c's "udp" operations). Exit status 0
 * on success, else the errno of the first call that failed (or 99 when a
 * datagram came back wrong). Every wait is bounded (SO_RCVTIMEO, 5 s).
 *
 *   probe udp talk 4|6: a server and a client in this process, on
 *     127.0.0.1 or ::1, pass datagrams with sendto/recvfrom, with
 *     connect/send/recv, and with sendmsg (its address in memory)
 *   probe udp send 4|6 PORT: sends "x" to loopback PORT with sendto, "y"
 *     with sendmsg and "z" after connect (nothing waits for an answer)
 *   probe udp socket FAMILY TYPE PROTOCOL: socket(2) as given (numbers)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static int Loopback(int v6, unsigned short port, struct sockaddr_storage* ss) {
  memset(ss, 0, sizeof *ss);
  if (v6) {
    struct sockaddr_in6* a = (struct sockaddr_in6*)ss;
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    a->sin6_port = htons(port);
    return sizeof *a;
  }
  struct sockaddr_in* a = (struct sockaddr_in*)ss;
  a->sin_family = AF_INET;
  a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a->sin_port = htons(port);
  return sizeof *a;
}

static int Udp(int v6) {
  int s = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  struct timeval tv = {5, 0};
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return s;
}

/* Receives one datagram on `s` and checks it is `want`. */
static int Expect(int s, char want, struct sockaddr_storage* from, socklen_t* fromlen) {
  char c = 0;
  socklen_t dummy = sizeof(struct sockaddr_storage);
  struct sockaddr_storage ignored;
  ssize_t n =
      recvfrom(s, &c, 1, 0, (struct sockaddr*)(from ? from : &ignored), fromlen ? fromlen : &dummy);
  if (n < 0) return errno;
  return n == 1 && c == want ? 0 : 99;
}

static int Talk(int v6) {
  struct sockaddr_storage addr, peer;
  int len = Loopback(v6, 0, &addr);
  int srv = Udp(v6), cli = Udp(v6);
  if (srv < 0 || cli < 0) return errno;
  if (bind(srv, (struct sockaddr*)&addr, (socklen_t)len) != 0) return errno;
  socklen_t alen = sizeof addr;
  if (getsockname(srv, (struct sockaddr*)&addr, &alen) != 0) return errno;
  /* sendto and recvfrom, and the answer back to where it came from. */
  if (sendto(cli, "a", 1, 0, (struct sockaddr*)&addr, alen) != 1) return errno;
  socklen_t plen = sizeof peer;
  int rc = Expect(srv, 'a', &peer, &plen);
  if (rc != 0) return rc;
  if (sendto(srv, "A", 1, 0, (struct sockaddr*)&peer, plen) != 1) return errno;
  if ((rc = Expect(cli, 'A', NULL, NULL)) != 0) return rc;
  /* sendmsg: the address in memory, where no filter reads it. */
  struct iovec iov = {(void*)"c", 1};
  struct msghdr m = {.msg_name = &addr, .msg_namelen = alen, .msg_iov = &iov, .msg_iovlen = 1};
  if (sendmsg(cli, &m, 0) != 1) return errno;
  if ((rc = Expect(srv, 'c', NULL, NULL)) != 0) return rc;
  /* connect, send, recv. */
  if (connect(cli, (struct sockaddr*)&addr, alen) != 0) return errno;
  if (send(cli, "b", 1, 0) != 1) return errno;
  if ((rc = Expect(srv, 'b', NULL, NULL)) != 0) return rc;
  return 0;
}

static int Send(int v6, unsigned short port) {
  struct sockaddr_storage addr;
  socklen_t len = (socklen_t)Loopback(v6, port, &addr);
  int s = Udp(v6);
  if (s < 0) return errno;
  if (sendto(s, "x", 1, 0, (struct sockaddr*)&addr, len) != 1) return errno;
  struct iovec iov = {(void*)"y", 1};
  struct msghdr m = {.msg_name = &addr, .msg_namelen = len, .msg_iov = &iov, .msg_iovlen = 1};
  if (sendmsg(s, &m, 0) != 1) return errno;
  if (connect(s, (struct sockaddr*)&addr, len) != 0) return errno;
  if (send(s, "z", 1, 0) != 1) return errno;
  return 0;
}

int probe_udp(int argc, char** argv) {
  if (argc < 1) return 100;
  const char* op = argv[0];
  int v6 = argc > 1 && !strcmp(argv[1], "6");
  if (!strcmp(op, "talk")) return Talk(v6);
  if (!strcmp(op, "send") && argc > 2) return Send(v6, (unsigned short)atoi(argv[2]));
  if (!strcmp(op, "socket") && argc > 3) {
    int s = socket(atoi(argv[1]), atoi(argv[2]), atoi(argv[3]));
    return s < 0 ? errno : 0;
  }
  return 100;
}

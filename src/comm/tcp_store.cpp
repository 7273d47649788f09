// TcpStore: see tcp_store.h.
#include "tcp_store.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <thread>

#include "kiln/error.h"

namespace kiln::comm {
namespace {
using Clock = std::chrono::steady_clock;

int connect_once(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = res; a; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  return fd;
}

// The whole handshake (the server's challenge, its verdict and proof) must arrive within this long, or the store's
// timeout when shorter: one deadline, not a limit per recv (a server sending a byte now and then cannot hold a
// worker). The server gives a client the same 10 s (HANDSHAKE_TIMEOUT in _store.py) and answers at once.
constexpr std::chrono::milliseconds kHandshakeLimit{10000};

// Reads exactly n bytes before `deadline`: poll() for the time left before each recv. Returns 0 when done, or
// the failure: ETIMEDOUT (deadline passed), ECONNRESET for a closed connection, or recv's errno.
int recv_by(int fd, void* p, size_t n, Clock::time_point deadline) {
  char* c = static_cast<char*>(p);
  while (n) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return ETIMEDOUT;
    pollfd pfd{fd, POLLIN, 0};
    int r = ::poll(&pfd, 1, int(std::min<long long>(left + 1, 1 << 30)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno;
    if (r == 0) continue;  // re-checks the deadline
    ssize_t k = ::recv(fd, c, n, MSG_DONTWAIT);
    if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (k < 0) return errno;
    if (k == 0) return ECONNRESET;
    c += k;
    n -= size_t(k);
  }
  return 0;
}

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'R', 'D', 'Z', '1'};
constexpr size_t kNonce = 32, kMac = 32;
using Mac = std::array<unsigned char, kMac>;

// HMAC-SHA256(token, label 0x00 server_nonce client_nonce): the label keeps the client's and the server's proofs
// apart (a proof cannot be reflected back). OpenSSL's libcrypto (docs/decisions/rendezvous-auth.md).
Mac proof(const std::string& token, const char* label, const unsigned char* sn, const unsigned char* cn) {
  std::string msg(label);
  msg.push_back('\0');
  msg.append(reinterpret_cast<const char*>(sn), kNonce).append(reinterpret_cast<const char*>(cn), kNonce);
  static const unsigned char no_key = 0;  // an empty token: a valid key pointer of length 0
  const void* key = token.empty() ? static_cast<const void*>(&no_key) : static_cast<const void*>(token.data());
  Mac out{};
  unsigned int n = 0;
  KILN_CHECK(HMAC(EVP_sha256(), key, int(token.size()), reinterpret_cast<const unsigned char*>(msg.data()),
                  msg.size(), out.data(), &n) != nullptr && n == kMac,
             Runtime, "Kiln communication: HMAC-SHA256 failed in OpenSSL.");
  return out;
}
}  // namespace

TcpStore::TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout, const std::string& token)
    : where_(host + ":" + std::to_string(port)), timeout_(timeout) {
  KILN_CHECK(port > 0 && port < 65536, Value, "Kiln communication: the store port must be in [1, 65535], got ", port,
             ".");
  auto deadline = Clock::now() + timeout;
  while ((fd_ = connect_once(host, port)) < 0) {
    KILN_CHECK(Clock::now() < deadline, Runtime, "Kiln communication: cannot reach the rendezvous store at ", where_,
               " within ", timeout.count(), " ms (is the launcher, or rank 0, running there?).");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // A store that stops answering must not hang this process: every read waits at most the timeout.
  timeval tv{};
  tv.tv_sec = timeout.count() / 1000;
  tv.tv_usec = (timeout.count() % 1000) * 1000;
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  try {
    handshake(token);
  } catch (...) {
    close(fd_);
    fd_ = -1;
    throw;
  }
}

TcpStore::~TcpStore() {
  if (fd_ >= 0) close(fd_);
}

void TcpStore::handshake(const std::string& token) {
  // One deadline for the whole handshake (kHandshakeLimit, or the store's timeout when shorter).
  const auto limit = std::min(timeout_, kHandshakeLimit);
  const auto deadline = Clock::now() + limit;
  auto why = [&](int err) {
    return err == ETIMEDOUT ? "no complete answer within " + std::to_string(limit.count()) + " ms"
           : err == ECONNRESET ? std::string("closed the connection")
                               : std::string(std::strerror(err));
  };
  // The server speaks first: magic and its nonce.
  unsigned char hello[sizeof kMagic + kNonce];
  if (int err = recv_by(fd_, hello, sizeof hello, deadline)) {
    KILN_FAIL(Runtime, "Kiln communication: the server at ", where_, " did not open the rendezvous handshake (",
              why(err), "): is another program using this port?");
  }
  KILN_CHECK(std::memcmp(hello, kMagic, sizeof kMagic) == 0, Runtime, "Kiln communication: the server at ", where_,
             " does not speak Kiln's rendezvous protocol (another program on this port?).");
  const unsigned char* sn = hello + sizeof kMagic;
  unsigned char cn[kNonce];
  KILN_CHECK(RAND_bytes(cn, int(kNonce)) == 1, Runtime, "Kiln communication: OpenSSL's RAND_bytes failed.");
  Mac mine = proof(token, "kiln-rdzv-client", sn, cn);
  unsigned char reply[kNonce + kMac];
  std::memcpy(reply, cn, kNonce);
  std::memcpy(reply + kNonce, mine.data(), kMac);
  send_all(reply, sizeof reply);
  char verdict = 0;
  if (int err = recv_by(fd_, &verdict, 1, deadline); err == ETIMEDOUT) {
    KILN_FAIL(Runtime, "Kiln communication: the rendezvous store at ", where_, " did not answer this process's ",
              "handshake (", why(err), ").");
  }
  KILN_CHECK(verdict == 1, Runtime, "Kiln communication: the rendezvous store at ", where_,
             " refused this process: its token differs from the store's. Every process of the job (and the launcher "
             "serving the store) must have the same KILN_RENDEZVOUS_TOKEN.");
  Mac theirs{};
  if (int err = recv_by(fd_, theirs.data(), kMac, deadline)) {
    KILN_FAIL(Runtime, "Kiln communication: the server at ", where_, " did not finish the rendezvous handshake (",
              why(err), ").");
  }
  Mac want = proof(token, "kiln-rdzv-server", sn, cn);
  KILN_CHECK(CRYPTO_memcmp(theirs.data(), want.data(), kMac) == 0, Runtime, "Kiln communication: the server at ",
             where_, " is not this job's rendezvous store: it could not prove that it knows the job's token "
             "(KILN_RENDEZVOUS_TOKEN).");
}

void TcpStore::send_all(const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n) {
    ssize_t k = ::send(fd_, c, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    KILN_CHECK(k > 0, Runtime, "Kiln communication: lost the rendezvous store at ", where_, " (", std::strerror(errno),
               ").");
    c += k;
    n -= size_t(k);
  }
}

void TcpStore::recv_all(void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n) {
    ssize_t k = ::recv(fd_, c, n, 0);
    if (k < 0 && errno == EINTR) continue;
    KILN_CHECK(k > 0, Runtime, "Kiln communication: lost the rendezvous store at ", where_, " (",
               k == 0 ? "connection closed" : std::strerror(errno), ").");
    c += k;
    n -= size_t(k);
  }
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  std::lock_guard<std::mutex> lock(mu_);
  uint32_t kl = uint32_t(key.size());
  uint64_t vl = data.size();
  std::string msg(1, 'S');
  msg.append(reinterpret_cast<const char*>(&kl), 4).append(key);
  msg.append(reinterpret_cast<const char*>(&vl), 8).append(data.begin(), data.end());
  send_all(msg.data(), msg.size());
  char ok = 0;
  recv_all(&ok, 1);
  KILN_CHECK(ok == 1, Runtime, "Kiln communication: the rendezvous store at ", where_, " refused key '", key, "'.");
}

bool TcpStore::try_get(const std::string& key, std::vector<char>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  uint32_t kl = uint32_t(key.size());
  std::string msg(1, 'G');
  msg.append(reinterpret_cast<const char*>(&kl), 4).append(key);
  send_all(msg.data(), msg.size());
  char found = 0;
  recv_all(&found, 1);
  if (!found) return false;
  uint64_t vl = 0;
  recv_all(&vl, 8);
  std::vector<char> v(vl);
  if (vl) recv_all(v.data(), vl);
  if (out) *out = std::move(v);
  return true;
}

std::vector<char> TcpStore::get(const std::string& key) {
  wait({key}, timeout_);
  std::vector<char> v;
  KILN_CHECK(try_get(key, &v), Runtime, "Kiln communication: key '", key, "' vanished from the store at ", where_, ".");
  return v;
}

void TcpStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  for (const auto& key : keys) {
    while (!try_get(key, nullptr)) {
      KILN_CHECK(Clock::now() < deadline, Runtime, "Kiln communication: timed out after ", timeout.count(),
                 " ms waiting for '", key, "' in the rendezvous store at ", where_,
                 " (a peer process did not start, or failed before joining).");
      std::this_thread::sleep_for(pause);
      if (pause < std::chrono::milliseconds(20)) pause *= 2;
    }
  }
}

}  // namespace kiln::comm

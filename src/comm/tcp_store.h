// A gloo::rendezvous::Store over TCP: the client side of the key-value store that Kiln's launcher (kiln.msrun) or
// rank 0 serves (python/kiln/communication/_store.py). Gloo's 2022 snapshot in Debian has FileStore, HashStore,
// PrefixStore and RedisStore but no TCP store; this is rendezvous only (addresses of peers), never collective data.
//
// Protocol (one persistent connection, requests answered in order; integers little-endian). It opens with a
// mutual challenge-response on the job's token (KILN_RENDEZVOUS_TOKEN; docs/decisions/rendezvous-auth.md), so that
// only the job's processes can read or write keys, and a process only trusts a store that knows the token:
//   server -> "KILNRDZ1" sn[32]                                      magic + version, the server's random nonce
//   client -> cn[32] HMAC-SHA256(token, "kiln-rdzv-client" 0x00 sn cn)  its nonce and its proof
//   server -> u8 0 (refused: wrong token; then it closes)
//           | u8 1 HMAC-SHA256(token, "kiln-rdzv-server" 0x00 sn cn)   the server's proof, checked here
// then requests:
//   'S' u32 klen key u64 vlen value  -> u8 1                       set
//   'G' u32 klen key                 -> u8 0 | u8 1 u64 vlen value  get, non-blocking
// get/wait poll 'G' until the key exists or the timeout passes (RuntimeError naming the key). The handshake
// authenticates the connection's peers; nothing is encrypted (the store holds only transport addresses).
#pragma once
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>

namespace kiln::comm {

class TcpStore : public gloo::rendezvous::Store {
 public:
  // Connects to host:port, retrying until `timeout` (the server may start after this process), and runs the
  // handshake with `token` (may be empty: a loopback job started by hand without a token). RuntimeError naming
  // the address when it cannot connect, when the store refuses the token, or when the server cannot prove it
  // knows the token.
  TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout, const std::string& token);
  ~TcpStore() override;
  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  void handshake(const std::string& token);
  bool try_get(const std::string& key, std::vector<char>* out);
  void send_all(const void* p, size_t n);
  void recv_all(void* p, size_t n);
  std::string where_;
  std::chrono::milliseconds timeout_;
  int fd_ = -1;
  std::mutex mu_;
};

}  // namespace kiln::comm

// A gloo::rendezvous::Store over TCP: the client side of the key-value store that Kiln's launcher (kiln.msrun) or
// rank 0 serves (python/kiln/communication/_store.py). Gloo's 2022 snapshot in Debian has FileStore, HashStore,
// PrefixStore and RedisStore but no TCP store; this is rendezvous only (addresses of peers), never collective data.
//
// Protocol (one persistent connection, requests answered in order; integers little-endian):
//   'S' u32 klen key u64 vlen value  -> u8 1                       set
//   'G' u32 klen key                 -> u8 0 | u8 1 u64 vlen value  get, non-blocking
// get/wait poll 'G' until the key exists or the timeout passes (RuntimeError naming the key).
#pragma once
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>

namespace kiln::comm {

class TcpStore : public gloo::rendezvous::Store {
 public:
  // Connects to host:port, retrying until `timeout` (the server may start after this process).
  // RuntimeError naming the address when it cannot.
  TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout);
  ~TcpStore() override;
  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  bool try_get(const std::string& key, std::vector<char>* out);
  void send_all(const void* p, size_t n);
  void recv_all(void* p, size_t n);
  std::string where_;
  std::chrono::milliseconds timeout_;
  int fd_ = -1;
  std::mutex mu_;
};

}  // namespace kiln::comm

#pragma once

// Local HTTP for the tests of `--metrics-port` and of ranks meeting over TCP.
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

namespace meshsim::testing {

// A port free on 127.0.0.1 just now (bound to port 0, read back, let go).
inline int free_port() {
  const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(probe, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(probe);
  return ntohs(address.sin_port);
}

struct Scrape {
  int status = 0;
  std::string content_type, body;
};

// GET http://127.0.0.1:PORT/PATH as Prometheus would; nothing when no one answers.
inline std::optional<Scrape> scrape(int port, const std::string& path = "/metrics") {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(1);
  const auto response = client.Get(path.c_str());
  if (!response) return std::nullopt;
  return Scrape{response->status, response->get_header_value("Content-Type"), response->body};
}

// Runs `command` on a thread, scraping PORT every 10 ms meanwhile, until a body holds
// `wanted` or the command returns: the last body seen.
template <typename Command>
std::string scrape_while(int port, const std::string& wanted, Command command) {
  std::atomic<bool> done{false};
  std::thread running([&] {
    command();
    done = true;
  });
  std::string seen;
  while (!done && seen.find(wanted) == std::string::npos) {
    if (const auto got = scrape(port)) seen = got->body;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  running.join();
  return seen;
}

}  // namespace meshsim::testing

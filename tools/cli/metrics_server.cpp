#include "tools/cli/metrics_server.hpp"

#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

namespace meshsim::cli {

struct MetricsServer::Impl {
  httplib::Server server;
  std::thread thread;
  std::string host;
  int port = 0;
  std::atomic<bool> listening_ended{false};
  std::mutex mutex;
  std::string text;  // what a scrape returns
};

MetricsServer::MetricsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

namespace {

// Shuts down every connection accepted on `port` (the process's sockets whose local port
// it is, but the listening one): cpp-httplib's stop() closes only the listening socket,
// and waits for its workers, one of which a client dripping a byte a second keeps reading
// for hours. Found through /proc/self/fd, so no worker's socket is missed.
void shut_down_clients(int port) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    int fd = -1;
    const std::string name = entry.path().filename().string();
    if (std::from_chars(name.data(), name.data() + name.size(), fd).ec != std::errc{}) continue;
    sockaddr_storage local{}, peer{};
    socklen_t local_size = sizeof local, peer_size = sizeof peer;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_size) != 0) continue;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_size) != 0) continue;  // listening, or not a socket
    in_port_t local_port = 0;
    if (local.ss_family == AF_INET) local_port = reinterpret_cast<const sockaddr_in*>(&local)->sin_port;
    if (local.ss_family == AF_INET6) local_port = reinterpret_cast<const sockaddr_in6*>(&local)->sin6_port;
    if (ntohs(local_port) == port) ::shutdown(fd, SHUT_RDWR);
  }
}

}  // namespace

MetricsServer::~MetricsServer() {
  impl_->server.stop();
  // Until the listening thread has joined its workers: a client still connected is cut
  // off, so no client holds the process after its run.
  while (!impl_->listening_ended) {
    shut_down_clients(impl_->port);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (impl_->thread.joinable()) impl_->thread.join();
}

Expected<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& listen) {
  auto impl = std::make_unique<Impl>();
  const auto colon = listen.rfind(':');
  impl->host = colon == std::string::npos ? "127.0.0.1" : listen.substr(0, colon);
  const std::string port_text = colon == std::string::npos ? listen : listen.substr(colon + 1);
  int port = -1;
  if (!port_text.empty() && port_text.find_first_not_of("0123456789") == std::string::npos && port_text.size() <= 5) {
    port = std::stoi(port_text);
  }
  if (port < 0 || port > 65535 || impl->host.empty()) {
    return Error{"--metrics-port " + listen + ": expected PORT or HOST:PORT with a port 0-65535 (0: any free one)"};
  }
  Impl* state = impl.get();
  // A scrape is one small request: a client idle or slower than this is dropped.
  impl->server.set_read_timeout(2, 0);
  impl->server.set_write_timeout(2, 0);
  impl->server.set_keep_alive_timeout(2);
  impl->server.Get("/metrics", [state](const httplib::Request&, httplib::Response& response) {
    const std::lock_guard lock(state->mutex);
    response.set_content(state->text, "text/plain; version=0.0.4; charset=utf-8");
  });
  impl->server.Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("meshsim: Prometheus metrics at /metrics\n", "text/plain; charset=utf-8");
  });
  // SO_REUSEADDR only: cpp-httplib's default adds SO_REUSEPORT, which would let a second
  // run bind the same port and take half of the scrapes.
  impl->server.set_socket_options([](socket_t socket) {
    const int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  if (port == 0) {
    impl->port = impl->server.bind_to_any_port(impl->host);
  } else if (impl->server.bind_to_port(impl->host, port)) {
    impl->port = port;
  }
  if (impl->port <= 0) {
    return Error{"--metrics-port " + listen + ": cannot listen on " + impl->host + ":" + port_text +
                 " (in use, or not an address of this machine)"};
  }
  impl->thread = std::thread([state] {
    state->server.listen_after_bind();
    state->listening_ended = true;
  });
  // Until it listens: a stop() before that would be lost, and the thread never end.
  while (!impl->server.is_running() && !impl->listening_ended) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(impl)));
}

int MetricsServer::port() const { return impl_->port; }

std::string MetricsServer::url() const {
  return "http://" + impl_->host + ":" + std::to_string(impl_->port) + "/metrics";
}

void MetricsServer::publish(std::string text) {
  const std::lock_guard lock(impl_->mutex);
  impl_->text = std::move(text);
}

void append_metric(std::string& text, const std::string& name, const char* type, const std::string& help,
                   double value, const std::string& labels) {
  text += "# HELP " + name + ' ' + help + "\n# TYPE " + name + ' ' + type + '\n' + name;
  if (!labels.empty()) text += '{' + labels + '}';
  char number[32];
  if (std::isnan(value)) {
    std::snprintf(number, sizeof number, "NaN");
  } else {
    std::snprintf(number, sizeof number, "%.10g", value);
  }
  text += ' ';
  text += number;
  text += '\n';
}

}  // namespace meshsim::cli

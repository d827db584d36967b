#include "tools/cli/metrics_server.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace meshsim::cli {
namespace {

using Clock = std::chrono::steady_clock;

// A scrape is one small request on a local network: a client that has not sent its whole
// request, or not taken the whole answer, within this is dropped.
constexpr auto kClientTimeout = std::chrono::seconds(2);
// Connections held at once; a new one beyond them closes the oldest (an idle client must
// not keep a scrape waiting).
constexpr std::size_t kMaxConnections = 64;
constexpr std::size_t kMaxRequestBytes = 8192;

struct Connection {
  int fd = -1;
  Clock::time_point deadline;
  std::string in;   // the request so far
  std::string out;  // the answer, once the request is whole
  std::size_t sent = 0;
};

std::string http_response(int status, const char* reason, const std::string& content_type, const std::string& body,
                          bool head) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Type: " + content_type +
                    "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  if (!head) out += body;
  return out;
}

// "PORT", "HOST:PORT" or "[IPV6]:PORT" -> host and port text; false when none of these.
bool split_listen(const std::string& listen, std::string& host, std::string& port) {
  if (listen.starts_with("[")) {
    const auto close = listen.find("]:");
    if (close == std::string::npos) return false;
    host = listen.substr(1, close - 1);
    port = listen.substr(close + 2);
    return !host.empty() && host.find(':') != std::string::npos;
  }
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) {
    host = "127.0.0.1";
    port = listen;
    return true;
  }
  host = listen.substr(0, colon);
  port = listen.substr(colon + 1);
  return !host.empty() && host.find(':') == std::string::npos;  // an IPv6 address needs brackets
}

}  // namespace

// One thread polls the listening socket and every connection (non-blocking), so an idle or
// slow client holds a slot, never a thread: scrapes are answered whatever the others do.
struct MetricsServer::Impl {
  int listener = -1;
  int wake[2] = {-1, -1};  // a byte on wake[1] stops the thread
  std::thread thread;
  std::string host;
  int port = 0;
  std::mutex mutex;
  std::string text;  // what a scrape returns

  ~Impl() {
    for (const int fd : {listener, wake[0], wake[1]}) {
      if (fd >= 0) ::close(fd);
    }
  }

  std::string answer(const std::string& request) {
    const auto line_end = request.find("\r\n");
    const std::string line = request.substr(0, line_end);
    const auto space = line.find(' ');
    const auto second = line.find(' ', space + 1);
    if (space == std::string::npos || second == std::string::npos) {
      return http_response(400, "Bad Request", "text/plain; charset=utf-8", "bad request\n", false);
    }
    const std::string method = line.substr(0, space);
    std::string path = line.substr(space + 1, second - space - 1);
    path = path.substr(0, path.find('?'));
    const bool head = method == "HEAD";
    if (method != "GET" && !head) {
      return http_response(405, "Method Not Allowed", "text/plain; charset=utf-8", "GET /metrics\n", false);
    }
    if (path == "/metrics") {
      const std::lock_guard lock(mutex);
      return http_response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", text, head);
    }
    if (path == "/") {
      return http_response(200, "OK", "text/plain; charset=utf-8", "meshsim: Prometheus metrics at /metrics\n", head);
    }
    return http_response(404, "Not Found", "text/plain; charset=utf-8", "not found\n", head);
  }

  // Reads what arrived; true while the connection stays open.
  bool read_from(Connection& c) {
    char buffer[4096];
    for (;;) {
      const ssize_t got = ::recv(c.fd, buffer, sizeof buffer, 0);
      if (got == 0) return false;  // the client closed before its request was whole
      if (got < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      c.in.append(buffer, static_cast<std::size_t>(got));
      if (c.in.find("\r\n\r\n") != std::string::npos) {
        c.out = answer(c.in);
        c.deadline = Clock::now() + kClientTimeout;
        return true;
      }
      if (c.in.size() > kMaxRequestBytes) {
        c.out = http_response(431, "Request Header Fields Too Large", "text/plain; charset=utf-8", "too large\n", false);
        return true;
      }
    }
  }

  // Sends what is left of the answer; true while there is more to send.
  bool write_to(Connection& c) {
    while (c.sent < c.out.size()) {
      const ssize_t put = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (put < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      c.sent += static_cast<std::size_t>(put);
    }
    return false;
  }

  void serve() {
    std::vector<Connection> connections;
    std::vector<pollfd> polled;
    for (;;) {
      const auto now = Clock::now();
      // Past their time: dropped.
      std::erase_if(connections, [&](const Connection& c) {
        if (c.deadline > now) return false;
        ::close(c.fd);
        return true;
      });
      polled.clear();
      polled.push_back({wake[0], POLLIN, 0});
      polled.push_back({listener, POLLIN, 0});
      auto next = now + kClientTimeout;
      for (const Connection& c : connections) {
        polled.push_back({c.fd, static_cast<short>(c.out.empty() ? POLLIN : POLLOUT), 0});
        next = std::min(next, c.deadline);
      }
      const auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1;
      if (::poll(polled.data(), polled.size(), static_cast<int>(wait_ms)) < 0 && errno != EINTR) return;
      if (polled[0].revents != 0) break;
      // Connections first (their answers are ready or coming), then new ones.
      for (std::size_t i = 2; i < polled.size(); ++i) {
        Connection& c = connections[i - 2];
        if (polled[i].revents == 0) continue;
        bool open = c.out.empty() ? read_from(c) : true;
        if (open && !c.out.empty()) open = write_to(c);
        if ((polled[i].revents & (POLLERR | POLLHUP)) != 0 && c.out.empty()) open = false;
        if (!open) {
          if (!c.out.empty()) ::shutdown(c.fd, SHUT_WR);  // the answer goes out whole before the close
          ::close(c.fd);
          c.fd = -1;
        }
      }
      std::erase_if(connections, [](const Connection& c) { return c.fd < 0; });
      if ((polled[1].revents & POLLIN) != 0) accept_new(connections);
    }
    for (const Connection& c : connections) ::close(c.fd);
  }

  void accept_new(std::vector<Connection>& connections) {
    for (;;) {
      const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      if (connections.size() >= kMaxConnections) {  // the oldest makes room
        const auto oldest = std::min_element(connections.begin(), connections.end(), [](const auto& a, const auto& b) {
          return a.deadline < b.deadline;
        });
        ::close(oldest->fd);
        connections.erase(oldest);
      }
      connections.push_back({fd, Clock::now() + kClientTimeout, {}, {}, 0});
    }
  }
};

MetricsServer::MetricsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetricsServer::~MetricsServer() {
  const char stop = 1;
  if (::write(impl_->wake[1], &stop, 1) < 0) {
    // The pipe is ours and empty: a write cannot fail; nothing else to do if it did.
  }
  if (impl_->thread.joinable()) impl_->thread.join();
}

Expected<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& listen) {
  auto impl = std::make_unique<Impl>();
  std::string port_text;
  int port = -1;
  const bool split = split_listen(listen, impl->host, port_text);
  if (split && !port_text.empty() && port_text.find_first_not_of("0123456789") == std::string::npos &&
      port_text.size() <= 5) {
    port = std::stoi(port_text);
  }
  if (!split || port < 0 || port > 65535) {
    return Error{"--metrics-port " + listen +
                 ": expected PORT or HOST:PORT with a port 0-65535 (0: any free one; an IPv6 address in "
                 "brackets: [::1]:PORT)"};
  }
  const std::string where = impl->host.find(':') != std::string::npos ? "[" + impl->host + "]" : impl->host;
  const Error cannot{"--metrics-port " + listen + ": cannot listen on " + where + ":" + port_text +
                     " (in use, or not an address of this machine)"};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(impl->host.c_str(), port_text.c_str(), &hints, &found) != 0) return cannot;
  for (const addrinfo* a = found; a != nullptr && impl->listener < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    // SO_REUSEADDR only (not SO_REUSEPORT, which would let a second run bind the same port
    // and take half of the scrapes).
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
      impl->listener = fd;
    } else {
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (impl->listener < 0) return cannot;
  sockaddr_storage bound{};
  socklen_t size = sizeof bound;
  ::getsockname(impl->listener, reinterpret_cast<sockaddr*>(&bound), &size);
  char service[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&bound), size, nullptr, 0, service, sizeof service, NI_NUMERICSERV) != 0) {
    return cannot;
  }
  impl->port = std::atoi(service);
  if (::pipe2(impl->wake, O_CLOEXEC) != 0) return Error{"--metrics-port " + listen + ": cannot start the server"};
  Impl* state = impl.get();
  impl->thread = std::thread([state] { state->serve(); });
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(impl)));
}

int MetricsServer::port() const { return impl_->port; }

std::string MetricsServer::url() const {
  const std::string host = impl_->host.find(':') != std::string::npos ? "[" + impl_->host + "]" : impl_->host;
  return "http://" + host + ":" + std::to_string(impl_->port) + "/metrics";
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

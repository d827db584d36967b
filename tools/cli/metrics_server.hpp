#pragma once

#include <memory>
#include <string>

#include "sim/engine/expected.hpp"

namespace meshsim::cli {

// An HTTP endpoint for Prometheus (and so Grafana) during a long run: GET /metrics returns
// the text last published, in the Prometheus text exposition format. The run publishes a
// fresh text when it has something new (at most a few times a second), from its own
// thread; the server answers on its own thread (one poll() loop over every connection, so
// an idle or slow client delays no scrape), so a scrape never touches the simulation's
// state.
class MetricsServer {
 public:
  // `listen`: "PORT" (on 127.0.0.1), "HOST:PORT" ("0.0.0.0:9464" for every interface) or
  // "[IPV6]:PORT" ("[::1]:9464"); port 0 takes a free one (port() says which). Errors name
  // the option and the address.
  static Expected<std::unique_ptr<MetricsServer>> start(const std::string& listen);
  ~MetricsServer();  // stops serving and joins the thread

  int port() const;
  std::string url() const;  // http://HOST:PORT/metrics
  void publish(std::string text);

 private:
  struct Impl;
  explicit MetricsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Appends one sample in the exposition format, with its HELP and TYPE lines
// ("gauge" or "counter"); `labels` is empty or `name="value",...`.
void append_metric(std::string& text, const std::string& name, const char* type, const std::string& help,
                   double value, const std::string& labels = "");

}  // namespace meshsim::cli

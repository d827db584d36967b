// --metrics-port: the HTTP endpoint serves the text last published in Prometheus' format;
// a replay publishes its progress, the last interval's gauges and the scheduling core's
// schedulemesh_* metrics as it runs, then the finished run's metrics.prom; bad addresses
// are refused naming the option.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "configs/scenario_config.hpp"
#include "tests/local_http.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/live_metrics.hpp"
#include "tools/cli/metrics_server.hpp"
#include "tools/runs/replay_to_end.hpp"
#include "tools/runs/scheduler_prometheus.hpp"
#include "sim/shared/shared_cluster.hpp"
#include "tests/test_paths.hpp"

namespace meshsim::cli {
namespace {

using meshsim::testing::scrape;

TEST(MetricsServerTest, ServesWhatWasLastPublished) {
  auto server = MetricsServer::start("0");  // any free port on 127.0.0.1
  ASSERT_TRUE(server) << server.error().message;
  const int port = (*server)->port();
  EXPECT_GT(port, 0);
  EXPECT_EQ((*server)->url(), "http://127.0.0.1:" + std::to_string(port) + "/metrics");
  auto empty = scrape(port);
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->status, 200);
  EXPECT_EQ(empty->body, "");
  std::string text;
  append_metric(text, "meshsim_example", "gauge", "An example", 0.25, "pool=\"a\"");
  EXPECT_EQ(text, "# HELP meshsim_example An example\n# TYPE meshsim_example gauge\nmeshsim_example{pool=\"a\"} 0.25\n");
  (*server)->publish(text);
  auto got = scrape(port);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->body, text);
  EXPECT_EQ(got->content_type, "text/plain; version=0.0.4; charset=utf-8");
  (*server)->publish("next 1\n");
  EXPECT_EQ(scrape(port)->body, "next 1\n");
  EXPECT_EQ(scrape(port, "/nothing")->status, 404);
  server->reset();
  EXPECT_FALSE(scrape(port));  // stopped with its owner
}

// A client that sends a byte now and then and never ends its request (each byte within the
// read timeout) is cut off when the server stops: it never holds the process after its run.
TEST(MetricsServerTest, AClientThatNeverEndsItsRequestIsCutOffWhenTheServerStops) {
  auto server = MetricsServer::start("0");
  ASSERT_TRUE(server) << server.error().message;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>((*server)->port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  std::atomic<bool> cut_off{false};
  std::thread dripper([&] {
    const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(200, 'a');
    for (const char byte : request) {  // a byte every 100 ms: 20 s in all
      if (::send(fd, &byte, 1, MSG_NOSIGNAL) != 1) {
        cut_off = true;
        return;
      }
      pollfd closed{fd, POLLIN, 0};
      if (::poll(&closed, 1, 100) == 1) {  // the server hung up
        cut_off = true;
        return;
      }
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  server->reset();  // the run ended
  dripper.join();
  ::close(fd);
  EXPECT_TRUE(cut_off) << "the client outlasted the server's stop";
}

int connect_to(int family, const std::string& host, int port) {
  const int fd = ::socket(family, SOCK_STREAM, 0);
  sockaddr_storage address{};
  socklen_t size = 0;
  if (family == AF_INET6) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr);
    size = sizeof *v6;
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, host.c_str(), &v4->sin_addr);
    size = sizeof *v4;
  }
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), size) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Clients that connect and say nothing, or half a request, hold no thread: with more of
// them open than the server keeps (64), every scrape is still answered before a client
// that waits one second gives up (8 idle clients once made each scrape take 1.5 s, 16
// starved it).
TEST(MetricsServerTest, IdleClientsNeverKeepAScrapeWaiting) {
  auto server = MetricsServer::start("0");
  ASSERT_TRUE(server) << server.error().message;
  (*server)->publish("up 1\n");
  const int port = (*server)->port();
  std::vector<int> idle;
  for (int i = 0; i < 100; ++i) {
    const int fd = connect_to(AF_INET, "127.0.0.1", port);
    ASSERT_GE(fd, 0);
    if (i % 2 == 1) (void)::send(fd, "GET /metr", 9, MSG_NOSIGNAL);  // half a request
    idle.push_back(fd);
  }
  for (int i = 0; i < 20; ++i) {
    httplib::Client client("127.0.0.1", port);
    client.set_connection_timeout(1);
    client.set_read_timeout(1);
    const auto response = client.Get("/metrics");
    ASSERT_TRUE(response) << "scrape " << i;
    EXPECT_EQ(response->body, "up 1\n");
  }
  for (const int fd : idle) ::close(fd);
}

// An IPv6 address is written in brackets, as in a URL: [::1]:PORT listens there and the
// URL printed is one a browser takes; without brackets the host and the port are
// ambiguous and refused.
TEST(MetricsServerTest, AnIpv6AddressIsWrittenInBrackets) {
  const int probe = ::socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 loopback{};
  loopback.sin6_family = AF_INET6;
  loopback.sin6_addr = in6addr_loopback;
  const bool have_ipv6 = probe >= 0 && ::bind(probe, reinterpret_cast<sockaddr*>(&loopback), sizeof loopback) == 0;
  if (probe >= 0) ::close(probe);
  auto bare = MetricsServer::start("::1:0");
  ASSERT_FALSE(bare);
  EXPECT_NE(bare.error().message.find("an IPv6 address in brackets: [::1]:PORT"), std::string::npos)
      << bare.error().message;
  if (!have_ipv6) GTEST_SKIP() << "no IPv6 loopback on this machine";
  auto server = MetricsServer::start("[::1]:0");
  ASSERT_TRUE(server) << server.error().message;
  const int port = (*server)->port();
  EXPECT_EQ((*server)->url(), "http://[::1]:" + std::to_string(port) + "/metrics");
  (*server)->publish("v6 1\n");
  const int fd = connect_to(AF_INET6, "::1", port);
  ASSERT_GE(fd, 0);
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: [::1]\r\n\r\n";
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  std::string answer;
  char buffer[512];
  for (ssize_t got; (got = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) answer.append(buffer, static_cast<std::size_t>(got));
  ::close(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer;
  EXPECT_EQ(answer.substr(answer.size() - 5), "v6 1\n");
}

TEST(MetricsServerTest, BadAddressesAreRefusedNamingTheOption) {
  for (const std::string bad : {"abc", "70000", "-1", "127.0.0.1:", ":9000x", "[::1]", "[]:80", "[127.0.0.1]:80"}) {
    auto server = MetricsServer::start(bad);
    ASSERT_FALSE(server) << bad;
    EXPECT_NE(server.error().message.find("--metrics-port " + bad + ": expected PORT or HOST:PORT"), std::string::npos)
        << server.error().message;
  }
  auto first = MetricsServer::start("0");
  ASSERT_TRUE(first);
  const std::string taken = std::to_string((*first)->port());
  auto second = MetricsServer::start("127.0.0.1:" + taken);
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("cannot listen on 127.0.0.1:" + taken), std::string::npos)
      << second.error().message;
}

// Counts what reaches the command's own observer behind the live metrics.
struct CountingObserver final : replay::ReplayObserver {
  std::uint64_t requests = 0, intervals = 0;
  void on_request(const metrics::RequestRecord&) override { ++requests; }
  void on_interval(const metrics::TimeseriesRow&) override { ++intervals; }
};

// The value of an unlabelled sample or of `name{labels}` in a scrape.
double sample(const std::string& text, const std::string& series) {
  const auto at = text.find('\n' + series + ' ');
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

TEST(LiveReplayMetricsTest, AReplayPublishesProgressGaugesAndTheSchedulingCore) {
  const std::string path = std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/shared-cluster-synthetic.json";
  auto config = configs::load_scenario(path);
  ASSERT_TRUE(config) << config.error().message;
  config->replay.until = engine::SimTime::from_seconds(1800);
  auto catalog = configs::load_catalog(configs::default_catalog_folder());
  auto server = MetricsServer::start("0");
  ASSERT_TRUE(server);
  CountingObserver inner;
  LiveReplayMetrics live(**server, inner);
  auto finished = replay_to_end(*config, path, *catalog, live, {},
                                [&](const run::ScenarioRun& run) { live.watch(run); });
  ASSERT_TRUE(finished) << finished.error().message;

  // What the run's last progress call published (always, whatever the throttle).
  const std::string text = scrape((*server)->port())->body;
  EXPECT_EQ(sample(text, "meshsim_run_progress"), 1.0);
  EXPECT_EQ(sample(text, "meshsim_simulated_seconds"), 1800.0);
  const auto& counts = finished->summary["requests"];
  EXPECT_EQ(sample(text, "meshsim_requests_total{status=\"completed\"}"), counts["completed"].get<double>());
  EXPECT_EQ(sample(text, "meshsim_requests_total{status=\"dropped\"}"), counts["dropped"].get<double>());
  EXPECT_EQ(sample(text, "meshsim_requests_total{status=\"in_flight\"}"), counts["in_flight"].get<double>());
  EXPECT_EQ(static_cast<double>(inner.requests), counts["arrived"].get<double>());  // all passed on
  EXPECT_GT(inner.intervals, 0u);
  EXPECT_GE(sample(text, "meshsim_instances{state=\"active\"}"), 1.0);
  EXPECT_NE(text.find("\nmeshsim_batch_jobs{state=\"running\"} "), std::string::npos);
  EXPECT_NE(text.find("# TYPE schedulemesh_task_schedule_latency_ms histogram"), std::string::npos) << text;

  std::ostringstream finished_metrics;
  write_replay_metrics(finished_metrics, finished->summary, &finished->run->shared()->core());
  live.publish_final(finished_metrics.str());
  const std::string last = scrape((*server)->port())->body;
  EXPECT_EQ(last.substr(last.size() - finished_metrics.str().size()), finished_metrics.str());  // metrics.prom last
  EXPECT_EQ(sample(last, "meshsim_run_progress"), 1.0);
  // Quantiles are labelled by their fraction, as Prometheus expects.
  EXPECT_EQ(sample(last, "meshsim_latency_seconds{kind=\"ttft\",quantile=\"0.99\"}"),
            finished->summary["latency_s"]["ttft"]["p99"].get<double>());
  EXPECT_EQ(last.find("quantile=\"p"), std::string::npos);
  // Prefix caching (the scenario serves with vLLM's): each instance's tokens, as summary.json has them.
  EXPECT_GE(sample(text, "meshsim_prefix_hit_rate"), 0.0);
  const auto& instances = finished->summary["prefix_cache"]["instances"];
  ASSERT_FALSE(instances.empty());
  for (const auto& e : instances) {
    const std::string series = "meshsim_prefix_cache_tokens_total{instance=\"" + e["instance"].dump() + "\",kind=\"";
    EXPECT_EQ(sample(last, series + "queried\"}"), e["queried_tokens"].get<double>());
    EXPECT_EQ(sample(last, series + "hit\"}"), e["hit_tokens"].get<double>());
  }
}

TEST(LiveReplayMetricsTest, TheReplayCommandRefusesABadPort) {
  ReplayCommandOptions options;
  options.metrics_listen = "port";
  options.out_dir = testing::fresh_dir("metrics_bad_port").string();
  options.quiet = true;
  std::ostringstream out, err;
  EXPECT_EQ(run_replay_command(options, out, err), kExitBadInput);
  EXPECT_NE(err.str().find("--metrics-port port: expected PORT or HOST:PORT"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace meshsim::cli

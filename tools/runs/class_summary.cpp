#include "tools/runs/class_summary.hpp"

#include <cinttypes>
#include <cstdio>

#include "sim/engine/number_text.hpp"
#include "tools/runs/figure_text.hpp"

namespace meshsim::cli {

nlohmann::ordered_json classes_summary(const nlohmann::json& resolved_config, const metrics::RunMetrics& metrics,
                                       double served_s) {
  const auto& figures = metrics.classes();
  if (figures.empty()) return nullptr;
  const nlohmann::json& configured = resolved_config.at("classes");
  const auto per_second = [served_s](double amount) { return served_s > 0 ? amount / served_s : 0.0; };
  const auto latency = [](const metrics::QuantileSketch& sketch) {
    const auto figure = [&](double q) { return sketch.count() > 0 ? nlohmann::json(sketch.quantile(q)) : nullptr; };
    return nlohmann::ordered_json{{"count", sketch.count()}, {"p50", figure(0.5)}, {"p99", figure(0.99)}};
  };
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (std::size_t c = 0; c < figures.size(); ++c) {
    const metrics::ClassFigures& f = figures[c];
    nlohmann::ordered_json entry;
    entry["name"] = configured.at(c).at("name");
    entry["priority"] = configured.at(c).at("priority");
    entry["requests"] = {{"arrived", f.counts.arrived},
                         {"completed", f.counts.completed},
                         {"dropped", f.counts.dropped},
                         {"in_flight", f.counts.in_flight}};
    entry["slo"] = {{"ttft_target_s", f.slo.ttft.seconds()},
                    {"ttft_target_s_per_prompt_token", f.slo.ttft_per_prompt_token_s},
                    {"tbt_target_s", f.slo.tbt.seconds()},
                    {"ttft_attainment", f.ttft_attainment()},
                    {"tbt_attainment", f.tbt_attainment()},
                    {"attainment", f.attainment()}};
    entry["goodput_per_s"] = per_second(static_cast<double>(f.slo_met));
    entry["output_tokens_per_s"] = per_second(static_cast<double>(f.output_tokens));
    entry["latency_s"] = {{"ttft", latency(f.ttft)}, {"tbt", latency(f.tbt)}};
    out.push_back(std::move(entry));
  }
  return out;
}

std::string format_classes_table(const nlohmann::ordered_json& summary) {
  if (!summary.contains("classes")) return "";
  std::string out;
  char line[512];
  for (const auto& c : summary["classes"]) {
    const auto& r = c["requests"];
    const auto& ttft = c["latency_s"]["ttft"];
    const std::string p99 = ttft["p99"].is_null() ? "-" : fixed_text(ttft["p99"].get<double>(), 3);
    std::snprintf(line, sizeof line,
                  "class       %s (priority %d): %" PRIu64 " arrived, %" PRIu64 " completed, %" PRIu64
                  " dropped, %" PRIu64 " in flight; SLO %s met (TTFT <= %.3f s, TBT <= %.3f s); goodput %.2f "
                  "req/s; TTFT p99 %s s\n",
                  c["name"].get<std::string>().c_str(), c["priority"].get<int>(), r["arrived"].get<std::uint64_t>(),
                  r["completed"].get<std::uint64_t>(), r["dropped"].get<std::uint64_t>(),
                  r["in_flight"].get<std::uint64_t>(), percent_text(c["slo"]["attainment"].get<double>(), 1).c_str(),
                  c["slo"]["ttft_target_s"].get<double>(), c["slo"]["tbt_target_s"].get<double>(),
                  c["goodput_per_s"].get<double>(), p99.c_str());
    out += line;
  }
  return out;
}

}  // namespace meshsim::cli

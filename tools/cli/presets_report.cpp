#include "tools/cli/presets_report.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <functional>

#include "sim/engine/number_text.hpp"

namespace meshsim::cli {
namespace {

// The policies in first-seen order, each with its runs.
std::vector<std::vector<const PresetOutcome*>> by_policy(const std::vector<PresetOutcome>& outcomes) {
  std::vector<std::vector<const PresetOutcome*>> groups;
  for (const auto& o : outcomes) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.front()->name == o.name; });
    if (it == groups.end()) {
      groups.push_back({&o});
    } else {
      it->push_back(&o);
    }
  }
  return groups;
}

using Figure = std::function<double(const PresetOutcome&)>;

double mean(const std::vector<const PresetOutcome*>& runs, const Figure& figure) {
  double sum = 0;
  for (const auto* o : runs) sum += figure(*o);
  return sum / static_cast<double>(runs.size());
}

std::pair<double, double> range(const std::vector<const PresetOutcome*>& runs, const Figure& figure) {
  double lo = figure(*runs.front()), hi = lo;
  for (const auto* o : runs) {
    lo = std::min(lo, figure(*o));
    hi = std::max(hi, figure(*o));
  }
  return {lo, hi};
}

// A count: whole with one seed, to a tenth as a mean of several.
std::string count_text(double value, std::size_t seeds) {
  char text[32];
  std::snprintf(text, sizeof text, seeds > 1 ? "%.1f" : "%.0f", value);
  return text;
}

}  // namespace

void write_presets_csv(std::ostream& out, const std::vector<PresetOutcome>& outcomes) {
  out << "policy,seed,slo_attainment,ttft_p99_s,scale_ups,scale_ups_blocked,jobs_completed,jobs_queued,"
         "preemptions,same_pool_preemptions,cross_pool_preemptions,label_preemptions,batch_gpu_hours,"
         "useful_gpu_hours,lost_gpu_hours,lost_share,schedule_p50_us,schedule_p99_us\n";
  char line[512];
  for (const auto& o : outcomes) {
    std::snprintf(line, sizeof line,
                  "%s,%" PRIu64 ",%.6f,%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                  ",%" PRIu64 ",%" PRIu64 ",%.6f,%.6f,%.6f,%.6f,%.3f,%.3f\n",
                  o.name.c_str(), o.seed, o.slo_attainment, o.ttft_p99_s, o.scale_ups, o.blocked, o.jobs_completed,
                  o.jobs_queued, o.preemptions, o.same_pool, o.cross_pool, o.label, o.held_gpu_h, o.useful_gpu_h,
                  o.lost_gpu_h, o.lost_share, o.schedule_p50_us, o.schedule_p99_us);
    out << line;
  }
}

void write_preemptions_csv(std::ostream& out, const std::vector<PresetOutcome>& outcomes) {
  out << "policy,seed,preemptor,victim,preemptions\n";
  for (const auto& o : outcomes) {
    for (const auto& [pair, n] : o.preempted_by) {
      out << o.name << ',' << o.seed << ',' << pair.first << ',' << pair.second << ',' << n << '\n';
    }
  }
}

void print_presets_table(std::ostream& out, const std::vector<PresetOutcome>& outcomes, std::size_t seeds) {
  const auto groups = by_policy(outcomes);
  std::size_t width = 12;
  for (const auto& g : groups) width = std::max(width, g.front()->name.size());
  const int w = static_cast<int>(width);
  const auto u = [](std::uint64_t PresetOutcome::*field) {
    return Figure([field](const PresetOutcome& o) { return static_cast<double>(o.*field); });
  };
  const auto d = [](double PresetOutcome::*field) { return Figure([field](const PresetOutcome& o) { return o.*field; }); };
  char line[512];
  if (seeds > 1) out << "means over " << seeds << " seeds\n";
  out << std::string(width, ' ').replace(0, 6, "policy")
      << "  SLO met  P99 TTFT  scale-ups/blocked  jobs done/queued  preempted (same/cross/label)  "
         "useful GPU-h  lost GPU-h (share)  sched p50/p99 us\n";
  for (const auto& g : groups) {
    const std::string preempted = count_text(mean(g, u(&PresetOutcome::preemptions)), seeds) + " (" +
                                  count_text(mean(g, u(&PresetOutcome::same_pool)), seeds) + "/" +
                                  count_text(mean(g, u(&PresetOutcome::cross_pool)), seeds) + "/" +
                                  count_text(mean(g, u(&PresetOutcome::label)), seeds) + ")";
    std::snprintf(line, sizeof line, "%-*s %8s %8.3fs %10s/%-6s %9s/%-6s  %-27s %12.2f  %9.3f (%5s)  %6.1f/%.1f\n", w,
                  g.front()->name.c_str(), percent_text(mean(g, d(&PresetOutcome::slo_attainment))).c_str(),
                  mean(g, d(&PresetOutcome::ttft_p99_s)),
                  count_text(mean(g, u(&PresetOutcome::scale_ups)), seeds).c_str(),
                  count_text(mean(g, u(&PresetOutcome::blocked)), seeds).c_str(),
                  count_text(mean(g, u(&PresetOutcome::jobs_completed)), seeds).c_str(),
                  count_text(mean(g, u(&PresetOutcome::jobs_queued)), seeds).c_str(), preempted.c_str(),
                  mean(g, d(&PresetOutcome::useful_gpu_h)), mean(g, d(&PresetOutcome::lost_gpu_h)),
                  percent_text(mean(g, d(&PresetOutcome::lost_share)), 1).c_str(),
                  mean(g, d(&PresetOutcome::schedule_p50_us)), mean(g, d(&PresetOutcome::schedule_p99_us)));
    out << line;
  }
  if (seeds > 1) {
    out << "spread over the seeds (lowest..highest)\n"
        << std::string(width, ' ').replace(0, 6, "policy")
        << "  SLO met          P99 TTFT (s)   blocked      jobs queued   lost GPU-h\n";
    for (const auto& g : groups) {
      const auto slo = range(g, d(&PresetOutcome::slo_attainment));
      const auto ttft = range(g, d(&PresetOutcome::ttft_p99_s));
      const auto blocked = range(g, u(&PresetOutcome::blocked));
      const auto queued = range(g, u(&PresetOutcome::jobs_queued));
      const auto lost = range(g, d(&PresetOutcome::lost_gpu_h));
      std::snprintf(line, sizeof line, "%-*s  %-16s %-14s %-12s %-13s %.3f..%.3f\n", w, g.front()->name.c_str(),
                    (percent_text(slo.first, 1) + ".." + percent_text(slo.second, 1)).c_str(),
                    (number_text(std::round(ttft.first * 1000) / 1000) + ".." +
                     number_text(std::round(ttft.second * 1000) / 1000))
                        .c_str(),
                    (count_text(blocked.first, 1) + ".." + count_text(blocked.second, 1)).c_str(),
                    (count_text(queued.first, 1) + ".." + count_text(queued.second, 1)).c_str(), lost.first,
                    lost.second);
      out << line;
    }
  }
  // Who preempted whom, by class: the preemptor's, then its victims'.
  bool any = false;
  for (const auto& o : outcomes) any = any || !o.preempted_by.empty();
  if (!any) return;
  out << "who preempted whom (preemptor: victims" << (seeds > 1 ? ", mean per run" : "") << ")\n";
  for (const auto& g : groups) {
    std::map<std::string, std::map<std::string, double>> sum;
    for (const auto* o : g) {
      for (const auto& [pair, n] : o->preempted_by) sum[pair.first][pair.second] += static_cast<double>(n);
    }
    std::string text;
    for (const auto& [preemptor, victims] : sum) {
      text += (text.empty() ? "" : "; ") + preemptor + ":";
      bool first = true;
      for (const auto& [victim, n] : victims) {
        text += std::string(first ? " " : ", ") + victim + " " +
                count_text(n / static_cast<double>(g.size()), seeds);
        first = false;
      }
    }
    std::snprintf(line, sizeof line, "%-*s  %s\n", w, g.front()->name.c_str(), text.empty() ? "none" : text.c_str());
    out << line;
  }
}

}  // namespace meshsim::cli

#include "tools/cli/presets_report.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <functional>

#include "sim/engine/number_text.hpp"
#include "tools/runs/figure_text.hpp"

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

// A run's figure; none where the run measured nothing of it.
using Figure = std::function<std::optional<double>(const PresetOutcome&)>;

// The mean over the runs that measured the figure; none when no run did.
std::optional<double> mean(const std::vector<const PresetOutcome*>& runs, const Figure& figure) {
  double sum = 0;
  std::size_t n = 0;
  for (const auto* o : runs) {
    if (const auto value = figure(*o)) {
      sum += *value;
      ++n;
    }
  }
  return n == 0 ? std::nullopt : std::optional(sum / static_cast<double>(n));
}

std::optional<std::pair<double, double>> range(const std::vector<const PresetOutcome*>& runs, const Figure& figure) {
  std::optional<std::pair<double, double>> out;
  for (const auto* o : runs) {
    const auto value = figure(*o);
    if (!value) continue;
    out = out ? std::pair(std::min(out->first, *value), std::max(out->second, *value)) : std::pair(*value, *value);
  }
  return out;
}


// A count: whole with one seed, to a tenth as a mean of several.
std::string count_text(double value, std::size_t seeds) {
  char text[32];
  std::snprintf(text, sizeof text, seeds > 1 ? "%.1f" : "%.0f", value);
  return text;
}

// Each policy against the first, seed by seed (the same workload and jobs): in how many
// seeds its SLO attainment and its lost GPU-hours were better, worse or equal, and the
// mean difference. A difference between means can hide one seed that decides it.
void print_paired_verdicts(std::ostream& out, const std::vector<std::vector<const PresetOutcome*>>& groups) {
  if (groups.size() < 2) return;
  const auto& base = groups.front();
  out << "against " << base.front()->name << ", seed by seed\n";
  const auto same_seed = [&base](const PresetOutcome& o) -> const PresetOutcome* {
    for (const auto* b : base) {
      if (b->seed == o.seed) return b;
    }
    return nullptr;
  };
  for (std::size_t i = 1; i < groups.size(); ++i) {
    std::size_t slo_up = 0, slo_down = 0, slo_pairs = 0, lost_down = 0, lost_up = 0, pairs = 0;
    double slo_diff = 0, lost_diff = 0;
    for (const auto* o : groups[i]) {
      const PresetOutcome* b = same_seed(*o);
      if (b == nullptr) continue;
      ++pairs;
      if (o->slo_attainment && b->slo_attainment) {
        const double diff = *o->slo_attainment - *b->slo_attainment;
        slo_diff += diff;
        ++slo_pairs;
        slo_up += diff > 0;
        slo_down += diff < 0;
      }
      const double lost = o->lost_gpu_h - b->lost_gpu_h;
      lost_diff += lost;
      lost_down += lost < 0;
      lost_up += lost > 0;
    }
    if (pairs == 0) continue;
    char line[512];
    std::string slo_part = "SLO met: no seed judged requests in both";
    if (slo_pairs > 0) {
      std::snprintf(line, sizeof line, "SLO met higher in %zu, lower in %zu of %zu seeds (mean %+.2f pp)", slo_up,
                    slo_down, slo_pairs, 100 * slo_diff / static_cast<double>(slo_pairs));
      slo_part = line;
    }
    std::snprintf(line, sizeof line, "  %s: %s; lost GPU-h lower in %zu, higher in %zu of %zu seeds (mean %+.3f)\n",
                  groups[i].front()->name.c_str(), slo_part.c_str(), lost_down, lost_up, pairs,
                  lost_diff / static_cast<double>(pairs));
    out << line;
  }
}

}  // namespace

void write_presets_csv(std::ostream& out, const std::vector<PresetOutcome>& outcomes) {
  out << "policy,seed,slo_attainment,ttft_p99_s,scale_ups,scale_ups_blocked,jobs_completed,jobs_queued,"
         "preemptions,same_pool_preemptions,cross_pool_preemptions,label_preemptions,batch_gpu_hours,"
         "useful_gpu_hours,lost_gpu_hours,lost_share,schedule_p50_us,schedule_p99_us\n";
  char line[512];
  // An empty cell where the run measured nothing.
  for (const auto& o : outcomes) {
    std::snprintf(line, sizeof line,
                  "%s,%" PRIu64 ",%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                  ",%" PRIu64 ",%" PRIu64 ",%.6f,%.6f,%.6f,%.6f,%.3f,%.3f\n",
                  o.name.c_str(), o.seed, fixed_or(o.slo_attainment, 6, "").c_str(), fixed_or(o.ttft_p99_s, 6, "").c_str(), o.scale_ups,
                  o.blocked, o.jobs_completed,
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

void write_classes_csv(std::ostream& out, const std::vector<PresetOutcome>& outcomes) {
  out << "policy,seed,class,slo_attainment\n";
  for (const auto& o : outcomes) {
    for (const auto& [name, attainment] : o.classes) {
      out << o.name << ',' << o.seed << ',' << name << ',' << fixed_or(attainment, 6, "") << '\n';
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
  const Figure slo = [](const PresetOutcome& o) { return o.slo_attainment; };
  const Figure ttft = [](const PresetOutcome& o) { return o.ttft_p99_s; };
  const auto ttft_text = [](const std::optional<double>& s) { return s ? fixed_text(*s, 3) + "s" : "-"; };
  char line[512];
  if (seeds > 1) out << "means over " << seeds << " seeds\n";
  out << std::string(width, ' ').replace(0, 6, "policy")
      << "  SLO met  P99 TTFT  scale-ups/blocked  jobs done/queued  preempted (same/cross/label)  "
         "useful GPU-h  lost GPU-h (share)  sched p50/p99 us\n";
  for (const auto& g : groups) {
    const auto m = [&g](const Figure& figure) { return *mean(g, figure); };  // a figure every run has
    const std::string preempted = count_text(m(u(&PresetOutcome::preemptions)), seeds) + " (" +
                                  count_text(m(u(&PresetOutcome::same_pool)), seeds) + "/" +
                                  count_text(m(u(&PresetOutcome::cross_pool)), seeds) + "/" +
                                  count_text(m(u(&PresetOutcome::label)), seeds) + ")";
    const auto met = mean(g, slo);
    std::snprintf(line, sizeof line, "%-*s %8s %9s %10s/%-6s %9s/%-6s  %-27s %12.2f  %9.3f (%5s)  %6.1f/%.1f\n", w,
                  g.front()->name.c_str(), met ? percent_text(*met).c_str() : "-", ttft_text(mean(g, ttft)).c_str(),
                  count_text(m(u(&PresetOutcome::scale_ups)), seeds).c_str(),
                  count_text(m(u(&PresetOutcome::blocked)), seeds).c_str(),
                  count_text(m(u(&PresetOutcome::jobs_completed)), seeds).c_str(),
                  count_text(m(u(&PresetOutcome::jobs_queued)), seeds).c_str(), preempted.c_str(),
                  m(d(&PresetOutcome::useful_gpu_h)), m(d(&PresetOutcome::lost_gpu_h)),
                  percent_text(m(d(&PresetOutcome::lost_share)), 1).c_str(), m(d(&PresetOutcome::schedule_p50_us)),
                  m(d(&PresetOutcome::schedule_p99_us)));
    out << line;
  }
  if (seeds > 1) {
    out << "spread over the seeds (lowest..highest)\n"
        << std::string(width, ' ').replace(0, 6, "policy")
        << "  SLO met          P99 TTFT (s)   blocked      jobs queued   lost GPU-h\n";
    for (const auto& g : groups) {
      const auto met = range(g, slo);
      const auto p99 = range(g, ttft);
      const auto blocked = *range(g, u(&PresetOutcome::blocked));
      const auto queued = *range(g, u(&PresetOutcome::jobs_queued));
      const auto lost = *range(g, d(&PresetOutcome::lost_gpu_h));
      std::snprintf(line, sizeof line, "%-*s  %-16s %-14s %-12s %-13s %.3f..%.3f\n", w, g.front()->name.c_str(),
                    (met ? percent_text(met->first, 1) + ".." + percent_text(met->second, 1) : "-").c_str(),
                    (p99 ? number_text(std::round(p99->first * 1000) / 1000) + ".." +
                               number_text(std::round(p99->second * 1000) / 1000)
                         : "-")
                        .c_str(),
                    (count_text(blocked.first, 1) + ".." + count_text(blocked.second, 1)).c_str(),
                    (count_text(queued.first, 1) + ".." + count_text(queued.second, 1)).c_str(), lost.first,
                    lost.second);
      out << line;
    }
    print_paired_verdicts(out, groups);
  }
  // Each class of service's SLO attainment, mean over the seeds that judged it.
  if (!outcomes.empty() && !outcomes.front().classes.empty()) {
    out << "SLO met by class of service" << (seeds > 1 ? " (mean over seeds)" : "") << "\n";
    for (const auto& g : groups) {
      std::string text;
      for (std::size_t c = 0; c < g.front()->classes.size(); ++c) {
        const Figure met = [c](const PresetOutcome& o) {
          return c < o.classes.size() ? o.classes[c].second : std::nullopt;
        };
        const auto m = mean(g, met);
        text += (text.empty() ? "" : ", ") + g.front()->classes[c].first + " " + (m ? percent_text(*m, 1) : "-");
      }
      std::snprintf(line, sizeof line, "%-*s  %s\n", w, g.front()->name.c_str(), text.c_str());
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

#include "tools/runs/evaluation_report.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <ostream>

#include "sim/engine/number_text.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;
using rl::EvalWindow;
using rl::Outcome;

std::string parameter_text(const Outcome& o) {
  if (std::isnan(o.parameter)) return "";
  if (o.policy == "target_tracking_kv") return number_text(100.0 * o.parameter) + "%";
  return number_text(o.parameter);
}

// A GPU-hour saving (1 - policy / other) as the console says it: "12.3% fewer", "4.0% more".
std::string saving_text(double saving) {
  return fixed_text(std::abs(saving) * 100, 1) + (saving >= 0 ? "% fewer" : "% more");
}

std::string optional_text(const std::optional<double>& value) {
  return value ? number_text(*value) : std::string();
}

// A play's row; its last cell the bound's GPU-hours at the play's SLO attainment (empty
// where the bound does not reach it).
std::string eval_row(const EvalWindow& w, double delay, const Outcome& o, const char* role, double slo_target,
                     const rl::Fronts& fronts) {
  const auto bound = rl::bound_at(fronts, o.slo_attainment);
  char line[704];
  std::snprintf(line, sizeof line,
                "%s,%s,%s,%s,%s,%s,%s,%s,%u,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.4f,%" PRIu64 ",%" PRIu64 ",%.3f,%.6f,%s,%s\n",
                w.label.c_str(), number_text(w.start_s).c_str(), number_text(w.length_s).c_str(),
                number_text(w.rate_scale).c_str(), number_text(delay).c_str(), o.policy.c_str(),
                std::isnan(o.parameter) ? "" : number_text(o.parameter).c_str(), role, o.start_instances,
                o.slo_attainment, o.ttft_p50, o.ttft_p99, o.tbt_p50, o.tbt_p99, o.gpu_hours, o.mean_instances,
                o.scale_ups, o.scale_downs, o.actions_per_hour, o.reward, number_text(slo_target).c_str(),
                bound ? number_text(*bound).c_str() : "");
  return line;
}

// Whether the bound lies at or below every play of the window that pays the scale-up
// delay (all but the instant oracle): each play it lies above is a defect of the bound.
void print_bound_check(std::ostream& out, const WindowPlays& plays) {
  std::vector<const Outcome*> checked = plays.policies;
  for (const Outcome& o : plays.tuned) checked.push_back(&o);
  for (const Outcome& o : plays.fronts.tracking) checked.push_back(&o);
  for (const Outcome& o : plays.fronts.statics) checked.push_back(&o);
  const std::vector<rl::BoundDefect> defects = rl::bound_defects(plays.fronts, checked);
  if (defects.empty()) {
    out << "  bound check: the bound lies at or below all " << checked.size()
        << " plays at their SLO (policies, tuned baselines, target tracking's grid, static sizes)\n";
    return;
  }
  out << "  BOUND DEFECT: the bound lies above " << defects.size() << " of " << checked.size() << " plays at their SLO:";
  for (const rl::BoundDefect& d : defects) {
    out << ' ' << display_name(*d.play) << " (" << percent_text(d.play->slo_attainment) << ", "
        << fixed_text(d.play->gpu_hours, 2) << " GPU-h; the bound " << fixed_text(d.bound_gpu_hours, 2) << ");";
  }
  out << '\n';
}

// The table's first column is as wide as its longest policy name (at least 34), so long
// names (a checkpoint's path) never push a row's figures out of their columns.
int name_width(const std::vector<const Outcome*>& rows) {
  std::size_t width = 34;
  for (const Outcome* o : rows) width = std::max(width, display_name(*o).size());
  return static_cast<int>(width);
}

void print_table_row(std::ostream& out, const Outcome& o, const char* note, int width) {
  char figures[256];
  std::snprintf(figures, sizeof figures, " %8s %9.3fs %9.3fs %9.2f %8.2f %9.1f %11.3f  %s\n",
                percent_text(o.slo_attainment).c_str(), o.ttft_p99, o.tbt_p99, o.gpu_hours, o.mean_instances,
                o.actions_per_hour, o.reward, note);
  std::string name = display_name(o);
  name.resize(static_cast<std::size_t>(width), ' ');
  out << "  " << name << figures;
}

// A front's or sweep's plays on one line: "parameter: SLO / GPU-h;" each.
void print_plays(std::ostream& out, const std::vector<Outcome>& plays) {
  for (const Outcome& o : plays) {
    out << ' ' << parameter_text(o) << ": " << percent_text(o.slo_attainment) << " / " << fixed_text(o.gpu_hours) << ';';
  }
  out << '\n';
}

// The verdict on one play, in words: first whether it costs more than the cheapest tuned
// baseline meeting the SLO target (as a multiple, never hidden behind another
// comparison), then the fronts at its SLO attainment.
std::string verdict_text(const Outcome& o, const rl::Verdict& v, const Outcome* cheapest, bool bounded,
                         double slo_target) {
  std::string text = percent_text(o.slo_attainment) + " SLO for " + fixed_text(o.gpu_hours) + " GPU-h; ";
  const std::string target = "the " + percent_text(slo_target) + " target";
  if (cheapest == nullptr) {
    text += "no tuned baseline meets " + target;
  } else {
    const std::string named = " (" + display_name(*cheapest) + ": " + percent_text(cheapest->slo_attainment) + ", " +
                              fixed_text(cheapest->gpu_hours) + " GPU-h)";
    if (*v.cost_ratio > 1) {
      text += "costs " + fixed_text(*v.cost_ratio) + "x the cheapest tuned baseline meeting " + target + named;
    } else {
      text += saving_text(1 - *v.cost_ratio) + " GPU-hours than the cheapest tuned baseline meeting " + target + named;
    }
  }
  if (o.slo_attainment < slo_target) text += ", and misses " + target + " itself";
  const auto at_slo = [&](const char* what, const std::optional<double>& gpu_hours) {
    return std::string("; ") + what + (gpu_hours ? " at its SLO: " + fixed_text(*gpu_hours) + " GPU-h (" +
                                                       saving_text(1 - o.gpu_hours / *gpu_hours) + ")"
                                                 : " never reaches its SLO");
  };
  text += at_slo("target tracking's front", v.tracking_front_gpu_hours);
  text += at_slo("the hindsight static front", v.front_gpu_hours);
  if (bounded) {
    text += at_slo("the right-sizing bound", v.bound_gpu_hours);
    text += at_slo("the bound smoothed over a minute", v.bound_smoothed_gpu_hours);
  }
  if (v.gap_closed_smoothed) text += "; " + gap_closed_text(*v.gap_closed_smoothed);
  return text;
}

}  // namespace

std::string gap_closed_text(double share) {
  const std::string gap = "the gap from target tracking's front to the smoothed bound";
  if (share < 0) return "closes none of " + gap + " (it costs more than the front)";
  if (share > 1) return "costs less than the smoothed bound (beyond " + gap + ")";
  return "closes " + fixed_text(share * 100, 1) + "% of " + gap;
}

std::string display_name(const Outcome& o) {
  return o.policy + (std::isnan(o.parameter) ? "" : " " + parameter_text(o));
}

EvalOutputs::EvalOutputs(const std::string& out_dir)
    : tuning_((fs::path(out_dir) / "tuning.csv").string()),
      eval_((fs::path(out_dir) / "eval.csv").string()),
      verdicts_((fs::path(out_dir) / "verdicts.csv").string()),
      series_((fs::path(out_dir) / "instances.csv").string()) {
  tuning_.stream() << "delay_s,policy,parameter,start_instances,slo_attainment,gpu_hours,mean_instances,"
                      "actions_per_hour,reward,chosen\n";
  eval_.stream() << "window,window_start_s,window_s,rate_scale,delay_s,policy,parameter,role,start_instances,"
                    "slo_attainment,ttft_p50_s,ttft_p99_s,tbt_p50_s,tbt_p99_s,gpu_hours,mean_instances,scale_ups,"
                    "scale_downs,actions_per_hour,reward,slo_target,bound_gpu_hours\n";
  verdicts_.stream() << "window,delay_s,policy,slo_attainment,gpu_hours,actions_per_hour,rival,rival_slo,"
                        "rival_gpu_hours,saving_vs_rival,cheapest_meeting_target,cheapest_meeting_slo,"
                        "cheapest_meeting_gpu_hours,cost_ratio,front_gpu_hours,saving_vs_front,"
                        "tracking_front_gpu_hours,saving_vs_tracking_front,bound_gpu_hours,bound_smoothed_gpu_hours,"
                        "gap_closed,gap_closed_smoothed,oracle_slo,oracle_gpu_hours\n";
  series_.stream() << "window,delay_s,policy,time_s,instances\n";
}

void EvalOutputs::tuning_row(double delay_s, const Outcome& o, bool chosen) {
  char line[320];
  std::snprintf(line, sizeof line, "%s,%s,%s,%u,%.6f,%.6f,%.4f,%.3f,%.6f,%d\n", number_text(delay_s).c_str(),
                o.policy.c_str(), std::isnan(o.parameter) ? "" : number_text(o.parameter).c_str(), o.start_instances,
                o.slo_attainment, o.gpu_hours, o.mean_instances, o.actions_per_hour, o.reward, chosen ? 1 : 0);
  tuning_.stream() << line;
}

void EvalOutputs::report(const WindowPlays& plays, double slo_target, double interval_s, std::ostream& out) {
  const EvalWindow& window = *plays.window;
  const double delay = plays.delay_s;
  const rl::Fronts& fronts = plays.fronts;
  for (const Outcome& o : plays.tuned) eval_.stream() << eval_row(window, delay, o, "tuned", slo_target, fronts);
  for (const Outcome& o : fronts.tracking) eval_.stream() << eval_row(window, delay, o, "front", slo_target, fronts);
  for (const auto* bound : {&fronts.bound_hindsight, &fronts.bound_smoothed, &fronts.bound_priced}) {
    for (const Outcome& o : *bound) eval_.stream() << eval_row(window, delay, o, "bound", slo_target, fronts);
  }
  eval_.stream() << eval_row(window, delay, *plays.oracle, "oracle", slo_target, fronts);
  for (const Outcome& o : fronts.statics) eval_.stream() << eval_row(window, delay, o, "hindsight", slo_target, fronts);
  // The drawn plays (policies, tuned baselines, oracle), as the table lists them.
  std::vector<const Outcome*> rows = plays.policies;
  for (const Outcome& o : plays.tuned) rows.push_back(&o);
  rows.push_back(plays.oracle);
  for (std::size_t d = 0; d < rows.size(); ++d) {
    const Outcome* o = rows[d];
    if (d < plays.policies.size()) eval_.stream() << eval_row(window, delay, *o, "policy", slo_target, fronts);
    for (std::size_t s = 0; s < o->instances.size(); ++s) {
      series_.stream() << window.label << ',' << number_text(delay) << ',' << display_name(*o) << ','
                       << number_text(interval_s * static_cast<double>(s + 1)) << ',' << number_text(o->instances[s])
                       << '\n';
    }
  }

  out << '\n' << window.label << " [" << number_text(window.covers().from_s) << ", "
      << number_text(window.covers().to_s) << ") s";
  if (window.rate_scale != 1.0) out << " at " << number_text(window.rate_scale) << "x its rate";
  out << ", scale-up delay " << number_text(delay) << " s; adaptive policies start at " << plays.start << " instance"
      << (plays.start == 1 ? "" : "s") << " per pool (the tuned static size)\n";
  const int width = name_width(rows);
  char line[256];
  std::snprintf(line, sizeof line, " %8s %10s %10s %9s %8s %9s %11s\n", "SLO", "TTFT p99", "TBT p99", "GPU-h", "inst",
                "actions/h", "reward");
  out << "  " << std::string("policy").append(static_cast<std::size_t>(width) - 6, ' ') << line;
  for (const Outcome* o : plays.policies) print_table_row(out, *o, "", width);
  for (const Outcome& o : plays.tuned) print_table_row(out, o, "tuned", width);
  print_table_row(out, *plays.oracle, "heuristic: instant, knows the future", width);
  out << "  hindsight static sizes (a bound: chosen on this window):";
  print_plays(out, fronts.statics);
  for (const auto* bound : {&fronts.bound_hindsight, &fronts.bound_smoothed, &fronts.bound_priced}) {
    if (bound->empty()) continue;
    out << "  " << bound->front().policy << " (a bound: right-sizing with the load known, by "
        << (bound == &fronts.bound_priced ? "the price of a miss" : "utilisation") << "):";
    print_plays(out, *bound);
  }
  if (plays.bounded) {
    // The room any policy has at the target: how far below target tracking's front the
    // bound lies there.
    const auto front = rl::tracking_front_at(fronts, slo_target);
    const auto bound = rl::bound_at(fronts, slo_target);
    out << "  room at the " << percent_text(slo_target) << " target: target tracking's front "
        << (front ? fixed_text(*front, 2) + " GPU-h" : std::string("does not reach it")) << ", the bound "
        << (bound ? fixed_text(*bound, 2) + " GPU-h" : std::string("does not reach it"));
    if (front && bound) out << ": " << fixed_text(100.0 * (1.0 - *bound / *front), 1) << "% below the front";
    out << '\n';
    print_bound_check(out, plays);
  }
  for (const Outcome* o : plays.policies) {
    const rl::Verdict v = rl::judge(*o, plays.tuned, fronts, slo_target);
    const Outcome* cheapest =
        v.cheapest_meeting >= 0 ? &plays.tuned[static_cast<std::size_t>(v.cheapest_meeting)] : nullptr;
    out << "  " << o->policy << ": " << verdict_text(*o, v, cheapest, plays.bounded, slo_target) << '\n';
    verdict_row(plays, *o, v);
  }
}

void EvalOutputs::verdict_row(const WindowPlays& plays, const Outcome& o, const rl::Verdict& v) {
  const auto tuned = [&](int index) { return index >= 0 ? &plays.tuned[static_cast<std::size_t>(index)] : nullptr; };
  const Outcome* rival = tuned(v.rival);
  const Outcome* cheapest = tuned(v.cheapest_meeting);
  const auto name_of = [](const Outcome* x) { return x ? display_name(*x) : std::string(); };
  const auto slo_of = [](const Outcome* x) { return x ? number_text(x->slo_attainment) : std::string(); };
  const auto gpu_of = [](const Outcome* x) { return x ? number_text(x->gpu_hours) : std::string(); };
  verdicts_.stream() << plays.window->label << ',' << number_text(plays.delay_s) << ',' << o.policy << ','
                     << number_text(o.slo_attainment) << ',' << number_text(o.gpu_hours) << ','
                     << number_text(o.actions_per_hour) << ',' << name_of(rival) << ',' << slo_of(rival) << ','
                     << gpu_of(rival) << ',' << optional_text(v.saving_vs_rival) << ',' << name_of(cheapest) << ','
                     << slo_of(cheapest) << ',' << gpu_of(cheapest) << ',' << optional_text(v.cost_ratio) << ','
                     << optional_text(v.front_gpu_hours) << ',' << optional_text(v.saving_vs_front) << ','
                     << optional_text(v.tracking_front_gpu_hours) << ',' << optional_text(v.saving_vs_tracking_front)
                     << ',' << optional_text(v.bound_gpu_hours) << ',' << optional_text(v.bound_smoothed_gpu_hours)
                     << ',' << optional_text(v.gap_closed) << ',' << optional_text(v.gap_closed_smoothed) << ','
                     << number_text(plays.oracle->slo_attainment) << ',' << number_text(plays.oracle->gpu_hours)
                     << '\n';
}

Status EvalOutputs::commit() {
  for (AtomicFile* file : {&tuning_, &eval_, &verdicts_, &series_}) {
    if (const Status written = file->commit(); !written) return written;
  }
  return Ok{};
}

std::string EvalOutputs::paths() const {
  return tuning_.path() + ", " + eval_.path() + ", " + verdicts_.path() + ", " + series_.path();
}

}  // namespace meshsim::cli

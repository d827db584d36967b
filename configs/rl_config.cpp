#include "configs/rl_config.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "configs/scaling_config.hpp"
#include "sim/engine/number_text.hpp"

namespace meshsim::configs {

using nlohmann::json;

namespace {

// A list of numbers each accepted by `valid` (`what` says which), replacing `out`'s
// default when the key is present. An empty list is only accepted where `out` may be empty.
template <typename Valid>
void read_number_list(ObjectReader& reader, const char* key, const std::string& what, Valid valid,
                      std::vector<double>& out) {
  const nlohmann::json* list = reader.raw(key);
  if (list == nullptr) return;
  const bool may_be_empty = out.empty();
  out.clear();
  if (!list->is_array() || (list->empty() && !may_be_empty)) {
    reader.fail(key, "expected a " + std::string(may_be_empty ? "" : "non-empty ") + "list of " + what);
    return;
  }
  for (const auto& value : *list) {
    if (!value.is_number() || !valid(value.get<double>())) {
      reader.fail(key, "expected " + what + ", got " + value.dump());
      return;
    }
    out.push_back(value.get<double>());
  }
}

// A list of [from_s, to_s] spans of workload seconds, each non-empty.
void read_spans(ObjectReader& reader, const char* key, std::vector<TimeSpan>& out) {
  const nlohmann::json* list = reader.raw(key);
  if (list == nullptr) return;
  out.clear();
  if (!list->is_array()) {
    reader.fail(key, "expected a list of [from_s, to_s] spans of workload seconds");
    return;
  }
  for (const auto& span : *list) {
    if (!span.is_array() || span.size() != 2 || !span[0].is_number() || !span[1].is_number() ||
        !(span[0].get<double>() >= 0) || !(span[1].get<double>() > span[0].get<double>()) ||
        span[1].get<double>() > 1e12) {
      reader.fail(key, "expected [from_s, to_s] spans with 0 <= from_s < to_s <= 1e12, got " + span.dump());
      return;
    }
    out.push_back(TimeSpan{span[0].get<double>(), span[1].get<double>()});
  }
}

nlohmann::json spans_to_json(const std::vector<TimeSpan>& spans) {
  nlohmann::json list = nlohmann::json::array();
  for (const TimeSpan& span : spans) list.push_back({span.from_s, span.to_s});
  return list;
}

void parse_ppo(ObjectReader& parent, PpoSpec& ppo) {
  ObjectReader reader(parent.raw("ppo"), parent.path_of("ppo"), parent.errors());
  const auto count = [](std::uint64_t v) { return v >= 1 && v <= 1'000'000; };
  const auto unit = [](double v) { return v >= 0 && v <= 1; };
  const auto non_negative = [](double v) { return v >= 0 && std::isfinite(v); };
  const auto positive = [](double v) { return v > 0 && std::isfinite(v); };
  reader.read("num_envs", ppo.num_envs, "an integer in [1, 1000000]", count);
  reader.read("rollout_steps", ppo.rollout_steps, "an integer in [1, 1000000]", count);
  reader.read("total_decisions", ppo.total_decisions, "an integer >= 1", [](std::uint64_t v) { return v >= 1; });
  reader.read("learning_rate", ppo.learning_rate, "a number > 0", positive);
  reader.read("anneal_lr", ppo.anneal_lr);
  reader.read("gamma", ppo.gamma, "a number in [0, 1]", unit);
  reader.read("gae_lambda", ppo.gae_lambda, "a number in [0, 1]", unit);
  reader.read("minibatches", ppo.minibatches, "an integer in [1, 1000000]", count);
  reader.read("update_epochs", ppo.update_epochs, "an integer in [1, 1000000]", count);
  reader.read("normalize_advantages", ppo.normalize_advantages);
  reader.read("clip_coef", ppo.clip_coef, "a number > 0", positive);
  reader.read("clip_value_loss", ppo.clip_value_loss);
  reader.read("entropy_coef", ppo.entropy_coef, "a number >= 0", non_negative);
  reader.read("value_coef", ppo.value_coef, "a number >= 0", non_negative);
  reader.read("max_grad_norm", ppo.max_grad_norm, "a number > 0", positive);
  if (const nlohmann::json* hidden = reader.raw("hidden"); hidden != nullptr) {
    ppo.hidden.clear();
    if (!hidden->is_array()) reader.fail("hidden", "expected a list of layer widths");
    for (const auto& width : hidden->is_array() ? *hidden : nlohmann::json::array()) {
      if (!width.is_number_unsigned() || width.get<std::uint64_t>() == 0 || width.get<std::uint64_t>() > 4096) {
        reader.fail("hidden", "expected layer widths in [1, 4096], got " + width.dump());
        break;
      }
      ppo.hidden.push_back(width.get<std::uint32_t>());
    }
  }
  reader.read("normalize_observations", ppo.normalize_observations);
  reader.read("normalize_rewards", ppo.normalize_rewards);
  reader.read("observation_clip", ppo.observation_clip, "a number > 0", positive);
  reader.read("reward_clip", ppo.reward_clip, "a number > 0", positive);
  reader.read("checkpoint_every", ppo.checkpoint_every, "an integer >= 0", [](std::uint64_t) { return true; });
  reader.read("lagrange_rate", ppo.lagrange_rate, "a number in [0, 10] (0: fixed reward weights)",
              [](double v) { return v >= 0 && v <= 10; });
  reader.read_optional("lagrange_target", ppo.lagrange_target, "a share in (0, 1)",
                       [](double v) { return v > 0 && v < 1; });
  reader.read("lagrange_initial", ppo.lagrange_initial, "a number in (0, 1e6]", [](double v) { return v > 0 && v <= 1e6; });
  reader.read("lagrange_min", ppo.lagrange_min, "a number in (0, 1e6]", [](double v) { return v > 0 && v <= 1e6; });
  reader.read("lagrange_max", ppo.lagrange_max, "a number in (0, 1e6]", [](double v) { return v > 0 && v <= 1e6; });
  if (ppo.lagrange_min > ppo.lagrange_max) reader.fail("lagrange_min", "must not exceed lagrange_max");
  reader.read_optional("seed", ppo.seed, "an integer in [0, 2^64)", [](std::uint64_t) { return true; });
  reader.read("threads", ppo.threads, "an integer in [0, 1024] (0: one per hardware thread)",
              [](std::uint64_t v) { return v <= 1024; });
  if (ppo.minibatches > static_cast<std::uint64_t>(ppo.num_envs) * ppo.rollout_steps) {
    reader.fail("minibatches", "expected at most num_envs x rollout_steps (" +
                                   std::to_string(static_cast<std::uint64_t>(ppo.num_envs) * ppo.rollout_steps) + ")");
  }
}

nlohmann::json ppo_to_json(const PpoSpec& ppo) {
  return nlohmann::json{{"num_envs", ppo.num_envs},
                        {"rollout_steps", ppo.rollout_steps},
                        {"total_decisions", ppo.total_decisions},
                        {"learning_rate", ppo.learning_rate},
                        {"anneal_lr", ppo.anneal_lr},
                        {"gamma", ppo.gamma},
                        {"gae_lambda", ppo.gae_lambda},
                        {"minibatches", ppo.minibatches},
                        {"update_epochs", ppo.update_epochs},
                        {"normalize_advantages", ppo.normalize_advantages},
                        {"clip_coef", ppo.clip_coef},
                        {"clip_value_loss", ppo.clip_value_loss},
                        {"entropy_coef", ppo.entropy_coef},
                        {"value_coef", ppo.value_coef},
                        {"max_grad_norm", ppo.max_grad_norm},
                        {"hidden", ppo.hidden},
                        {"normalize_observations", ppo.normalize_observations},
                        {"normalize_rewards", ppo.normalize_rewards},
                        {"observation_clip", ppo.observation_clip},
                        {"reward_clip", ppo.reward_clip},
                        {"checkpoint_every", ppo.checkpoint_every},
                        {"lagrange_rate", ppo.lagrange_rate},
                        {"lagrange_target", ppo.lagrange_target ? nlohmann::json(*ppo.lagrange_target) : nlohmann::json(nullptr)},
                        {"lagrange_initial", ppo.lagrange_initial},
                        {"lagrange_min", ppo.lagrange_min},
                        {"lagrange_max", ppo.lagrange_max},
                        {"threads", ppo.threads},
                        {"seed", ppo.seed ? nlohmann::json(*ppo.seed) : nlohmann::json(nullptr)}};
}

}  // namespace

void parse_rl(ObjectReader& parent, std::optional<RlSpec>& spec, const std::string& base_dir) {
  if (!parent.has("rl")) {
    parent.raw("rl");  // marks the key seen
    return;
  }
  RlSpec rl;
  ObjectReader reader(parent.raw("rl"), parent.path_of("rl"), parent.errors());
  const auto non_negative = [](double v) { return v >= 0 && std::isfinite(v); };
  const auto positive_up_to_1e6 = [](double v) { return v > 0 && v <= 1e6; };
  const auto non_negative_up_to_1e6 = [](double v) { return v >= 0 && v <= 1e6; };
  reader.read_duration("decision_interval_s", rl.decision_interval, 1.0);
  if (rl.decision_interval < SimTime::from_ms(1)) reader.fail("decision_interval_s", "expected at least 0.001 s");
  reader.read_duration("episode_s", rl.episode_length, 1.0);
  if (rl.episode_length < rl.decision_interval) {
    reader.fail("episode_s", "expected at least one decision interval");
  }
  reader.read("windows_from_s", rl.windows_from_s, "a number of seconds >= 0", non_negative);
  reader.read_optional("windows_to_s", rl.windows_to_s, "a number of seconds >= 0", non_negative);
  if (rl.windows_to_s && *rl.windows_to_s < rl.windows_from_s) {
    reader.fail("windows_to_s", "expected at least windows_from_s");
  }
  read_spans(reader, "validation", rl.validation);
  read_spans(reader, "test", rl.test);
  if ((!rl.validation.empty() || !rl.test.empty()) && !rl.windows_to_s) {
    reader.fail("windows_to_s", "expected with validation or test spans: training windows must end before them");
  }
  reader.read("slo_target", rl.slo_target, "a share in (0, 1]", [](double v) { return v > 0 && v <= 1; });
  reader.read("tuning_windows", rl.tuning_windows, "an integer in [1, 1000]",
              [](std::uint64_t v) { return v >= 1 && v <= 1000; });
  read_number_list(reader, "rate_scales", "positive numbers up to 1e6", positive_up_to_1e6, rl.rate_scales);
  read_number_list(reader, "scale_up_delays_s", "seconds in [0, 1e6]", non_negative_up_to_1e6,
                   rl.scale_up_delays_s);
  std::vector<double> start_sizes;
  read_number_list(reader, "start_instances", "whole numbers of instances in [1, 100000]",
                   [](double v) { return v >= 1 && v <= 100000 && v == std::floor(v); }, start_sizes);
  for (const double n : start_sizes) rl.start_instances.push_back(static_cast<std::uint32_t>(n));
  reader.read("phase_period_s", rl.phase_period_s, "a number of seconds in [0, 1e9] (0: no phase features)",
              [](double v) { return v >= 0 && v <= 1e9; });
  reader.read_duration("warmup_s", rl.warmup, 1.0);
  reader.read_choice("action", rl.action, kActionKindNames);
  reader.read("action_scale_step", rl.action_scale_step, "a number of instances in (0, 1000]",
              [](double v) { return v > 0 && v <= 1000; });
  reader.read("action_mig_step", rl.action_mig_step, "a number of instances in (0, 1000]",
              [](double v) { return v > 0 && v <= 1000; });
  reader.read("discrete_max_step", rl.discrete_max_step, "an integer in [1, 100]",
              [](std::uint64_t v) { return v >= 1 && v <= 100; });
  reader.read("target_max_instances", rl.target_max_instances, "an integer in [1, 1000]",
              [](std::uint64_t v) { return v >= 1 && v <= 1000; });
  reader.read("target_max_step", rl.target_max_step, "an integer in [1, 1000]",
              [](std::uint64_t v) { return v >= 1 && v <= 1000; });
  ObjectReader base(reader.raw("residual_base"), reader.path_of("residual_base"), reader.errors());
  parse_target_tracking(base, rl.residual_base, base_dir);
  if (const json* also = reader.raw("train_also")) {
    if (!also->is_array()) reader.fail("train_also", "expected a list of recipe files");
    for (std::size_t i = 0; also->is_array() && i < also->size(); ++i) {
      const json& path = (*also)[i];
      if (!path.is_string() || path.get<std::string>().empty()) {
        reader.fail("train_also", "expected recipe file paths; item " + std::to_string(i) + " is " + path.dump());
      } else {
        rl.train_also.push_back(path.get<std::string>());
      }
    }
  }
  ObjectReader reward(reader.raw("reward"), reader.path_of("reward"), reader.errors());
  reward.read("slo_weight", rl.reward.slo_weight, "a number >= 0", non_negative);
  reward.read("waiting_weight", rl.reward.waiting_weight, "a number >= 0", non_negative);
  reward.read("cost_weight", rl.reward.cost_weight, "a number >= 0", non_negative);
  reward.read("churn_weight", rl.reward.churn_weight, "a number >= 0", non_negative);
  parse_ppo(reader, rl.ppo);
  const TimeSpan training = rl.training_span();
  for (const auto* split : {&rl.validation, &rl.test}) {
    for (const TimeSpan& span : *split) {
      if (!span.overlaps(training)) continue;
      reader.fail(split == &rl.test ? "test" : "validation",
                  "the span [" + number_text(span.from_s) + ", " + number_text(span.to_s) +
                      ") overlaps the training windows' [" + number_text(training.from_s) + ", " +
                      number_text(training.to_s) +
                      ") (windows_from_s to windows_to_s + episode_s x the largest rate scale, at least 1)");
    }
  }
  spec = rl;
}

json rl_to_json(const RlSpec& spec) {
  json out{{"decision_interval_s", spec.decision_interval.seconds()},
              {"episode_s", spec.episode_length.seconds()},
              {"windows_from_s", spec.windows_from_s},
              {"windows_to_s", spec.windows_to_s ? json(*spec.windows_to_s) : json(nullptr)},
              {"validation", spans_to_json(spec.validation)},
              {"test", spans_to_json(spec.test)},
              {"slo_target", spec.slo_target},
              {"tuning_windows", spec.tuning_windows},
              {"rate_scales", spec.rate_scales},
              {"scale_up_delays_s", spec.scale_up_delays_s},
              {"start_instances", spec.start_instances},
              {"phase_period_s", spec.phase_period_s},
              {"warmup_s", spec.warmup.seconds()},
              {"action", kActionKindNames.name(spec.action)},
              {"action_scale_step", spec.action_scale_step},
              {"action_mig_step", spec.action_mig_step},
              {"discrete_max_step", spec.discrete_max_step},
              {"target_max_instances", spec.target_max_instances},
              {"target_max_step", spec.target_max_step},
              {"residual_base", target_tracking_to_json(spec.residual_base)},
              {"reward",
               {{"slo_weight", spec.reward.slo_weight},
                {"waiting_weight", spec.reward.waiting_weight},
                {"cost_weight", spec.reward.cost_weight},
                {"churn_weight", spec.reward.churn_weight}}},
              {"ppo", ppo_to_json(spec.ppo)}};
  // Only when set: run folders written before the key existed resume unchanged.
  if (!spec.train_also.empty()) out["train_also"] = spec.train_also;
  return out;
}

TimeSpan RlSpec::training_span() const {
  if (!windows_to_s) return TimeSpan{windows_from_s, std::numeric_limits<double>::infinity()};
  // At least rate 1: the windows baselines are tuned on play the workload as it is.
  const double scale = std::max(1.0, rate_scales.empty() ? 1.0 : *std::max_element(rate_scales.begin(), rate_scales.end()));
  return TimeSpan{windows_from_s, *windows_to_s + episode_length.seconds() * scale};
}

Expected<RlSpec> rl_from_json(const nlohmann::json& tree, const std::string& where) {
  ConfigErrors errors(where);
  std::optional<RlSpec> spec;
  {
    const json wrapped{{"rl", tree}};
    ObjectReader reader(&wrapped, "", errors);
    parse_rl(reader, spec, "");
  }
  if (!errors.empty()) return Error{errors.to_string()};
  return *spec;
}

}  // namespace meshsim::configs

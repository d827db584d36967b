#include "configs/rl_config.hpp"

#include <cmath>

namespace meshsim::configs {

using nlohmann::json;

void parse_rl(ObjectReader& parent, std::optional<RlSpec>& spec) {
  if (!parent.has("rl")) {
    parent.raw("rl");  // marks the key seen
    return;
  }
  RlSpec rl;
  ObjectReader reader(parent.raw("rl"), parent.path_of("rl"), parent.errors());
  const auto positive = [](double v) { return v > 0 && std::isfinite(v); };
  const auto non_negative = [](double v) { return v >= 0 && std::isfinite(v); };
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
  if (const nlohmann::json* scales = reader.raw("rate_scales"); scales != nullptr) {
    rl.rate_scales.clear();
    if (!scales->is_array() || scales->empty()) {
      reader.fail("rate_scales", "expected a non-empty list of positive numbers");
    } else {
      for (const auto& scale : *scales) {
        if (!scale.is_number() || !positive(scale.get<double>()) || scale.get<double>() > 1e6) {
          reader.fail("rate_scales", "expected positive numbers up to 1e6, got " + scale.dump());
          break;
        }
        rl.rate_scales.push_back(scale.get<double>());
      }
    }
  }
  reader.read_choice("action", rl.action, kActionKindNames);
  reader.read("action_scale_step", rl.action_scale_step, "a number of instances in (0, 1000]",
              [](double v) { return v > 0 && v <= 1000; });
  reader.read("discrete_max_step", rl.discrete_max_step, "an integer in [1, 100]",
              [](std::uint64_t v) { return v >= 1 && v <= 100; });
  ObjectReader reward(reader.raw("reward"), reader.path_of("reward"), reader.errors());
  reward.read("slo_weight", rl.reward.slo_weight, "a number >= 0", non_negative);
  reward.read("cost_weight", rl.reward.cost_weight, "a number >= 0", non_negative);
  reward.read("churn_weight", rl.reward.churn_weight, "a number >= 0", non_negative);
  spec = rl;
}

json rl_to_json(const RlSpec& spec) {
  return json{{"decision_interval_s", spec.decision_interval.seconds()},
              {"episode_s", spec.episode_length.seconds()},
              {"windows_from_s", spec.windows_from_s},
              {"windows_to_s", spec.windows_to_s ? json(*spec.windows_to_s) : json(nullptr)},
              {"rate_scales", spec.rate_scales},
              {"action", kActionKindNames.name(spec.action)},
              {"action_scale_step", spec.action_scale_step},
              {"discrete_max_step", spec.discrete_max_step},
              {"reward",
               {{"slo_weight", spec.reward.slo_weight},
                {"cost_weight", spec.reward.cost_weight},
                {"churn_weight", spec.reward.churn_weight}}}};
}

}  // namespace meshsim::configs

#include "rl/ppo/checkpoint_state.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "configs/config_file.hpp"
#include "configs/json_difference.hpp"
#include "sim/engine/number_text.hpp"
#include "traces/json_text.hpp"

namespace meshsim::rl {
namespace {

using nlohmann::json;

json stats_to_json(const RunningMeanStd& stats) {
  return {{"mean", stats.mean()}, {"var", stats.var()}, {"count", stats.count()}};
}

json cursor_to_json(const EnvCursor& c) {
  json options = json::object();
  if (c.options.window_start_s) options["window_start_s"] = *c.options.window_start_s;
  if (c.options.rate_scale) options["rate_scale"] = *c.options.rate_scale;
  if (c.options.scale_up_delay_s) options["scale_up_delay_s"] = *c.options.scale_up_delay_s;
  if (c.options.start_instances) options["start_instances"] = *c.options.start_instances;
  // A diverged policy's NaN action is kept (the environment treats it as no change); JSON
  // writes it as null.
  return {{"rng", c.rng_before_reset}, {"options", options}, {"actions", c.actions}};
}

// The first problem found, thrown to parse_checkpoint_state.
struct Bad {
  std::string path, message;
};

// Typed, checked reads of one JSON tree; each names the key path it reads.
class Reader {
 public:
  static const json& at(const json& object, const std::string& path, std::string_view key) {
    if (!object.is_object()) throw Bad{path, "expected an object"};
    const auto it = object.find(key);
    if (it == object.end()) throw Bad{join(path, key), "missing"};
    return *it;
  }
  static std::string join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }

  static std::uint64_t count(const json& value, const std::string& path, std::uint64_t low, std::uint64_t high) {
    const bool whole = value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0);
    if (!whole || value.get<std::uint64_t>() < low || value.get<std::uint64_t>() > high) {
      throw Bad{path, "expected an integer in [" + std::to_string(low) + ", " + std::to_string(high) + "], got " +
                          shown(value)};
    }
    return value.get<std::uint64_t>();
  }
  static double number(const json& value, const std::string& path, double low, double high) {
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < low ||
        value.get<double>() > high) {
      throw Bad{path, "expected a number in [" + number_text(low) + ", " + number_text(high) + "], got " + shown(value)};
    }
    return value.get<double>();
  }
  static bool boolean(const json& value, const std::string& path) {
    if (!value.is_boolean()) throw Bad{path, "expected true or false, got " + shown(value)};
    return value.get<bool>();
  }
  static const json& list(const json& value, const std::string& path, std::size_t low, std::size_t high) {
    if (!value.is_array() || value.size() < low || value.size() > high) {
      const std::string sizes =
          low == high ? std::to_string(low) : std::to_string(low) + " to " + std::to_string(high);
      throw Bad{path, "expected a list of " + sizes + " items, got " + shown(value)};
    }
    return value;
  }
  static std::vector<double> numbers(const json& value, const std::string& path, std::size_t size, double low,
                                     double high) {
    std::vector<double> out;
    const json& items = list(value, path, size, size);
    for (std::size_t i = 0; i < items.size(); ++i) {
      out.push_back(number(items[i], path + "[" + std::to_string(i) + "]", low, high));
    }
    return out;
  }
  // xoshiro256's state: four words, not all zero (that state never leaves zero).
  static engine::Rng::State rng(const json& value, const std::string& path) {
    const json& words = list(value, path, 4, 4);
    engine::Rng::State state{};
    for (std::size_t i = 0; i < 4; ++i) {
      state[i] = count(words[i], path + "[" + std::to_string(i) + "]", 0, std::numeric_limits<std::uint64_t>::max());
    }
    if (state == engine::Rng::State{}) throw Bad{path, "expected a generator's state (four words, not all zero)"};
    return state;
  }
  static RunningMeanStd stats(const json& value, const std::string& path, std::size_t size) {
    constexpr double kLargest = std::numeric_limits<double>::max();
    auto mean = numbers(at(value, path, "mean"), join(path, "mean"), size, -kLargest, kLargest);
    auto var = numbers(at(value, path, "var"), join(path, "var"), size, 0.0, kLargest);
    const double count = number(at(value, path, "count"), join(path, "count"), 1e-300, kLargest);
    return RunningMeanStd(std::move(mean), std::move(var), count);
  }

 private:
  static std::string shown(const json& value) { return traces::json_for_message(value, 40); }
};

EnvCursor read_cursor(const json& env, const std::string& path) {
  EnvCursor c;
  c.rng_before_reset = Reader::rng(Reader::at(env, path, "rng"), Reader::join(path, "rng"));
  const std::string where = Reader::join(path, "options");
  const json& options = Reader::at(env, path, "options");
  if (!options.is_object()) throw Bad{where, "expected an object"};
  for (const auto& [key, value] : options.items()) {
    const std::string key_path = Reader::join(where, key);
    constexpr double kLargest = std::numeric_limits<double>::max();
    if (key == "window_start_s") {
      c.options.window_start_s = Reader::number(value, key_path, 0.0, kLargest);
    } else if (key == "rate_scale") {
      c.options.rate_scale = Reader::number(value, key_path, 0.0, kLargest);
    } else if (key == "scale_up_delay_s") {
      c.options.scale_up_delay_s = Reader::number(value, key_path, 0.0, kLargest);
    } else if (key == "start_instances") {
      c.options.start_instances =
          static_cast<std::uint32_t>(Reader::count(value, key_path, 1, std::numeric_limits<std::uint32_t>::max()));
    } else {
      throw Bad{key_path, "unknown key (expected window_start_s, rate_scale, scale_up_delay_s, start_instances)"};
    }
  }
  const std::string actions_path = Reader::join(path, "actions");
  const json& actions = Reader::list(Reader::at(env, path, "actions"), actions_path, 0, std::size_t{1} << 28);
  c.actions.reserve(actions.size());
  for (std::size_t i = 0; i < actions.size(); ++i) {
    if (actions[i].is_null()) {
      c.actions.push_back(std::numeric_limits<float>::quiet_NaN());  // a NaN action, as JSON writes it
    } else {
      c.actions.push_back(static_cast<float>(Reader::number(actions[i], actions_path + "[" + std::to_string(i) + "]",
                                                            -1e30, 1e30)));
    }
  }
  return c;
}

CheckpointState read_state(const json& top) {
  CheckpointState s;
  if (!top.is_object()) throw Bad{"", "expected an object"};
  const json& format = Reader::at(top, "", "format");
  if (format != kCheckpointFormat) {
    throw Bad{"format", "checkpoint format " + format.dump() + ", this build reads " +
                            std::to_string(kCheckpointFormat) + " (train it again with this build)"};
  }
  constexpr std::uint64_t kU32 = std::numeric_limits<std::uint32_t>::max();
  s.seed = Reader::count(Reader::at(top, "", "seed"), "seed", 0, std::numeric_limits<std::uint64_t>::max());
  s.iterations = static_cast<std::uint32_t>(Reader::count(Reader::at(top, "", "iterations"), "iterations", 1, kU32));
  s.iteration = static_cast<std::uint32_t>(Reader::count(Reader::at(top, "", "iteration"), "iteration", 0, s.iterations));
  s.decisions = Reader::count(Reader::at(top, "", "decisions"), "decisions", 0, std::numeric_limits<std::int64_t>::max());

  const json& policy = Reader::at(top, "", "policy");
  s.policy.observations = static_cast<std::int64_t>(
      Reader::count(Reader::at(policy, "policy", "observations"), "policy.observations", 1, 1'000'000));
  s.policy.actions =
      static_cast<std::int64_t>(Reader::count(Reader::at(policy, "policy", "actions"), "policy.actions", 1, 1024));
  s.policy.choices =
      static_cast<std::int64_t>(Reader::count(Reader::at(policy, "policy", "choices"), "policy.choices", 0, 10'000));
  const json& hidden = Reader::list(Reader::at(policy, "policy", "hidden"), "policy.hidden", 1, 16);
  s.policy.hidden.clear();
  for (std::size_t i = 0; i < hidden.size(); ++i) {
    s.policy.hidden.push_back(
        static_cast<std::uint32_t>(Reader::count(hidden[i], "policy.hidden[" + std::to_string(i) + "]", 1, 4096)));
  }

  auto rl = configs::rl_from_json(Reader::at(top, "", "rl"), "rl");
  if (!rl) throw Bad{"rl", rl.error().message};
  s.rl = *rl;
  if (top.contains("train_also_rl")) {
    const json& others = Reader::list(top["train_also_rl"], "train_also_rl", 1, 1024);
    for (std::size_t i = 0; i < others.size(); ++i) {
      const std::string path = "train_also_rl[" + std::to_string(i) + "]";
      auto other = configs::rl_from_json(others[i], path);
      if (!other) throw Bad{path, other.error().message};
      s.train_also_rl.push_back(*other);
    }
  }
  s.normalize_observations = Reader::boolean(Reader::at(top, "", "normalize_observations"), "normalize_observations");
  s.observation_clip = Reader::number(Reader::at(top, "", "observation_clip"), "observation_clip", 1e-9, 1e9);
  s.observation_stats = Reader::stats(Reader::at(top, "", "observation_stats"), "observation_stats",
                                      static_cast<std::size_t>(s.policy.observations));
  s.shuffle_rng = Reader::rng(Reader::at(top, "", "shuffle_rng"), "shuffle_rng");
  if (top.contains("lagrange")) s.lagrange = Reader::number(top["lagrange"], "lagrange", 1e-9, 1e9);

  const json& envs = Reader::list(Reader::at(top, "", "envs"), "envs", 1, 1'000'000);
  for (std::size_t i = 0; i < envs.size(); ++i) {
    const std::string path = "envs[" + std::to_string(i) + "]";
    CheckpointEnv env;
    env.cursor = read_cursor(envs[i], path);
    env.action_rng = Reader::rng(Reader::at(envs[i], path, "action_rng"), path + ".action_rng");
    env.episode_return = Reader::number(Reader::at(envs[i], path, "episode_return"), path + ".episode_return",
                                        -std::numeric_limits<double>::max(), std::numeric_limits<double>::max());
    s.envs.push_back(std::move(env));
  }
  const json& scaler = Reader::at(top, "", "reward_scaler");
  constexpr double kLargest = std::numeric_limits<double>::max();
  s.reward_returns = Reader::numbers(Reader::at(scaler, "reward_scaler", "returns"), "reward_scaler.returns",
                                     envs.size(), -kLargest, kLargest);
  s.reward_stats = Reader::stats(Reader::at(scaler, "reward_scaler", "stats"), "reward_scaler.stats", 1);
  return s;
}

}  // namespace

json to_json(const CheckpointEnv& env) {
  json entry = cursor_to_json(env.cursor);
  entry["action_rng"] = env.action_rng;
  entry["episode_return"] = env.episode_return;
  return entry;
}

json to_json(const CheckpointState& s) {
  json envs = json::array();
  for (const CheckpointEnv& env : s.envs) envs.push_back(to_json(env));
  json state = {{"format", kCheckpointFormat},
          {"seed", s.seed},
          {"iteration", s.iteration},
          {"iterations", s.iterations},
          {"decisions", s.decisions},
          {"policy",
           {{"observations", s.policy.observations},
            {"actions", s.policy.actions},
            {"choices", s.policy.choices},
            {"hidden", s.policy.hidden}}},
          {"rl", configs::rl_to_json(s.rl)},
          {"normalize_observations", s.normalize_observations},
          {"observation_clip", s.observation_clip},
          {"observation_stats", stats_to_json(s.observation_stats)},
          {"reward_scaler", {{"returns", s.reward_returns}, {"stats", stats_to_json(s.reward_stats)}}},
          {"shuffle_rng", s.shuffle_rng},
          {"lagrange", s.lagrange},
          {"envs", std::move(envs)}};
  if (!s.train_also_rl.empty()) {
    json& others = state["train_also_rl"] = json::array();
    for (const configs::RlSpec& other : s.train_also_rl) others.push_back(configs::rl_to_json(other));
  }
  return state;
}

Expected<CheckpointState> parse_checkpoint_state(std::string_view text, const std::string& file) {
  const json top = json::parse(text, nullptr, false);
  if (top.is_discarded()) return Error{file + ": not JSON (a checkpoint's state.json is written whole or not at all)"};
  try {
    CheckpointState state = read_state(top);
    // A key this build does not write would be ignored: a typo or another tool's file.
    if (const auto key = configs::first_unknown_key(top, to_json(state))) {
      throw Bad{*key, "unknown key (not one a checkpoint's state has)"};
    }
    return state;
  } catch (const Bad& bad) {
    return Error{file + ": " + (bad.path.empty() ? std::string() : bad.path + ": ") + bad.message};
  }
}

Expected<CheckpointState> read_checkpoint_state(const std::filesystem::path& file) {
  if (configs::path_kind(file) == configs::PathKind::kMissing) {
    return Error{file.string() + ": cannot read it (is " + file.parent_path().string() +
                 " a checkpoint folder of meshsim train?)"};
  }
  auto text = configs::read_config_text(file.string(), "checkpoint state");
  if (!text) return text.error();
  return parse_checkpoint_state(*text, file.string());
}

Status check_resumes(const CheckpointState& state, const ResumedRun& run, const std::string& file) {
  const auto refuse = [&](const std::string& key, const std::string& saved, const std::string& here) {
    return Error{file + ": " + key + ": the checkpoint has " + saved + ", this run " + here +
                 "; resume with the run's own config and seed"};
  };
  if (state.seed != run.seed) return refuse("seed", std::to_string(state.seed), std::to_string(run.seed));
  if (state.iterations != run.iterations) {
    return refuse("iterations", std::to_string(state.iterations), std::to_string(run.iterations));
  }
  if (state.envs.size() != run.envs) {
    return refuse("envs", std::to_string(state.envs.size()) + " environments", std::to_string(run.envs));
  }
  if (!(state.policy == run.policy)) {
    const auto shape = [](const PolicyShape& p) {
      return std::to_string(p.observations) + " observations, " + std::to_string(p.actions) + " actions, " +
             std::to_string(p.choices) + " choices, hidden " + nlohmann::json(p.hidden).dump();
    };
    return refuse("policy", shape(state.policy), shape(run.policy));
  }
  const configs::RlSpec& own = run.specs.front();
  configs::RlSpec saved_spec = state.rl;
  saved_spec.ppo.threads = own.ppo.threads;  // the speed alone
  const nlohmann::json saved_rl = configs::rl_to_json(saved_spec), rl = configs::rl_to_json(own);
  if (saved_rl != rl) {
    return Error{file + ": rl." + *configs::first_difference(saved_rl, rl) +
                 ": the checkpoint was trained with other settings; resume with the run's own config"};
  }
  if (!std::equal(state.train_also_rl.begin(), state.train_also_rl.end(), run.specs.begin() + 1, run.specs.end(),
                  [](const configs::RlSpec& a, const configs::RlSpec& b) {
                    return configs::rl_to_json(a) == configs::rl_to_json(b);
                  })) {
    return Error{file + ": train_also_rl: the checkpoint was trained on other recipes besides its own; resume with "
                        "the run's own config"};
  }
  if (state.normalize_observations != own.ppo.normalize_observations) {
    return refuse("normalize_observations", state.normalize_observations ? "true" : "false",
                  own.ppo.normalize_observations ? "true" : "false");
  }
  if (state.observation_clip != own.ppo.observation_clip) {
    return refuse("observation_clip", number_text(state.observation_clip), number_text(own.ppo.observation_clip));
  }
  const std::uint64_t per_iteration = run.decisions_per_iteration;
  if (state.decisions != per_iteration * state.iteration) {
    return Error{file + ": decisions: expected " + std::to_string(per_iteration * state.iteration) + " after " +
                 std::to_string(state.iteration) + " iterations, got " + std::to_string(state.decisions)};
  }
  return Ok{};
}

Expected<std::vector<EnvCursor>> resumed_cursors(const CheckpointState& state, std::span<const ScalingEnv* const> envs,
                                                 std::size_t first, std::size_t steps, const std::string& file) {
  std::vector<EnvCursor> cursors;
  for (std::size_t i = 0; i < envs.size(); ++i) {
    const CheckpointEnv& env = state.envs[first + i];
    const std::string where = file + ": envs[" + std::to_string(first + i) + "]";
    // Training resets without options (each episode's window, rate scale and delay come
    // from the environment's generator), so a checkpoint naming any was not written by it.
    if (env.cursor.options != ResetOptions{}) {
      return Error{where + ".options: expected {} (training draws each episode's window, rate scale and delay itself)"};
    }
    const ScalingEnv& own = *envs[i];
    if (const Status fits = own.check_cursor(env.cursor); !fits) return Error{where + ": " + fits.error().message};
    // Where the episode stands follows from the iterations played: every environment steps
    // `steps` times an iteration and resets (in the same step) when its fixed-length
    // episode ends. A list that says otherwise would resume a different trajectory.
    const std::uint64_t played = static_cast<std::uint64_t>(steps) * state.iteration % own.steps_per_episode();
    if (env.cursor.actions.size() != played * own.action_size()) {
      return Error{where + ".actions: expected " + std::to_string(played) + " steps of " +
                   std::to_string(own.action_size()) + " entries (" + std::to_string(state.iteration) +
                   " iterations of " + std::to_string(steps) + " steps in episodes of " +
                   std::to_string(own.steps_per_episode()) + "), got " + std::to_string(env.cursor.actions.size()) +
                   " entries"};
    }
    cursors.push_back(env.cursor);
  }
  return cursors;
}

}  // namespace meshsim::rl

#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "rl/env/evaluation.hpp"
#include "sim/engine/expected.hpp"
#include "tools/runs/evaluation_options.hpp"

namespace meshsim::cli {

// A policy under evaluation, however it acts: a checkpoint of `meshsim train`
// (run_eval_command) or a Python callable (meshsim.evaluate). Without LibTorch, so the
// Python package runs the same protocol.
struct EvalPolicy {
  std::string name;    // the policy column of its rows: "ppo", "ppo:<run folder>", "python"
  std::string source;  // where it came from, for messages (a checkpoint folder)
  // The rl spec it was trained with: its actions and observations mean what this says,
  // and it replaces the recipe's; unset: the recipe's own.
  std::optional<configs::RlSpec> trained_spec;
  // The other recipes' rl specs it trained on (rl.train_also): where the evaluated
  // recipe's own plays like one of these, that one replaces the recipe's instead.
  std::vector<configs::RlSpec> train_also_specs;
  // The sizes it acts on, checked against the scenario's environment; unset: that
  // environment's (a policy written for it, as meshsim.evaluate's).
  std::optional<std::size_t> observation_size, action_size;
  // A fresh actor for one evaluated window (windows play in parallel; an actor may keep
  // buffers or state).
  std::function<Expected<rl::Actor>()> make_actor;
};

// `meshsim eval`'s protocol and outputs (eval_command.hpp) for `policies` (none: the
// baselines only); options.policies only names the recipe (the first one's run folder).
int run_evaluation(const EvalCommandOptions& options, std::vector<EvalPolicy> policies, std::ostream& out,
                   std::ostream& err);

}  // namespace meshsim::cli

#include "tools/cli/eval_command.hpp"

#include <filesystem>
#include <memory>
#include <ostream>

#include "rl/ppo/policy_runner.hpp"
#include "tools/cli/commands.hpp"
#include "tools/runs/evaluation_run.hpp"

namespace meshsim::cli {

int run_eval_command(const EvalCommandOptions& options, std::ostream& out, std::ostream& err) {
  namespace fs = std::filesystem;
  std::vector<EvalPolicy> policies;
  for (const std::string& path : options.policies) {
    auto runner = rl::PolicyRunner::load(path);
    if (!runner) return fail(err, runner.error().message, kExitBadInput);
    EvalPolicy p;
    p.source = path;
    p.name = options.policies.size() == 1 ? "ppo" : "ppo:" + fs::path(path).parent_path().filename().string();
    p.trained_spec = (*runner)->trained_spec();
    p.train_also_specs = (*runner)->train_also_specs();
    p.observation_size = (*runner)->observation_size();
    p.action_size = (*runner)->action_size();
    // A runner per window: each keeps its buffers; loaded again from the same folder.
    p.make_actor = [path]() -> Expected<rl::Actor> {
      auto loaded = rl::PolicyRunner::load(path);
      if (!loaded) return loaded.error();
      std::shared_ptr<rl::PolicyRunner> r = std::move(*loaded);
      return rl::Actor([r](std::span<const float> obs, std::span<float> action) { r->act(obs, action); });
    };
    policies.push_back(std::move(p));
  }
  return run_evaluation(options, std::move(policies), out, err);
}

}  // namespace meshsim::cli

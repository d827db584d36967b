"""A notebook-style tour of meshsim from Python (cells marked "# %%", so VS Code and
Jupytext open it as a notebook; `python3 experiments/notebook/meshsim_tour.py` runs it
top to bottom).

1. Replay the Azure 2023 conversation trace under two configs and compare them.
2. Plot TTFT distributions and instances over time (matplotlib, to meshsim-tour.png).
3. Train a scaling policy for a few iterations through meshsim.VectorEnv with a plain
   PyTorch policy gradient (REINFORCE with a per-step baseline).

Needs the package on PYTHONPATH (PYTHONPATH=build/python after ./tools/test.sh) and
Debian's python3-numpy, python3-matplotlib and python3-torch; the Azure trace is read
from ../shared/traces (without it the bundled default workload, fitted to that trace,
is replayed instead).
"""
# %%
import sys
from pathlib import Path

import numpy as np

import meshsim

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT.parent / "shared" / "traces" / "azure2023_conv.csv"


def compare_configs(trace=None):
    """The default scenario (4 mixed instances) against the same GPUs split into
    prompt and token pools, on one trace: {name: meshsim.Replay}."""
    configs = {
        "4 mixed": {},
        "2 prompt + 2 token": {"serving.start_state": [{"tag": "prompt", "count": 2}, {"tag": "token", "count": 2}]},
    }
    return {name: meshsim.replay(trace=trace, frames=False, overrides=o) for name, o in configs.items()}


def policy_gradient(envs, iterations, seed=0, lr=3e-3):
    """REINFORCE on `envs` (whole episodes, all environments truncating together): the
    mean episode return of each iteration."""
    import torch

    torch.manual_seed(seed)
    n_obs = envs.single_observation_space.shape[0]
    choices = int(envs.single_action_space.nvec[0])
    policy = torch.nn.Sequential(torch.nn.Linear(n_obs, 64), torch.nn.Tanh(), torch.nn.Linear(64, choices))
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    # Observations are counts and rates of different sizes: scale by the first batch.
    obs, _ = envs.reset(seed=seed)
    mean, std = obs.mean(axis=0), obs.std(axis=0) + 1.0
    history = []
    for _ in range(iterations):
        log_probs, rewards = [], []
        done = False
        while not done:
            logits = policy(torch.as_tensor((obs - mean) / std, dtype=torch.float32))
            dist = torch.distributions.Categorical(logits=logits)
            action = dist.sample()
            obs, reward, terminated, truncated, _ = envs.step(action.numpy()[:, None])
            log_probs.append(dist.log_prob(action))
            rewards.append(torch.as_tensor(reward, dtype=torch.float32))
            done = bool(np.all(terminated | truncated))
        rewards = torch.stack(rewards)  # [steps, envs]
        to_go = rewards.flip(0).cumsum(0).flip(0)
        advantage = (to_go - to_go.mean(dim=1, keepdim=True)) / (to_go.std() + 1e-8)
        loss = -(torch.stack(log_probs) * advantage).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(float(rewards.sum(0).mean()))
    return history


# %% [markdown]
# ## 1. Two configs on the Azure trace

# %%
if __name__ == "__main__":
    trace = str(TRACE) if TRACE.exists() else None
    if trace is None:
        print(f"{TRACE} is absent: replaying the bundled default workload instead", file=sys.stderr)
    runs = compare_configs(trace)
    for name, run in runs.items():
        s = run.summary
        print(f"{name:20s} SLO {100 * s['slo']['attainment']:.2f}%  TTFT p50 {s['latency_s']['ttft']['p50']:.3f} s"
              f"  p99 {s['latency_s']['ttft']['p99']:.3f} s  {s['cost']['gpu_hours']:.1f} GPU-h")

# %% [markdown]
# ## 2. Plots

# %%
if __name__ == "__main__":
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (cdf, load) = plt.subplots(1, 2, figsize=(11, 4))
    for name, run in runs.items():
        ttft = np.sort(run.requests["ttft_s"][~np.isnan(run.requests["ttft_s"])])
        cdf.plot(ttft, np.arange(1, len(ttft) + 1) / len(ttft), label=name)
        load.plot(run.timeseries["end_s"], run.timeseries["running"], label=name)
    cdf.set(xscale="log", xlabel="TTFT (s)", ylabel="fraction of requests", title="TTFT")
    load.set(xlabel="simulated time (s)", ylabel="requests being served", title="load")
    cdf.legend()
    fig.tight_layout()
    fig.savefig("meshsim-tour.png", dpi=110)
    print("wrote meshsim-tour.png")

# %% [markdown]
# ## 3. A few policy-gradient iterations through VectorEnv

# %%
if __name__ == "__main__":
    envs = meshsim.VectorEnv(num_envs=16, rl__episode_s=600, rl__decision_interval_s=30)
    for i, mean_return in enumerate(policy_gradient(envs, iterations=20)):
        print(f"iteration {i:2d}: mean episode return {mean_return:8.3f}")

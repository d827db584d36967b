#!/usr/bin/env python3
"""Stable-Baselines3's PPO trained on meshsim's scaling environment, as a Python RL user
would: the environment by its Gymnasium id, SB3's vectorised environments and running
normalisation, no meshsim-specific glue. Prints the deterministic policy's mean episode
return before and after training, and saves the model (and its normaliser) and SB3's
training curve (progress.csv) to --out.

  PYTHONPATH=build/python .venv/bin/python experiments/rl/sb3_ppo.py --timesteps 200000 --out runs/sb3

Options are the recipe's (configs/scenarios/rl-train.json) with --set key=value overrides
(rl.episode_s=600). tools/setup.sh installs stable-baselines3 and torch's CPU build into
.venv; the test runs it at a small size (tests/python/test_sb3_example.py).
"""
import argparse
import json
import os

import gymnasium as gym
import numpy as np

import meshsim  # registers meshsim/Autoscaling-v0


def overrides_of(pairs):
    """["rl.episode_s=600", ...] as {"rl__episode_s": 600}: values are JSON when they parse."""
    out = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        try:
            out[key.replace(".", "__")] = json.loads(value)
        except json.JSONDecodeError:
            out[key.replace(".", "__")] = value
    return out


def mean_return(model, normalizer, overrides, episodes, seed):
    """The deterministic policy's mean undiscounted return over `episodes` episodes."""
    env = gym.make("meshsim/Autoscaling-v0", **overrides)
    returns = []
    for e in range(episodes):
        obs, _ = env.reset(seed=seed + e)
        total, done = 0.0, False
        while not done:
            action, _ = model.predict(normalizer.normalize_obs(obs[None, :]), deterministic=True)
            obs, reward, terminated, truncated, _ = env.step(action[0])
            total += reward
            done = terminated or truncated
        returns.append(total)
    return float(np.mean(returns))


def train(timesteps, seed, n_envs, overrides, out):
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import VecNormalize

    # make_vec_env asks for an rgb_array render mode unless told otherwise; meshsim draws text.
    made = make_vec_env("meshsim/Autoscaling-v0", n_envs=n_envs, seed=seed, env_kwargs=dict(overrides, render_mode=None))
    envs = VecNormalize(made, gamma=0.98)
    model = PPO("MlpPolicy", envs, n_steps=64, batch_size=256, n_epochs=10, gamma=0.98, gae_lambda=0.95,
                learning_rate=3e-4, seed=seed, device="cpu", verbose=0)
    # SB3's training curve as --out/progress.csv (left to itself, SB3 makes a folder in /tmp).
    model.set_logger(configure(out, ["csv"]))
    untrained = mean_return(model, envs, overrides, 4, 1000)
    model.learn(total_timesteps=timesteps)
    envs.training = False
    return model, envs, untrained, mean_return(model, envs, overrides, 4, 1000)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timesteps", type=int, default=200_000)
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a recipe override")
    parser.add_argument("--out", default="runs/sb3")
    args = parser.parse_args()
    overrides = overrides_of(args.set)
    os.makedirs(args.out, exist_ok=True)
    model, normalizer, before, after = train(args.timesteps, args.seed, args.envs, overrides, args.out)
    model.save(os.path.join(args.out, "model.zip"))
    normalizer.save(os.path.join(args.out, "normalizer.pkl"))
    print(f"sb3 PPO on meshsim/Autoscaling-v0: mean episode return {before:.3f} untrained, {after:.3f} after "
          f"{args.timesteps} steps; model in {args.out}")
    return before, after


if __name__ == "__main__":
    main()

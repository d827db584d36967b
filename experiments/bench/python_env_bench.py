#!/usr/bin/env python3
"""Python overhead of meshsim.VectorEnv (issue 11): VectorEnv.step from Python against the
same steps from C++ alone (the native module's time_native_steps), in one process, on
the light configuration of env_bench (the default scenario's workload at 2% of its rate,
600 s episodes of 15 s decisions). Goal: ratio <= 2 for 32 environments.

  PYTHONPATH=build/python /usr/bin/python3 experiments/bench/python_env_bench.py [--envs 32] [--steps 2000]
"""
import argparse
import time

import numpy as np

import meshsim

LIGHT = {"workload.rate_scale": 0.02, "workload.window.end_s": 7200, "rl.episode_s": 600}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=32)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    envs = meshsim.VectorEnv(num_envs=args.envs, config=meshsim.default_scenario_path(), threads=args.threads,
                             overrides=LIGHT)
    envs.reset(seed=1)
    actions = np.zeros(envs.action_space.shape, dtype=np.float32)
    best_py = best_native = float("inf")
    for _ in range(args.repeats):  # alternate, best of each: the other core's noise hits both
        start = time.perf_counter()
        for _ in range(args.steps):
            envs.step(actions)
        best_py = min(best_py, time.perf_counter() - start)
        best_native = min(best_native, envs._envs.time_native_steps(actions, args.steps))
    decisions = args.envs * args.steps
    print(f"VectorEnv N={args.envs}, {envs.threads} threads, {args.steps} steps:")
    print(f"  from Python  {decisions / best_py:10.0f} decisions/s  ({best_py / args.steps * 1e6:.1f} us a step)")
    print(f"  C++ alone    {decisions / best_native:10.0f} decisions/s  ({best_native / args.steps * 1e6:.1f} us a step)")
    print(f"  ratio {best_py / best_native:.2f} (goal <= 2)")


if __name__ == "__main__":
    main()

"""A Python RL user's loop: the tour's PyTorch policy gradient (experiments/notebook)
against meshsim.VectorEnv learns, i.e. its mean episode return goes up."""
import importlib.util

import numpy as np
import pytest

import meshsim

torch = pytest.importorskip("torch")


def load_tour(repo):
    spec = importlib.util.spec_from_file_location("meshsim_tour", repo / "experiments" / "notebook" / "meshsim_tour.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_pytorch_policy_gradient_improves_the_reward(repo):
    tour = load_tour(repo)
    envs = meshsim.VectorEnv(num_envs=16, rl__episode_s=600, rl__decision_interval_s=30)
    history = tour.policy_gradient(envs, iterations=30, seed=1)
    first, last = np.mean(history[:5]), np.mean(history[-5:])
    # Returns are negative costs: the last iterations cost clearly less than the first.
    assert last > first + 0.2 * abs(first), history

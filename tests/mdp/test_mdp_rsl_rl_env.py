"""The rsl_rl VecEnv adapter: rsl_rl's own OnPolicyRunner trains a real hover env, and the
result exports through our ONNX exporter with the env's contract."""

import subprocess
import sys

import numpy as np
import pytest
import torch

rsl_rl = pytest.importorskip('rsl_rl')

from rsl_rl.env import VecEnv  # noqa: E402
from rsl_rl.runners import OnPolicyRunner  # noqa: E402
from tensordict import TensorDict  # noqa: E402

from sim2real.deploy.runtime.policy import PolicyRunner  # noqa: E402
from sim2real.export.onnx_policy import INPUT_NAME, OUTPUT_NAME, onnx_session  # noqa: E402
from sim2real.export.rsl_rl_policy import export_rsl_rl_policy  # noqa: E402
from sim2real.mdp.rsl_rl_env import RslRlVecEnv  # noqa: E402
from sim2real.onnx_io import read_contract  # noqa: E402

NUM_ENVS = 4
STEPS = 5
"""Policy steps per episode of the short hover env."""


@pytest.fixture
def vec(make_env):
    """The adapter over a hover env of 4 envs whose episodes time out after 5 steps."""
    def short(cfg):
        cfg.episode_length_s = STEPS * cfg.physics_dt_s * cfg.decimation
    return RslRlVecEnv(make_env(num_envs=NUM_ENVS, edit=short))


def _train_cfg() -> dict:
    """A tiny rsl_rl 5.5 PPO configuration (actor on 'policy', critic on 'critic')."""
    mlp = {'class_name': 'MLPModel', 'hidden_dims': [32, 32], 'activation': 'elu',
           'obs_normalization': True}
    return {
        'num_steps_per_env': 16, 'save_interval': 1, 'check_for_nan': True,
        'obs_groups': {'actor': ['policy'], 'critic': ['critic']},
        'algorithm': {'class_name': 'PPO', 'num_learning_epochs': 2, 'num_mini_batches': 2,
                      'learning_rate': 1e-3, 'schedule': 'adaptive', 'desired_kl': 0.01},
        'actor': {**mlp, 'distribution_cfg': {'class_name': 'GaussianDistribution',
                                              'init_std': 1.0}},
        'critic': mlp,
    }


def test_adapter_follows_the_vec_env_protocol(vec):
    """TensorDict obs with 'policy' (4, 49) and 'critic' (4, 62); sizes, device, lengths."""
    assert isinstance(vec, VecEnv)
    obs = vec.get_observations()
    assert isinstance(obs, TensorDict) and obs.batch_size == torch.Size([NUM_ENVS])
    assert obs['policy'].shape == (NUM_ENVS, 49) and obs['critic'].shape == (NUM_ENVS, 62)
    assert (vec.num_envs, vec.num_actions, vec.max_episode_length) == (NUM_ENVS, 4, STEPS)
    assert vec.device == torch.device('cpu') and vec.unwrapped is vec.env
    assert vec.episode_length_buf.tolist() == [0] * NUM_ENVS


def test_step_reports_dones_time_outs_and_episode_logs(vec):
    """Steps 1-4: no dones, empty log; step 5: every env done by time-out, log means."""
    zeros = torch.zeros(NUM_ENVS, 4)
    for _ in range(STEPS - 1):
        obs, rewards, dones, extras = vec.step(zeros)
        assert rewards.shape == dones.shape == (NUM_ENVS,)
        assert not dones.any() and not extras['time_outs'].any() and extras['log'] == {}
    obs, rewards, dones, extras = vec.step(zeros)
    assert dones.tolist() == [1] * NUM_ENVS and extras['time_outs'].tolist() == [True] * 4
    assert extras['log']['episode/length_s'] == pytest.approx(STEPS * 0.01)
    assert extras['log']['termination/time_out'] == 1.0
    assert torch.equal(vec.get_observations()['policy'], obs['policy'])


def test_episode_length_buf_is_writable(vec):
    """Writing lengths [3, 0, 0, 0] (as rsl_rl's random start does) ends env 0 two steps on."""
    vec.episode_length_buf = torch.tensor([3, 0, 0, 0])
    vec.step(torch.zeros(NUM_ENVS, 4))
    _, _, dones, extras = vec.step(torch.zeros(NUM_ENVS, 4))
    assert dones.tolist() == [1, 0, 0, 0] and extras['time_outs'].tolist()[0]
    assert vec.episode_length_buf.tolist() == [0, 2, 2, 2]
    with pytest.raises(ValueError, match=r'episode_length_buf.*\(4,\)'):
        vec.episode_length_buf = torch.zeros(3, dtype=torch.long)


def test_env_stays_steppable_after_inference_mode(make_env):
    """Stepped in inference_mode (as OnPolicyRunner does), the env still steps outside it."""
    vec = RslRlVecEnv(make_env('quadruped-flat', num_envs=2, edit=lambda c: setattr(
        c, 'episode_length_s', STEPS * c.physics_dt_s * c.decimation)))
    zeros = torch.zeros(2, 12)
    with torch.inference_mode():
        for _ in range(STEPS + 2):
            vec.step(zeros)
    ends = sum(vec.step(zeros)[2] for _ in range(STEPS))   # lengths 2 -> 5 -> 0 -> 2
    assert ends.tolist() == [1, 1]
    assert vec.reset(seed=1)['policy'].shape == (2, 105)


def test_on_policy_runner_trains_and_exports_with_the_contract(vec, make_env, tmp_path):
    """OnPolicyRunner trains 3 iterations; the export carries the contract, ort == torch."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from sim2real.evaluate import check_contract, onnx_policy
    from sim2real.mdp.contract import contract_from_env
    torch.manual_seed(0)
    runner = OnPolicyRunner(vec, _train_cfg(), log_dir=str(tmp_path / 'log'), device='cpu')
    runner.logger.git_status_repos.clear()   # no git diff of this checkout in the log
    before = [p.clone() for p in runner.alg.get_policy().parameters()]
    runner.learn(num_learning_iterations=3, init_at_random_ep_len=True)
    after = list(runner.alg.get_policy().parameters())
    assert any(not torch.equal(x, y) for x, y in zip(before, after))
    assert sorted(p.name for p in (tmp_path / 'log').glob('model_*.pt')) == [
        'model_0.pt', 'model_1.pt', 'model_2.pt']
    events = EventAccumulator(str(tmp_path / 'log'))
    events.Reload()
    assert len(events.Scalars('episode/return')) == 3
    assert len(events.Scalars('termination/time_out')) == 3

    policy = runner.get_inference_policy()
    path, max_abs = export_rsl_rl_policy(policy, vec, tmp_path / 'policy.onnx')
    assert max_abs <= 1e-5
    contract = read_contract(path)
    assert contract.task == 'quadrotor-hover' and contract.action.size == 4
    assert contract.observation_size == vec.env.obs_dims['policy'] == 49
    PolicyRunner(path).check_sizes(contract)   # the deploy runtime loads it as our own
    act, stored = onnx_policy(path)   # eval's loader (digest checked) and contract check
    check_contract(stored, contract_from_env(make_env(num_envs=1)))
    obs = vec.get_observations()
    with torch.no_grad():
        expected = policy(obs).numpy()
    got = onnx_session(path).run([OUTPUT_NAME], {INPUT_NAME: obs['policy'].numpy()})[0]
    np.testing.assert_allclose(got, expected, atol=1e-5)
    np.testing.assert_allclose(act(obs['policy']).numpy(), expected, atol=1e-5)
    mean = policy.obs_normalizer.mean
    assert not torch.allclose(mean, torch.zeros_like(mean))   # trained statistics, in the graph


def test_export_refuses_an_actor_reading_other_groups(vec):
    """An actor on 'policy' + 'critic' cannot deploy: refused naming the groups."""
    from rsl_rl.models import MLPModel
    from sim2real.contract import ContractError
    obs = vec.get_observations()
    actor = MLPModel(obs, {'actor': ['policy', 'critic']}, 'actor', 4, hidden_dims=[8])
    with pytest.raises(ContractError, match=r"\['policy', 'critic'\].*only \['policy'\]"):
        export_rsl_rl_policy(actor, vec, '/nonexistent/policy.onnx')


def test_default_path_never_imports_rsl_rl():
    """Importing the env, the Gymnasium wrapper, training and export leaves rsl_rl unloaded."""
    code = ('import sys, sim2real.mdp.env, sim2real.mdp.gym_env, sim2real.training, '
            'sim2real.export.onnx_policy, sim2real.export.rsl_rl_policy; '
            'print(sorted(m for m in ("rsl_rl", "tensordict") if m in sys.modules))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == '[]'

"""Our tasks in Isaac Lab 3.0 (optional; run in an Isaac Lab venv, Python 3.12).

Our side (`sim2real.interop.isaaclab_task`) writes a run directory's task file: the task's
env config, contract and training settings as plain data. Here, `python -m
sim2real.isaaclab.train RUN_DIR` builds the task's Isaac Lab manager-based env from that file
(the robot folder's builder, named by its TaskSpec.isaaclab_env), trains it with rsl_rl and
writes the run as Isaac Lab's own train script does; `sim2real import-isaaclab` then turns
the run into a policy.onnx with our contract. Nothing here imports our MuJoCo code: an Isaac
Lab venv holds MuJoCo 3 for Newton, ours needs MuJoCo 4.
"""

"""Packaging for sim2real: a pip-installable Python distribution and a ROS 2 ament_python package.

Layout (one top-level import name, ``sim2real``):

    sim2real/  ->  sim2real            core: contract, sim, mdp, rl, export, cli
    tasks/     ->  sim2real.tasks      task definitions (quadrotor, ...)
    deploy/    ->  sim2real.deploy     ROS-free runtime and thin rclpy nodes

Subpackages are discovered, never listed by hand: any directory below one of the three roots
that holds a ``.py`` file at some depth is shipped (``__init__.py`` or not), so a new
``sim2real/foo/`` or ``tasks/bar/`` installs without touching this file, and an empty
directory that is still being written (say ``tasks/quadrotor/``) is skipped.

Non-Python files: ``launch/``, ``urdf/`` and ``config/`` are installed as ``data_files`` into
``<prefix>/share/sim2real/{launch,urdf,config}`` (the ROS 2 convention; colcon, ``pip install .``
and ``pip install -e .`` all honour data_files), next to ``share/sim2real/package.xml`` and the
ament index marker ``share/ament_index/resource_index/packages/sim2real``. The URDFs are NOT
copied into the wheel a second time as package data: at run time they are found next to the
source tree (editable install or checkout: ``<repo>/urdf``) or under the install prefix
(``<prefix>/share/sim2real/urdf``), which is what ``sim2real.assets.urdf_path`` searches.
"""

import os

from setuptools import find_namespace_packages, setup

PACKAGE_NAME = 'sim2real'
VERSION = '0.1.0'  # keep equal to <version> in package.xml (tests/test_packaging.py checks)

HERE = os.path.dirname(os.path.abspath(__file__))

# import name -> source directory (relative to this file, as setuptools requires)
PACKAGE_ROOTS = {
    'sim2real': 'sim2real',
    'sim2real.tasks': 'tasks',
    'sim2real.deploy': 'deploy',
}

# directories installed under share/sim2real/<name>, recursively (globs may be empty)
SHARE_DIRS = ('launch', 'urdf', 'config')


def _has_python(path):
    """Return True if the directory ``path`` holds a ``.py`` file at any depth."""
    for _dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = [d for d in dirnames if d.isidentifier()]
        if any(f.endswith('.py') for f in filenames):
            return True
    return False


def discover_packages():
    """List every import package below PACKAGE_ROOTS, prefixed with its import name."""
    packages = []
    for name, directory in PACKAGE_ROOTS.items():
        root = os.path.join(HERE, directory)
        packages.append(name)
        for sub in sorted(find_namespace_packages(where=root)):
            if not all(part.isidentifier() for part in sub.split('.')):
                continue
            if _has_python(os.path.join(root, *sub.split('.'))):
                packages.append(f'{name}.{sub}')
    return packages


def _check_no_shadowing():
    """Refuse to build if sim2real/tasks or sim2real/deploy exist beside the mapped ones."""
    for name, directory in PACKAGE_ROOTS.items():
        if name == PACKAGE_NAME:
            continue
        shadow = os.path.join(HERE, *name.split('.'))
        if os.path.isdir(shadow) and _has_python(shadow):
            raise SystemExit(
                f'{shadow} would shadow {directory}/ (installed as {name}); '
                f'put that code in {directory}/ instead')


def share_data_files():
    """Return data_files entries for launch/, urdf/ and config/ (recursive, no hidden files)."""
    entries = []
    for share_dir in SHARE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(HERE, share_dir)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith('.'))
            rel_dir = os.path.relpath(dirpath, HERE)
            files = [
                os.path.join(rel_dir, f) for f in sorted(filenames)
                if not f.startswith('.') and not f.endswith(('.pyc', '~'))
            ]
            if files:
                entries.append((os.path.join('share', PACKAGE_NAME, rel_dir), files))
    return entries


def _read(rel_path):
    """Return the text of a file next to this one."""
    with open(os.path.join(HERE, rel_path), encoding='utf-8') as f:
        return f.read()


_check_no_shadowing()

setup(
    name=PACKAGE_NAME,
    version=VERSION,
    description=(
        'Train robot control policies in MuJoCo, export them to ONNX with their '
        'observation/action contract, and run them on robots through a ROS 2 node.'
    ),
    long_description=_read('README.md'),
    long_description_content_type='text/markdown',
    license='Apache-2.0',
    maintainer='sim2real maintainers',
    maintainer_email='maintainers@sim2real.invalid',
    python_requires='>=3.10',
    packages=discover_packages(),
    package_dir=dict(PACKAGE_ROOTS),
    # small config files that live inside the import packages (task YAML and the like)
    package_data={'': ['*.yaml', '*.yml', '*.json']},
    data_files=[
        ('share/ament_index/resource_index/packages', [f'resource/{PACKAGE_NAME}']),
        (f'share/{PACKAGE_NAME}', ['package.xml']),
    ] + share_data_files(),
    zip_safe=False,
    install_requires=[
        # the ROS-free core: contract, ONNX export/eval runtime
        'numpy',
        'pyyaml',
        'onnx',
        'onnxruntime',
        'array-api-compat',
        'tabulate',  # the CLI's tables (eval, hil, robustness, list, inspect)
    ],
    extras_require={
        'train': [
            # a range, not a pin: install torch==2.13.0 (CPU wheel) first, as the Makefile does,
            # or pip resolves a multi-GB CUDA build
            'torch>=2.5,<2.15',
            'mujoco>=4.0,<5',
            'tensorboard',
            'tqdm',
            'matplotlib',
            'gymnasium>=1.1',  # AutoresetMode (sim2real/mdp/gym_env.py)
        ],
        'ros': [
            # ROS 2 Jazzy as wheels from PyPI, for running the nodes without /opt/ros
            'ros-jazzy-rclpy',
            'ros-jazzy-sensor-msgs',
            'ros-jazzy-std-msgs',
            'ros-jazzy-geometry-msgs',
            'ros-jazzy-nav-msgs',
            'ros-jazzy-std-srvs',
            'ros-jazzy-diagnostic-msgs',
            'ros-jazzy-rmw-fastrtps-cpp',
            # policy_node decodes sensor messages from their CDR bytes with rosbags'
            # generated deserializers (3-5x cheaper than rclpy's Python message classes)
            'rosbags>=0.10,<1',
        ],
        'deploy': [
            'pin',  # Pinocchio (kinematics/dynamics on the robot side)
            # the node's flight recorder and `sim2real replay`: MCAP files that ros2 bag,
            # Foxglove and PlotJuggler open; ROS 2 CDR read without ROS
            'mcap>=1.2,<2',
            'mcap-ros2-support>=0.5,<1',
            'orjson>=3.9',   # the recorder's JSON channels, encoded in C off the loop's budget
        ],
        'gpu': [
            # backend mjwarp (sim2real/sim/mjwarp.py); runs on Warp's CPU device too
            'mujoco-warp>=4.0,<5',
            'warp-lang>=1.19',
        ],
        'ray': [
            # `sim2real train --workers N`: rollout workers as Ray actors (sim2real/rl/
            # ray_sampler.py); plain ray, no dashboard; nothing imports it without --workers
            'ray>=2.40,<3',
        ],
        'rsl_rl': [
            # sim2real/mdp/rsl_rl_env.py: rsl_rl's OnPolicyRunner on our envs (brings tensordict)
            'rsl-rl-lib>=5.5,<6',
        ],
        'dev': [
            'pytest',
            'hypothesis',
            'flake8',
            'flake8-quotes',
            'stable-baselines3',
            'rsl-rl-lib>=5.5,<6',  # bench/ppo_update.py's reference PPO; the adapter's tests
            'onnxscript',  # torch.onnx.export's dynamo exporter needs it
            # the documentation site (docs/, mkdocs.yml), built strict by `make test`
            'mkdocs>=1.6,<2',
            'mkdocs-material>=9.5,<10',
            'mkdocs-gen-files>=0.5,<1',
            # tests/test_packaging.py builds with --no-build-isolation
            'setuptools>=68',
            'wheel',
        ],
    },
    entry_points={
        'console_scripts': [
            'sim2real = sim2real.cli.main:main',
            'policy_node = sim2real.deploy.policy_node:main',
            'sim_bridge = sim2real.deploy.sim_bridge:main',
        ],
    },
)

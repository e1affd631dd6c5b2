"""The state protocol of env components, for runs that resume exactly where they stopped.

Every stateful piece of an environment (simulation backend, scene, actuators, action and
command terms, managers, metrics, curricula) gives ``state_dict()``, everything that decides
its future steps as plain data, and ``load_state_dict(state)``, which writes such a state
back into a component built from the same configuration. ``Stateful`` derives both from
three declarations of attribute names:

- ``STATE``: copied into the state: arrays, random generators (as their state), dicts, lists
  and tuples of them, numbers and strings.
- ``CHILDREN``: components (or dicts of them, or None) whose own state nests under the name.
- ``NOT_STATE``: attributes that hold arrays, generators or components but are not this
  component's state: constants fixed by the configuration, views or caches of other
  attributes, references to other components.

``state_dict()`` refuses (StateError, naming the component and the attribute) an attribute
that holds an array, a generator or a component and is in none of the three, so a buffer
added without declaring it fails the first save instead of resuming with a stale value.
Python numbers and strings that change while stepping cannot be told from settings: list
them in STATE. Loading writes arrays in place, so views of them stay valid.

Array-API code (torch in training, numpy in the HIL bridge, which never saves a state).
"""

from __future__ import annotations

from typing import Any


class StateError(ValueError):
    """A state does not fit its component (missing or unexpected entries, other shapes or
    dtypes), or a component cannot say what its state is."""


def _is_array(value: Any) -> bool:
    """Whether value is a torch tensor or a numpy array (anything with shape and dtype)."""
    return hasattr(value, 'shape') and hasattr(value, 'dtype') and hasattr(value, 'ndim')


def _is_generator(value: Any) -> bool:
    """Whether value is a torch.Generator or a numpy Generator."""
    return (callable(getattr(value, 'get_state', None)) and callable(
        getattr(value, 'set_state', None))) or hasattr(value, 'bit_generator')


def _needs_declaring(value: Any, depth: int = 0) -> bool:
    """Whether value holds an array, a generator or a component (searching containers)."""
    if _is_array(value) or _is_generator(value) or callable(getattr(value, 'state_dict', None)):
        return True
    if depth < 4 and isinstance(value, dict):
        return any(_needs_declaring(v, depth + 1) for v in value.values())
    if depth < 4 and isinstance(value, (list, tuple)):
        return any(_needs_declaring(v, depth + 1) for v in value)
    return False


def check_declared(owner: Any, declared: tuple[str, ...]) -> None:
    """Raise StateError for an attribute of owner that needs declaring and is not declared."""
    for name, value in vars(owner).items():
        if name not in declared and _needs_declaring(value):
            raise StateError(
                f'{type(owner).__name__}.{name} holds an array, generator or component that '
                'is not declared in STATE, CHILDREN or NOT_STATE, so a resumed run would not '
                'restore it (see sim2real/sim/state.py)')


def copy_value(value: Any) -> Any:
    """A copy of a STATE attribute as plain data: arrays cloned, generators as their state."""
    if _is_array(value):
        return value.clone() if hasattr(value, 'clone') else value.copy()
    if _is_generator(value):
        return value.get_state() if hasattr(value, 'get_state') else dict(
            value.bit_generator.state)
    if isinstance(value, dict):
        return {key: copy_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(copy_value(item) for item in value)
    return value


def load_array(current, saved, where: str):
    """Copy saved into the array current in place, after checking shape and dtype."""
    if not _is_array(saved):
        raise StateError(f'{where}: the state holds {type(saved).__name__}, not an array')
    if tuple(saved.shape) != tuple(current.shape) or str(saved.dtype) != str(current.dtype):
        raise StateError(f'{where}: the state holds shape {tuple(saved.shape)} {saved.dtype}, '
                         f'this env {tuple(current.shape)} {current.dtype}')
    if hasattr(current, 'copy_'):
        current.copy_(saved)
    else:
        current[...] = saved
    return current


def load_value(current: Any, saved: Any, where: str) -> Any:
    """The value of an attribute after loading saved into it (arrays and dicts in place)."""
    if _is_array(current):
        return load_array(current, saved, where)
    if _is_generator(current):
        if hasattr(current, 'set_state'):
            current.set_state(saved.cpu() if hasattr(saved, 'cpu') else saved)
        else:
            current.bit_generator.state = saved
        return current
    if isinstance(current, dict):
        if not isinstance(saved, dict):
            raise StateError(f'{where}: the state holds {type(saved).__name__}, not a dict')
        for key in [k for k in current if k not in saved]:
            del current[key]
        for key, item in saved.items():
            current[key] = (load_value(current[key], item, f'{where}[{key!r}]')
                            if key in current else copy_value(item))
        return current
    if isinstance(current, (list, tuple)):
        if not isinstance(saved, (list, tuple)) or len(saved) != len(current):
            raise StateError(f'{where}: the state holds {saved!r:.60}, this env {len(current)} '
                             'entries')
        return type(current)(load_value(c, s, f'{where}[{i}]')
                             for i, (c, s) in enumerate(zip(current, saved)))
    return saved


def check_keys(where: str, state: Any, expected) -> None:
    """Raise StateError unless state is a dict with exactly the expected keys."""
    if not isinstance(state, dict):
        raise StateError(f'{where}: the state is a {type(state).__name__}, not a dict')
    missing = [k for k in expected if k not in state]
    extra = [k for k in state if k not in expected]
    faults = ([f'lacks {missing}'] if missing else []) + (
        [f'has unexpected entries {extra}'] if extra else [])
    if faults:
        raise StateError(f'{where}: the state ' + ' and '.join(faults))


def child_state(child: Any, where: str) -> Any:
    """state_dict() of a component, a dict of components, or None."""
    if child is None:
        return None
    if isinstance(child, dict):
        return {name: child_state(item, f'{where}[{name!r}]') for name, item in child.items()}
    if not callable(getattr(child, 'state_dict', None)):
        raise StateError(
            f'{where} ({type(child).__name__}) has no state_dict(): an exact resume needs '
            'the state of every env component; give the class state_dict() and '
            'load_state_dict(), e.g. by deriving it from sim2real.sim.state.Stateful')
    return child.state_dict()


def load_child(child: Any, state: Any, where: str) -> None:
    """load_state_dict() of a component, a dict of components, or None."""
    if child is None or state is None:
        if child is not None or state is not None:
            raise StateError(f'{where}: the state holds {type(state).__name__}, this env '
                             f'{type(child).__name__}')
        return
    if isinstance(child, dict):
        check_keys(where, state, tuple(child))
        for name, item in child.items():
            load_child(item, state[name], f'{where}[{name!r}]')
        return
    child.load_state_dict(state)


class Stateful:
    """Mixin: state_dict() and load_state_dict() from the STATE, CHILDREN and NOT_STATE
    attribute names a class declares (see the module docstring)."""

    STATE: tuple[str, ...] = ()
    """Attributes copied into the state."""
    CHILDREN: tuple[str, ...] = ()
    """Attributes holding components whose own state_dict() nests under their name."""
    NOT_STATE: tuple[str, ...] = ()
    """Attributes with arrays, generators or components that are not this one's state."""

    def state_dict(self) -> dict:
        """Copies of the STATE attributes and the CHILDREN's states, as plain data."""
        name = type(self).__name__
        check_declared(self, self.STATE + self.CHILDREN + self.NOT_STATE)
        out = {attr: copy_value(getattr(self, attr)) for attr in self.STATE}
        out.update({attr: child_state(getattr(self, attr), f'{name}.{attr}')
                    for attr in self.CHILDREN})
        return out

    def load_state_dict(self, state: dict) -> None:
        """Write a state_dict() of a component of the same configuration back into this one."""
        name = type(self).__name__
        check_keys(name, state, self.STATE + self.CHILDREN)
        for attr in self.STATE:
            setattr(self, attr, load_value(getattr(self, attr), state[attr], f'{name}.{attr}'))
        for attr in self.CHILDREN:
            load_child(getattr(self, attr), state[attr], f'{name}.{attr}')

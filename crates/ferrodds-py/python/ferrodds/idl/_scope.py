"""The namespace of the IDL class whose body is being run (for ``key("x")`` and friends)."""

_stack = []


def enter(namespace) -> None:
    _stack.append(namespace)


def leave() -> None:
    if _stack:
        _stack.pop()


def current_namespace():
    return _stack[-1] if _stack else None

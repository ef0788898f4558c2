"""Raises what no `except Exception` catches: the whole bot process ends with a traceback."""

from bigtwo import Bot


class Boom(BaseException):
    pass


def deeper():
    raise Boom("out of the whole program")


class Quitter(Bot):
    def act(self, observation):
        deeper()

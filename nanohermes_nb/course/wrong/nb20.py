"""Wrong implementations for notebook 20 (exercise 20.1, the cache rule of a real bill)."""

from . import WrongImplementation as W

WRONG = [
    W(
        "20.1",
        "'>=' for '>': a gap of exactly the TTL reads nothing",
        replace=(('request["time"] - previous["time"] > ttl', 'request["time"] - previous["time"] >= ttl'),),
    ),
    W("20.1", "ignores a switch of model", replace=(('request["model"] != previous["model"] or ', ""),)),
    W(
        "20.1",
        "reads the whole previous prompt, even beyond its own",
        replace=(('min(int(previous["prompt"]), int(request["est_prompt"]))', 'int(previous["prompt"])'),),
    ),
    W(
        "20.1",
        "reads the previous request's estimate, not its bill",
        replace=(('int(previous["prompt"])', 'int(previous["est_prompt"])'),),
    ),
]

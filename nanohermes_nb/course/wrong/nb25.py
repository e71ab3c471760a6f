"""Wrong implementations for notebook 25 (exercise 25.1, the notes block)."""

from . import WrongImplementation as W

WRONG = [
    W(
        "25.1",
        "takes the files from stale_reads, so a file read again after its change is forgotten",
        replace=(
            (
                "    changed = list(dict.fromkeys(changed))",
                "    from nanohermes_nb.context.quality import stale_reads\n"
                "    changed = list(dict.fromkeys(s.path for s in sorted(stale_reads(messages),\n"
                "                                                          key=lambda s: s.changed_at)))",
            ),
        ),
    ),
    W(
        "25.1",
        "'>=' for '>': a line that fits exactly is left out",
        replace=(('len("\\n".join([*out, line])) > limit', 'len("\\n".join([*out, line])) >= limit'),),
    ),
    W(
        "25.1",
        "the whole first message as the goal, not its first line",
        replace=(("text_of(m).strip().splitlines()[0]", "text_of(m).strip()"),),
    ),
    W(
        "25.1",
        "files in order of their last change",
        replace=(("changed = list(dict.fromkeys(changed))", "changed = list(dict.fromkeys(changed[::-1]))[::-1]"),),
    ),
    W(
        "25.1",
        "a line that does not fit is skipped, not the end",
        replace=(("            break", "            continue"),),
    ),
]

"""Hypothesis strategies: legal OpenAI histories with the quirks of real logs.

Parallel calls, ids reused across turns (matched by position), ``content: null``
on tool-call messages, mid-conversation system notices, and contents from tiny to
a few kilobytes.
"""

import json

from hypothesis import strategies as st

text = st.text(alphabet=st.sampled_from("ab c\n\"\\中文é🙂"), max_size=60)
big = st.one_of(text, st.builds(lambda s, n: s * n, st.sampled_from(["lorem ", "x", "src/a.py "]), st.integers(0, 120)))


@st.composite
def legal_histories(draw):
    msgs = [{"role": "system", "content": draw(text)}]
    reuse = draw(st.booleans())  # reused ids across turns, as in tau-bench logs
    for t in range(draw(st.integers(0, 5))):
        msgs.append({"role": "user", "content": draw(big)})
        if draw(st.integers(0, 4)) == 0:
            msgs.append({"role": "system", "content": draw(text)})  # a mid-conversation notice
        for r in range(draw(st.integers(0, 4))):
            n = draw(st.integers(1, 4))
            ids = [f"call_{j}" if reuse else f"call_{t}_{r}_{j}" for j in range(n)]
            msgs.append({"role": "assistant", "content": draw(st.one_of(st.none(), text)),
                         "tool_calls": [{"id": i, "type": "function",
                                         "function": {"name": draw(st.sampled_from(["read_file", "run_command"])),
                                                      "arguments": json.dumps({"path": "src/x.py",
                                                                               "command": draw(big)})}}
                                        for i in ids]})
            msgs.extend({"role": "tool", "tool_call_id": i, "content": draw(big)} for i in ids)
        if draw(st.booleans()):
            msgs.append({"role": "assistant", "content": draw(text)})
    return msgs

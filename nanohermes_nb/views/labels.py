"""Figure labels in Chinese: one table, applied to a figure already drawn, so both editions show the same plot.

The Chinese edition of the course shares its code cells and their outputs with the English one,
so its figures would keep their English titles, axis labels and legends. Drawing each plot twice
would mean two copies of every plot. Instead, when ``make course`` runs a notebook, every figure
it displays is rendered a second time with each of its texts looked up in :data:`LABELS`
(English -> Chinese), and that PNG rides along in the same output under :data:`ZH_PNG`; the
Chinese pages show it (``site.stage_notebook``), the English pages the original.

What is translated: titles, axis labels, legend entries, annotations and the figure's title.
Tick labels are left as they are (numbers, names of files and policies), and so is any text
that looks like code (no space, and an underscore, dot or slash: ``twelve_turns.json``).
A key may hold ``{}`` holes that match any text and are carried over in order (each piece translated
in turn when the table knows it; templates with the longest leading text, then the most text, go first):
``"budget {}"`` -> ``"预算 {}"`` turns ``budget 60,000`` into ``预算 60,000``. Texts the table
does not know stay English and are recorded in the Chinese PNG (text chunk
:data:`UNTRANSLATED_KEY`), which ``tests/test_browser.py`` reads: add them here.

Plot helpers in ``nanohermes_nb.views`` mark their labels with :func:`label` (the identity), so a
test can hold every label they draw to having a line in the table. To add a label, add a line
to :data:`LABELS` (the English exactly as drawn, or a template with ``{}``).
"""

from __future__ import annotations

import base64
import io
import json
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

__all__ = [
    "LABELS",
    "ZH_PNG",
    "UNTRANSLATED_KEY",
    "label",
    "translate",
    "figure_texts",
    "in_chinese",
    "chinese_png",
    "untranslated_of",
    "smallest_label_px",
    "label_px_of",
    "LABEL_PX_KEY",
    "bilingual_figures",
]

ZH_PNG = "image/x-nanohermes-zh+png"  # the output key of a figure's Chinese rendering (base64 PNG)
LABEL_PX_KEY = "nanohermes-label-px"  # PNG text chunk: the smallest axis or tick label, in pixels of the PNG
UNTRANSLATED_KEY = "nanohermes-untranslated"  # PNG text chunk: the texts the table did not know (JSON list)
_CODE_LIKE = re.compile(r"^[^\s]*[_./\\][^\s]*$")
_LATIN = re.compile(r"[A-Za-z]{2}")

# English as drawn (or a template with {} holes) -> Chinese. Keep the article's terms (data/glossary.json). Exact
# keys are looked up first, then the templates: the longest leading text first, then the most text besides the holes.
LABELS: dict[str, str] = {
    # roles and what a request is made of (plots.CATEGORIES): roles stay as the API writes them, as in the article
    "system": "系统消息",
    "summary": "摘要",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "other": "其他",
    "counterfactual replay (see ledger.caveat)": "反事实回放（见 ledger.caveat）",
    # ledgers and requests
    "request": "请求",
    "request (model call)": "请求（模型调用）",
    "request size": "请求大小",
    "request size (bytes of compact JSON)": "请求大小（紧凑 JSON 字节）",
    "context sent (bytes of compact JSON)": "发送的上下文（紧凑 JSON 字节）",
    "context sent (characters of compact JSON)": "发送的上下文（紧凑 JSON 字符）",
    "context size (bytes of compact JSON)": "上下文大小（紧凑 JSON 字节）",
    "bytes of compact JSON": "紧凑 JSON 字节",
    "cumulative input (bytes of compact JSON)": "累计输入（紧凑 JSON 字节）",
    "cumulative input (sum, bytes of compact JSON)": "累计输入（总和，紧凑 JSON 字节）",
    "budget (bytes of compact JSON)": "预算（紧凑 JSON 字节）",
    "budget (bytes)": "预算（字节）",
    "turn": "轮",
    "turn (from one user message to the next)": "轮（从一条用户消息到下一条）",
    "size (largest in the turn)": "大小（本轮最大）",
    "size after the turn": "本轮之后的大小",
    "compaction in this turn": "本轮有压缩",
    "the article's illustrative ledger": "文章的示意账本",
    "without compaction": "不压缩",
    "characters": "字符",
    "tokens": "token",
    "USD": "美元",
    "USD per request": "每次请求的美元",
    "policy": "策略",
    "retention": "保留率",
    "relevant share": "相关比例",
    "context bytes": "上下文字节",
    "keep recent": "keep_recent",
    "compactions (sum)": "压缩次数（总和）",
    "ineffective compactions (sum)": "无效压缩次数（总和）",
    "retention (mean share)": "保留率（平均比例）",
    # notebook 02, 03: caps at the door
    "the same session, with and without the early cap": "同一段会话：有没有提前设的上限",
    "twelve-turn session (recorded through dispatch)": "十二轮会话（经 dispatch 录制）",
    "tool result (in transcript order)": "工具结果（按转录顺序）",
    "tool result text (UTF-8 bytes)": "工具结果文本（UTF-8 字节）",
    "kept": "保留",
    "cut by the cap": "被上限截掉",
    "five chunk reads as the tool produced them": "工具产出的五次分块读取",
    # notebook 04, 05: the prefix, the system message
    "twelve-turn session: what a prefix cache could reuse": "十二轮会话：前缀缓存能复用多少",
    "bytes of the serialized request": "序列化请求的字节",
    "reusable prefix": "可复用的前缀",
    "new bytes to process": "需要重新处理的字节",
    "system message over ten turns": "十轮里的系统消息",
    "characters of the system message": "系统消息的字符数",
    "replaced (set_block)": "整块替换（set_block）",
    "appended": "每轮追加",
    "system message length, turn by turn": "系统消息长度，逐轮",
    # notebook 07: clamp
    "clamp keeps bytes: the same cap holds a third as many Chinese characters":
        "clamp 按字节保留：同一个上限只装得下三分之一的中文字符",
    "cap (UTF-8 bytes)": "上限（UTF-8 字节）",
    "characters kept": "保留的字符",
    "pure ASCII": "纯 ASCII",
    "Chinese": "中文",
    # notebook 08, 09: the trigger, the unit
    "the size grows with every message; the check looks at it after each tool batch":
        "大小随每条消息增长；检查只在每批工具结果之后看一眼",
    "context size, message by message": "上下文大小，逐条消息",
    # notebook 10, 11: the cut, the summary
    "keeping 10 turns scales with tool use; keeping 10 messages does not":
        "保留 10 轮会随工具调用增多；保留 10 条消息不会",
    "messages kept after compaction": "压缩后保留的消息数",
    "kept by 'last 10 turns'": "按“最近 10 轮”保留",
    "kept by 'last 10 messages'": "按“最近 10 条消息”保留",
    "note at index 1": "下标 1 处的摘要",
    "rolling summary, offline summarizer, twelve-turn session": "滚动摘要：离线摘要器，十二轮会话",
    "compaction round (each summarises the previous summary)": "压缩轮次（每次都摘要上一份摘要）",
    "share kept": "保留的比例",
    "files mentioned in dropped messages, still named": "被丢弃消息里提到的文件，仍被提到",
    "edited files the summary still names": "摘要仍提到的已编辑文件",
    # notebook 19, 20: money and the bill
    "cached input": "缓存命中的输入",
    "written input": "写入缓存的输入",
    "uncached input": "未缓存的输入",
    "output": "输出",
    "cumulative input (bytes), relative to its minimum": "累计输入（字节），相对其最小值",
    "cost in USD, relative to each pricing's minimum": "美元成本，相对各价格表的最小值",
    "reported prompt": "账单上的提示词",
    "estimated prompt (free-running)": "估计的提示词（不锚定账单）",
    "reported cached": "账单上的缓存命中",
    "estimated cached": "估计的缓存命中",
    "cached estimate off by > 5%": "缓存估计偏差超过 5%",
    # notebook 21
    "the more the context holds, the less of it the next step is about": "上下文装得越多，下一步用得上的部分越少",
    # notebook 17: when each agent's rule fires (trigger_plots)
    "with no compaction": "不压缩时",
    "as the log sent it": "日志实际发送的",
    "tokens per request": "每次请求的 token",
    "unknown model": "未知模型",
    "{}:\nwhen each rule fires ({}, window {})": "{}：\n各规则何时触发（{}，窗口 {}）",
    # notebook 20: the report (usage_plots)
    "a new run (the chat starts empty)": "一次新的运行（对话从空开始）",
    "the agent's own compaction (auto)": "Agent 自己的压缩（自动）",
    "the agent's own compaction (manual)": "Agent 自己的压缩（手动）",
    "the agent's own compaction": "Agent 自己的压缩",
    "context the log shows ({})": "日志显示的上下文，{}",
    "prompt tokens the bill reports (hidden prefix included)": "账单上的提示词 token（含隐藏前缀）",
    "{}: the context against the bill": "{}：上下文与账单",
    "where the money went": "钱花在了哪里",
    # notebook 27: probes and survival (probe_plots)
    "re-injected": "重新注入",
    "summarized": "摘要",
    "lost": "丢失",
    "probes": "探针",
    "Survival ledger: what each probe became": "留存账本：每个探针的下场",
    "{}'s own compaction: what each probe became": "{} 自己的压缩：每个探针的下场",
    "no probe: nothing was compacted": "没有探针：什么都没有被压缩",
    "Probe survival by category (share of probes still answerable)": "各类别的探针留存（仍能回答的探针比例）",
    "Cost against what survives": "成本与留存",
    "Share of the raw input sent, against probe survival": "发送的原始输入比例与探针留存",
    "probe survival": "探针留存",
    "input share": "输入比例",
    "cumulative input": "累计输入",
    "cost usd": "美元成本",
    "extractive": "抽取式",
    "transcripts ({} bytes)": "transcripts（{} 字节）",
    "agentlogs ({} bytes)": "agentlogs（{} 字节）",
    "{} / {} / {}": "{} / {} / {}",
    "{} / {}": "{} / {}",
    "tokens re-read (o200k)": "重读的 token（o200k）",
    "Files read again in the 20 calls after each real compaction": "每次真实压缩之后 20 次调用内重读的文件",
    # templates: the most specific first
    "budget {} bytes": "预算 {} 字节",
    "budget {} chars": "预算 {} 字符",
    "budget {}": "预算 {}",
    "max_output {}": "max_output {}",
    "cap {} bytes (max_output)": "上限 {} 字节（max_output）",
    "compaction only: {} compactions": "只靠压缩：{} 次压缩",
    "clamped at the door: {} compactions": "在门口截断：{} 次压缩",
    "compaction after request {}": "第 {} 次请求之后压缩",
    "message index in {}": "{} 中的消息序号",
    "the check ({} tool batches)": "检查（{} 批工具结果）",
    "first over the budget: request {}, turn {}": "第一次超出预算：第 {} 次请求，第 {} 轮",
    "{} measured in bytes: {} compaction(s)": "{} 按字节计：{} 次压缩",
    "{} measured in chars: {} compaction(s)": "{} 按字符计：{} 次压缩",
    "{}, first {} messages, budget {}: the simple cut {} lands on a tool result, the cut moves to {}":
        "{}，前 {} 条消息，预算 {}：简单切点 {} 落在工具结果上，切点移到 {}",
    "{}, forced: {} parallel results at the end, the cut runs past all of them":
        "{}，强制压缩：末尾有 {} 条并行结果，切点越过了它们全部",
    "dropped: {} messages": "丢弃：{} 条消息",
    "simple cut {}": "简单切点 {}",
    "cut {} (past the end)": "切点 {}（越过末尾）",
    "cut {}": "切点 {}",
    "twelve-turn session: what each request is made of": "十二轮会话：每次请求由什么组成",
    "{} replayed: what each request is made of": "{} 回放：每次请求由什么组成",
    "replayed: {}": "回放：{}",
    "{}: {} requests, {} compaction, peak {} bytes": "{}：{} 次请求，{} 次压缩，峰值 {} 字节",
    "{}: {} requests, {} compactions, peak {} bytes": "{}：{} 次请求，{} 次压缩，峰值 {} 字节",
    "{}: cumulative input over {} requests": "{}：{} 次请求的累计输入",
    "{} bytes\n({}) saved": "省下 {} 字节\n（{}）",
    "with compaction (saving {} bytes, {})": "压缩（省下 {} 字节，{}）",
    "without compaction ({})": "不压缩（{}）",
    "{} (saving {} bytes, {})": "{}（省下 {} 字节，{}）",
    "{}: request size under each policy": "{}：各策略下的请求大小",
    "{}: cumulative input under each policy": "{}：各策略下的累计输入",
    "{}: cumulative input": "{}：累计输入",
    "{}: compactions": "{}：压缩次数",
    "{}: ineffective compactions": "{}：无效压缩次数",
    "{}: retention": "{}：保留率",
    "{}: {} compactions": "{}：{} 次压缩",
    "{}: {} compaction": "{}：{} 次压缩",
    "bytes": "字节",
    "chars": "字符",
    "dropped: {}": "丢弃：{}",
    "{} messages": "{} 条消息",
    "{} message": "{} 条消息",
    "{}: {}, {}, peak {} {}": "{}：{}，{}，峰值 {} {}",
    "with compaction ({})": "压缩（{}）",
    "saving {} {}, {}": "省下 {} {}，{}",
    "{} {}\n({}) saved": "省下 {} {}\n（{}）",
    "context sent ({})": "发送的上下文（{}）",
    "request size ({})": "请求大小（{}）",
    "live: no request yet": "实时：还没有请求",
    "live: {}, {}": "实时：{}，{}",
    "{} requests": "{} 次请求",
    "{} request": "{} 次请求",
    "no tool results": "没有工具结果",
    "dropped: {} message": "丢弃：{} 条消息",
    "{} without compaction": "{}（不压缩）",
    "tokens, approx.": "token（估计）",
    "characters of compact JSON": "紧凑 JSON 字符",
    "{} tokens": "{} token",
    "{} compactions": "{} 次压缩",
    "{} compaction": "{} 次压缩",
    "{} (openai)": "{}（openai）",
    "{} (anthropic)": "{}（anthropic）",
    "{} (gemini)": "{}（gemini）",
    "retention score vs needed-later retention, budget {} bytes": "保留率得分与后来用得上的保留率，预算 {} 字节",
    "{}: {} (purple: the tool's own compactions)": "{}：{}（紫色：工具自己的压缩）",
    "{}: {}\n(purple: the tool's own compactions)": "{}：{}\n（紫色：工具自己的压缩）",
    "{}:\nwhat each policy would have cost (budget {} o200k tokens)":
        "{}：\n各策略本来的花费（预算 {} 个 o200k token）",
    "{}: what each policy would have cost (budget {} o200k tokens)": "{}：各策略本来的花费（预算 {} 个 o200k token）",
}


def label(text: str) -> str:
    """Mark ``text`` as a figure label that the Chinese edition translates through :data:`LABELS` (returns it)."""
    return text


def _specificity(key: str) -> tuple[int, int]:
    """Sort key of a template: the longest leading text first, then the most text besides the holes."""
    return -len(key.split("{}", 1)[0]), -len(key.replace("{}", ""))


def _template(key: str) -> re.Pattern[str]:
    parts = [re.escape(p) for p in key.split("{}")]
    return re.compile("^" + "(.+?)".join(parts) + "$", re.S)


_COMPILED: dict[str, re.Pattern[str]] = {}


def translate(text: str, table: Mapping[str, str] | None = None) -> str | None:
    """The Chinese of one figure text (exact, else the first template that matches); None when unknown."""
    table = LABELS if table is None else table
    if text in table:
        return table[text]
    templates = sorted((k for k in table if "{}" in k), key=_specificity)
    for key in templates:  # the most specific template first (see _specificity)
        zh = table[key]
        pattern = _COMPILED.get(key) or _COMPILED.setdefault(key, _template(key))
        m = pattern.match(text)
        if m:
            pieces = [translate(g, table) or g for g in m.groups()]
            return zh.format(*pieces) if zh.count("{}") == len(pieces) else zh
    return None


def _needs_words(text: str) -> bool:
    stripped = text.strip()
    return bool(_LATIN.search(stripped)) and not _CODE_LIKE.match(stripped)


def figure_texts(fig: Any) -> list[Any]:
    """The figure's texts a reader reads as words: titles, axis labels, legend entries, annotations, suptitle."""
    from matplotlib.text import Text

    found: list[Any] = []
    if getattr(fig, "_suptitle", None) is not None:
        found.append(fig._suptitle)
    found += [t for t in fig.texts if isinstance(t, Text)]
    for ax in fig.axes:
        found += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        legend = ax.get_legend()
        if legend is not None:
            found += [*legend.get_texts(), legend.get_title()]
    for legend in getattr(fig, "legends", []):
        found += [*legend.get_texts(), legend.get_title()]
    return [t for t in found if isinstance(t, Text) and _needs_words(t.get_text())]


@contextmanager
def in_chinese(fig: Any, table: Mapping[str, str] | None = None) -> Iterator[list[str]]:
    """Within the block, every known text of ``fig`` is Chinese; yields the texts left in English. Restored after."""
    from .plots import use_cjk_font

    use_cjk_font()
    before = [(t, t.get_text()) for t in figure_texts(fig)]
    unknown: list[str] = []
    for t, text in before:
        zh = translate(text, table)
        if zh is None:
            unknown.append(text)
        else:
            t.set_text(zh)
    try:
        yield unknown
    finally:
        for t, text in before:
            t.set_text(text)


def smallest_label_px(fig: Any, dpi: float | None = None) -> float | None:
    """The smallest axis label or tick label of ``fig``, in pixels of an image at ``dpi`` (titles when it has none).

    What a reader must be able to read to read a plot; ``tests/test_browser.py`` scales it by the size the
    page shows the image at, to check that every figure's labels are legible at the site's width.
    """
    dpi = dpi or fig.dpi
    sizes = [t.get_fontsize() for ax in fig.axes if ax.get_visible() for axis in (ax.xaxis, ax.yaxis)
             for t in (axis.label, *axis.get_ticklabels()) if t.get_visible() and t.get_text().strip()]
    if not sizes:
        sizes = [t.get_fontsize() for ax in fig.axes for t in (ax.title,) if t.get_text().strip()]
    return round(min(sizes) * dpi / 72, 2) if sizes else None


def chinese_png(fig: Any, table: Mapping[str, str] | None = None, **savefig: Any) -> bytes:
    """The figure rendered as a PNG with its texts in Chinese; the texts left in English, and the smallest
    label's size (:func:`smallest_label_px`), go in PNG text chunks."""
    buffer = io.BytesIO()
    options = {"format": "png", "bbox_inches": "tight", **savefig}
    with in_chinese(fig, table) as unknown:
        fig.canvas.draw()  # tick labels exist once drawn
        label = smallest_label_px(fig, options.get("dpi"))
        metadata = {UNTRANSLATED_KEY: json.dumps(unknown, ensure_ascii=False), LABEL_PX_KEY: json.dumps(label)}
        fig.savefig(buffer, metadata=metadata, **options)
    return buffer.getvalue()


def _png_text(png: bytes, key: str, default: str) -> Any:
    from PIL import Image, PngImagePlugin

    with Image.open(io.BytesIO(png)) as image:
        text = image.text if isinstance(image, PngImagePlugin.PngImageFile) else {}
        return json.loads(text.get(key, default))


def untranslated_of(png: bytes) -> list[str]:
    """The texts a Chinese PNG left in English (from its text chunk); [] when none or not recorded."""
    return list(_png_text(png, UNTRANSLATED_KEY, "[]"))


def label_px_of(png: bytes) -> float | None:
    """The smallest axis or tick label a Chinese PNG's figure drew, in the PNG's pixels (None: not recorded)."""
    return _png_text(png, LABEL_PX_KEY, "null")


def bilingual_figures(shell: Any = None) -> bool:
    """In a running IPython kernel: give every displayed matplotlib figure its Chinese PNG under :data:`ZH_PNG`.

    ``make course`` calls it in each notebook it executes (an injected first cell, removed again from the
    pages). It wraps the shell's display formatter rather than registering a formatter for ``Figure``,
    because enabling the inline backend clears every formatter's ``Figure`` entry. Returns False outside
    IPython; calling it twice wraps once.
    """
    from matplotlib.figure import Figure

    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if shell is None:
        return False
    formatter = shell.display_formatter
    if getattr(formatter.format, "nanohermes_bilingual", False):
        return True
    original = formatter.format

    def format_both(obj: Any, include: Any = None, exclude: Any = None) -> tuple[dict, dict]:
        data, metadata = original(obj, include=include, exclude=exclude)
        if isinstance(obj, Figure) and "image/png" in data:  # at the figure's own DPI, as the inline backend
            data = {**data, ZH_PNG: base64.b64encode(chinese_png(obj, dpi=obj.dpi)).decode("ascii")}
        return data, metadata

    format_both.nanohermes_bilingual = True  # type: ignore[attr-defined]
    formatter.format = format_both
    return True

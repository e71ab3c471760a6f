"""Build the course and the docs as one static site with MkDocs (Material, mkdocs-jupyter, mkdocstrings).

``make course`` executes the notebooks (``build.py``) and then calls ``build_site``, which
stages two MkDocs projects under ``build/site_src/`` and builds them:

- **English** into ``build/course/``: a home page generated from the course map and the runs,
  every executed notebook, ``docs/``, and an API reference generated from the docstrings;
- **Chinese** into ``build/course/zh/``: the same notebooks with their prose from
  ``notebooks/zh/`` (``translations.py``), code cells and outputs identical, and a Chinese home page.

The theme, plugins and Markdown extensions are in ``mkdocs.yml``; this module only fills in what
differs per edition (folders, navigation, language, search language) and the generated pages.
Every page links to itself in the other edition (``site_hooks.py``), and the whole site loads
nothing from the network: ``external_urls`` scans the built HTML, CSS and JavaScript for any
address a browser would fetch, and the build fails if it finds one.
"""

from __future__ import annotations

import copy
import html
import json
import os
import re
import shutil
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .site_hooks import reader_text

__all__ = ["SiteBuild", "build_site", "external_urls", "reading_time", "stage_notebook", "api_modules",
           "WIDGET_VIEW"]

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "mkdocs.yml"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
SNAPSHOT_TYPES = {"text/html", "image/png", "image/svg+xml"}
WORDS_PER_MINUTE = 200  # English prose
ZH_CHARS_PER_MINUTE = 400  # Chinese prose: characters, not words
_OUTSIDE_LINK = re.compile(r"\[([^\]]+)\]\((\.\./[^)]+)\)")  # docs/ links into the repository, not the site
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# rules.md's note that docstrings cite it as "SPEC": on the site every such citation is already "the rules, §N"
_SPEC_NOTE = re.compile(r"\s*The code's\s+docstrings cite this page as \"SPEC\"[^.]*\.\)?", re.S)
_FETCHED = [  # where an address in a page is fetched by the browser, not merely shown
    re.compile(r"""<(?:script|img|iframe|audio|video|source|embed|input)\b[^>]*?\ssrc=["']?((?:https?:)?//[^"'\s>]+)""",
               re.I),
    re.compile(r"""<link\b[^>]*?\shref=["']?((?:https?:)?//[^"'\s>]+)""", re.I),
    re.compile(r"""url\(\s*["']?((?:https?:)?//[^"')\s]+)""", re.I),
    re.compile(r"""@import\s+["']((?:https?:)?//[^"']+)""", re.I),
    re.compile(r"""\bimport(?:Scripts)?\(\s*["']((?:https?:)?//[^"']+)""", re.I),
]


@dataclass(frozen=True)
class SiteBuild:
    """What ``build_site`` made: the site folder, its pages per edition, time taken and what is untranslated."""

    out: Path
    pages: Mapping[str, int]
    seconds: float
    untranslated: Mapping[str, list[str]]
    links: Any = None  # links.LinkReport: every link of both editions checked

    @property
    def page_count(self) -> int:
        return sum(self.pages.values())


def reading_time(nb: Any, lang: str = "en") -> tuple[int, int]:
    """Minutes of prose reading (English words or Chinese characters) and the number of code lines, apart."""
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    code = sum(1 for c in nb.cells if c.cell_type == "code" for ln in c.source.splitlines() if ln.strip())
    if lang == "zh":
        amount = len(_CJK.findall(prose)) / ZH_CHARS_PER_MINUTE + len(_CJK.sub(" ", prose).split()) / WORDS_PER_MINUTE
    else:
        amount = len(prose.split()) / WORDS_PER_MINUTE
    return max(1, round(amount)), code


def stage_notebook(nb: Any, lang: str = "en") -> Any:
    """The notebook as the site shows it: widget snapshots, and each figure in the edition's language.

    The widget view needs a widget manager loaded from a CDN; every explorer stores a snapshot
    (HTML or an image) beside its view, so the view is dropped from that output and the widget
    state from the metadata. A figure's output carries its Chinese rendering beside the English
    one (``views.labels``): the Chinese edition shows that one, and neither page keeps both.
    The executed notebook itself is left as it is.
    """
    from ..views.labels import ZH_PNG

    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_VIEW in data and SNAPSHOT_TYPES & set(data):
                del data[WIDGET_VIEW]
            chinese = data.pop(ZH_PNG, None)
            if lang == "zh" and chinese and "image/png" in data:
                english, data["image/png"] = data["image/png"], chinese
                if isinstance(data.get("text/html"), str):  # a widget's snapshot inlines the same image
                    data["text/html"] = data["text/html"].replace(english, chinese)
    return nb


def api_modules(package: str = "nanohermes_nb", root: Path = ROOT) -> list[str]:
    """Every public module of the package, dotted, in file order (private ``_x`` and entry points left out)."""
    base = root / package
    names = []
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(root).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(p.startswith("_") for p in parts) or parts[-1] in {"site_hooks"}:
            continue
        if re.fullmatch(r"nb\d\d", parts[-1]):  # a notebook's data (wrong implementations, judges): its package's page
            continue
        names.append(".".join(parts))
    return names


def external_urls(site: str | os.PathLike) -> list[tuple[str, str]]:
    """Every (file, address) in the built HTML, CSS and JS that a browser would fetch from the network."""
    site = Path(site)
    found = []
    for path in sorted(site.rglob("*")):
        if path.suffix not in {".html", ".css", ".js"} or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for pattern in _FETCHED:
            found += [(str(path.relative_to(site)), m.group(1)) for m in pattern.finditer(text)]
    return found


# ---------------------------------------------------------------- staging one edition


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _stage_docs(stage: Path) -> list[dict]:
    """Copy ``docs/`` (links into the repository become plain text); return its nav entries."""
    nav = []
    for src in sorted((ROOT / "docs").iterdir()):
        dest = stage / "docs" / src.name
        if src.suffix == ".md":
            text = _OUTSIDE_LINK.sub(r"\1", src.read_text(encoding="utf-8"))
            text = reader_text(_SPEC_NOTE.sub("", text), None if src.name == "rules.md" else "rules.md", markdown=True)
            _write(dest, text)
            title = next((ln.lstrip("# ").strip() for ln in text.splitlines() if ln.startswith("# ")), src.stem)
            nav.append({title: f"docs/{src.name}"})
        elif src.is_file():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
    return nav


def _stage_api(stage: Path) -> list[dict]:
    """One page per public module, rendered by mkdocstrings from the docstrings; an index of them."""
    modules = api_modules()
    nav = [{"Overview": "api/index.md"}]
    rows = []
    for name in modules:
        page = f"api/{name}.md"
        _write(stage / page, f"# `{name}`\n\n::: {name}\n")
        nav.append({name: page})
        rows.append(f"- [`{name}`]({name}.md)")
    _write(stage / "api" / "index.md", "# API reference\n\nGenerated from the docstrings of every public module "
           "(mkdocstrings). Import a name from the module that defines it.\n\n" + "\n".join(rows) + "\n")
    return nav


def _home(lang: str, entries: Sequence[tuple[str, str, Any]], runs: Mapping[str, Any]) -> str:
    """The home page: one row per notebook (topic, reading, code, run time), the article map, the glossary."""
    from .map import anchor, course_map

    cmap = course_map()
    zh = lang == "zh"
    rows, minutes = [], 0
    for file, title, nb in entries:
        read, code = reading_time(nb, lang)
        minutes += read
        run = runs.get(file)
        ran = f"{run.seconds:.1f} s" if run else "–"
        status = "" if run is None or run.ok else f" **({'运行失败' if zh else 'failed'}: {run.problem})**"
        rows.append(f"| {file[:2]} | [{title}]({file}){status} | {read} {'分钟' if zh else 'min'} | {code} | {ran} |")
    head = ("| | 笔记本 | 阅读 | 代码行 | 运行 |" if zh else "| | Notebook | Reading | Lines of code | Runs in |")
    esc = html.escape  # Markdown passes entities through: quotes and brackets in titles stay text
    sections = [f"| §{s.n} | {esc(s.zh)} | {esc(s.en)} | [{s.notebook[:2]} · {esc(s.heading)}]"
                f"({s.notebook}#{anchor(s.heading)}) |" for s in cmap.sections]
    terms = json.loads((ROOT / "data" / "glossary.json").read_text(encoding="utf-8"))["terms"]
    glossary = [f"| {t['zh']} | {t['en']} | {t['code']} |" for t in terms]
    art = cmap.article
    if zh:
        intro = ("# nanohermes_nb：课程\n\n一个小型编程 Agent 如何管住它的上下文窗口，"
                 "一个已执行的笔记本接一个笔记本地讲。"
                 "按顺序阅读；每个笔记本都以一个断言其结论的单元格收尾。这些页面是静态的：要拖动探索器的控件，"
                 "请在 JupyterLab 中打开笔记本（`make lab`）。文档和 API 参考只有英文："
                 "[文档](../docs/rules.html) · [API 参考](../api/index.html)。\n\n")
        tail = (f"\n\n{len(entries)} 个笔记本，约 {minutes} 分钟阅读。\n\n## 文章逐节对照\n\n"
                f"{art['title_zh']}（{art['date']}）：每一节在哪里讲授。\n\n"
                "| § | 原文 | 英文 | 讲授于 |\n|---|---|---|---|\n"
                + "\n".join(sections) + "\n\n## 术语表\n\n| 中文 | English | 代码中 |\n|---|---|---|\n")
    else:
        intro = ("# nanohermes_nb: the course\n\nHow a small coding agent keeps its context window under control, one "
                 "executed notebook at a time. Read them in order; each ends with a cell that asserts its claims. "
                 "These pages are static: open the notebooks in JupyterLab (`make lab`) to move the explorers' "
                 "controls. [阅读中文版](zh/index.html).\n\n")
        tail = (f"\n\n{len(entries)} notebooks, about {minutes} minutes of reading.\n\n## The article, section by "
                f"section\n\n{art['title_zh']} ({art['title_en']}, {art['date']}): where each of its "
                f"{len(cmap.sections)} sections is taught.\n\n"
                "| § | article | in English | taught in |\n|---|---|---|---|\n"
                + "\n".join(sections) + "\n\n## Glossary\n\n| article | English | in the code |\n|---|---|---|\n")
    return intro + head + "\n|---|---|---|---|---|\n" + "\n".join(rows) + tail + "\n".join(glossary) + "\n"


def _stage_edition(lang: str, executed: Sequence[Path], runs: Mapping[str, Any], stage: Path) -> tuple[list, list]:
    """Write one edition's pages into ``stage``; return its nav and the cells left untranslated."""
    import nbformat

    from . import translations
    from .map import course_map

    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    cmap = course_map()
    titles = translations.zh_titles() if lang == "zh" else {}
    terms = translations.glossary_terms() if lang == "zh" else []
    entries, untranslated = [], []
    for path in executed:
        nb = nbformat.read(path, as_version=4)
        name = path.name
        title = cmap.entry(name).title if name in {e.file for e in cmap.notebooks} else path.stem
        if lang == "zh":
            tr_path = translations.translation_path(name)
            tr = translations.read_translation(tr_path) if tr_path.exists() else None
            nb, missing = translations.zh_notebook(nb, name, tr, cmap, titles, terms)
            untranslated += [f"{name}:{cell_id}" for cell_id in missing]
            title = titles.get(name) or title
        nbformat.write(stage_notebook(nb, lang), stage / name)
        entries.append((name, title, nb))
    _write(stage / "index.md", _home(lang, entries, runs))
    _write(stage / "assets" / "nanohermes.css", (Path(__file__).parent / "site_theme" / "nanohermes.css")
           .read_text(encoding="utf-8"))
    course = [{f"{name[:2]} · {title}": name} for name, title, _ in entries]
    home, part = ("课程首页", "课程") if lang == "zh" else ("Home", "The course")
    nav: list = [{home: "index.md"}, {part: course}]
    if lang == "en":
        nav += [{"Docs": _stage_docs(stage)}, {"API reference": _stage_api(stage)}]
    return nav, untranslated


def _config(lang: str, stage: Path, site: Path, nav: list, other_pages: Iterable[str]) -> Path:
    """Write the edition's MkDocs config (``mkdocs.yml`` with this edition's folders, nav and language)."""
    import yaml

    cfg = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    cfg.update(docs_dir=str(stage), site_dir=str(site), nav=nav, hooks=[str(ROOT / h) for h in cfg.get("hooks", [])])
    cfg["theme"]["custom_dir"] = str(ROOT / cfg["theme"]["custom_dir"])
    cfg["theme"]["language"] = lang
    cfg["extra"].update(nh_edition=lang, nh_other_pages=sorted(other_pages))
    plugins = []
    for plugin in cfg["plugins"]:
        if plugin == "search":
            if lang == "zh":
                # No search box in the Chinese edition: Material 9.8's search worker fails on every query over
                # an index segmented by jieba (a TypeError in its result highlighter; tests/test_browser.py
                # shows the box is absent rather than broken). The English edition's search covers the code.
                continue
            plugin = {"search": {"lang": ["en"]}}
        elif isinstance(plugin, dict) and "mkdocs-jupyter" in plugin:
            plugin["mkdocs-jupyter"]["cache_dir"] = str(stage.parent / ".jupyter-cache" / lang)
        elif isinstance(plugin, dict) and "mkdocstrings" in plugin:
            plugin["mkdocstrings"]["handlers"]["python"]["paths"] = [str(ROOT)]
        plugins.append(plugin)
    cfg["plugins"] = plugins
    if lang == "zh":
        cfg["site_name"] = "nanohermes_nb：课程"
    path = stage.parent / f"mkdocs.{lang}.yml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def _mkdocs_build(config_file: Path) -> None:
    import logging

    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    logging.getLogger("mkdocs").setLevel(logging.WARNING)
    config = load_config(str(config_file))
    config.plugins.on_startup(command="build", dirty=False)
    try:
        build(config)
    finally:
        config.plugins.on_shutdown()


def _build_all(configs: Sequence[Path]) -> None:
    """Build the editions side by side, one process each (two cores: about the time of the longer one)."""
    if len(configs) <= 1 or os.environ.get("NANOHERMES_SITE_SERIAL"):
        for config in configs:
            _mkdocs_build(config)
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=len(configs)) as pool:
        list(pool.map(_mkdocs_build, configs))


def _pages(site: Path) -> int:
    return sum(1 for p in site.rglob("*.html") if "zh" not in p.relative_to(site).parts[:1] and p.name != "404.html")


def build_site(runs: Sequence[Any], executed_dir: str | os.PathLike, out: str | os.PathLike,
               stage_root: str | os.PathLike | None = None, languages: Sequence[str] = ("en", "zh")) -> SiteBuild:
    """Build the English site into ``out`` and the Chinese one into ``out/zh`` from the executed notebooks.

    ``runs`` are the ``NotebookRun`` of the execution (for the run times on the home page);
    ``executed_dir`` holds the executed ``.ipynb``. Raises RuntimeError if a built page would
    fetch anything from the network.
    """
    start = time.perf_counter()
    out, executed_dir = Path(out).resolve(), Path(executed_dir).resolve()
    stage_root = Path(stage_root).resolve() if stage_root else out.parent / "site_src"
    by_name = {r.name: r for r in runs}
    executed = [executed_dir / name for name in by_name if (executed_dir / name).exists()]
    pages, untranslated, navs = {}, {}, {}
    for lang in languages:
        navs[lang], untranslated[lang] = _stage_edition(lang, executed, by_name, stage_root / lang)
    names = {lang: {p.stem + ".html" for p in executed} | {"index.html"} for lang in languages}
    built = {lang: out if lang == "en" else stage_root / f"{lang}-site" for lang in languages}
    configs = [_config(lang, stage_root / lang, built[lang], navs[lang],
                       names["zh" if lang == "en" else "en"] if len(languages) > 1 else set()) for lang in languages]
    _build_all(configs)
    for lang in languages:  # the English build cleans its folder, so the others are built apart and moved in
        if built[lang] != out:
            shutil.rmtree(out / lang, ignore_errors=True)
            shutil.move(str(built[lang]), str(out / lang))
    for lang in languages:
        site = out if lang == "en" else out / lang
        pages[lang] = _pages(site) if lang == "en" else sum(1 for p in site.rglob("*.html") if p.name != "404.html")
    leaks = external_urls(out)
    if leaks:
        raise RuntimeError(f"the built site would fetch from the network: {leaks[:3]} ({len(leaks)} in all)")
    for path in out.rglob("*"):  # readable by others, as any static site
        path.chmod(0o755 if path.is_dir() else 0o644)
    from .links import check_site

    return SiteBuild(out, pages, time.perf_counter() - start, untranslated, check_site(out))

"""Write synthetic user feedback about logstat (in Chinese), the same on every machine.

    python3 tools/make_feedback.py --count 300 > feedback/q3.txt

One line per item: number, date, channel, who, the problem, a remark, what they
want, and the urgency. The items are made up from the phrase tables below with
the same small LCG as tools/make_log.py; they exist to exercise the triage notes
and to show how Chinese text weighs in bytes.
"""

from __future__ import annotations

import argparse
import sys
from datetime import date, timedelta

CHANNELS = ("邮件", "工单系统", "即时消息", "周会", "电话回访", "内部论坛")
WHO = ("运维值班同学", "数据分析组", "前端团队", "客服主管", "安全组", "财务部的同事",
       "新入职的实习生", "外包运维", "产品经理", "市场部", "测试组", "架构组")
# (area, problem, wish)
TOPICS = (
    ("搜索统计", "搜索页的查询参数不同就被算成不同的路径，排行榜前十几乎全是 /search 开头的行",
     "希望按去掉查询字符串之后的路径合并计数"),
    ("JSON 导出", "JSON 导出里的 path 字段带着查询字符串，仪表盘按路径分组时数字对不上",
     "希望导出里把查询字符串单独放一个字段"),
    ("时区", "报表里的时间全是 UTC，值班同学每次都要自己换算成北京时间",
     "希望可以用参数选择显示的时区"),
    ("大文件", "处理两个多 G 的日志时内存占用很高，笔记本直接卡住",
     "希望改成边读边统计，不要一次把记录全放进列表"),
    ("编码", "日志里有百分号编码的中文搜索词，报表里只能看到一串 %E9 之类的字符",
     "希望显示时解码成中文，导出时保留原样"),
    ("错误率", "错误率把 4xx 和 5xx 算在一起，看不出是客户端的问题还是服务端的问题",
     "希望把客户端错误和服务端错误分成两列"),
    ("静态资源", "静态资源的请求太多，把真正的页面挤出了排行榜",
     "希望有一个参数可以排除 /static/ 下面的路径"),
    ("爬虫", "搜索引擎爬虫的请求占了将近三成，干扰了真实用户的统计",
     "希望可以按 User-Agent 过滤掉爬虫"),
    ("CSV", "CSV 用表格软件打开时中文是乱码",
     "希望提供一个输出带 BOM 的 UTF-8 的选项"),
    ("性能", "每天凌晨的批处理要跑二十多分钟，早会之前经常出不来",
     "希望支持按小时增量统计，只处理新增的日志"),
    ("日志格式", "自定义格式的日志解析失败时整行被跳过，却没有任何提示",
     "希望在报表结尾说明跳过了多少行"),
    ("带宽", "304 响应的大小记成 0，带宽统计看起来偏低",
     "希望在文档里说清楚这一点，或者单独统计"),
    ("排序", "点击量相同的路径排序看起来很随机，两个人算出来的表不一样",
     "希望文档写明并列时按路径排序"),
    ("主机", "IPv6 地址在主机排行里太长，把表格撑得很宽",
     "希望长地址可以缩写显示"),
)
REMARKS = ("这个问题已经影响到周报了。", "不着急，有空再看。", "上个月已经反馈过一次。",
           "我们组现在是手工处理的。", "其他同事也遇到了同样的情况。", "附件里有复现用的日志片段。",
           "领导开会时问到了这个数字。", "最好下个版本能解决。", "")
URGENCY = ("高", "中", "中", "低")


class Lcg:
    """The LCG of tools/make_log.py: deterministic and version-independent."""

    def __init__(self, seed: int) -> None:
        self.state = seed & 0xFFFFFFFF

    def next(self) -> int:
        self.state = (1664525 * self.state + 1013904223) & 0xFFFFFFFF
        return self.state >> 8

    def pick(self, items: tuple):
        return items[self.next() % len(items)]


def item(rng: Lcg, number: int, day: date) -> str:
    area, problem, wish = rng.pick(TOPICS)
    remark = rng.pick(REMARKS)
    return (f"#{number:04d}｜{day.month}月{day.day}日｜{rng.pick(CHANNELS)}｜{rng.pick(WHO)}｜"
            f"【{area}】{problem}。{remark}{wish}。紧急程度：{rng.pick(URGENCY)}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=300)
    p.add_argument("--seed", type=int, default=3)
    args = p.parse_args(argv)
    rng = Lcg(args.seed)
    day = date(2026, 7, 1)
    lines = []
    for number in range(1, args.count + 1):
        if rng.next() % 10 < 3:
            day += timedelta(days=1)
        lines.append(item(rng, number, day))
    sys.stdout.reconfigure(encoding="utf-8")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

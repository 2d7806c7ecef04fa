"""A Chinese–English glossary of software terms, so a query in one language reaches memories in the other.

Developers write memories in both languages ("部署前要先跑 alembic upgrade head", "Staging deploys
on every merge") and ask in either, often mixed ("cargo 编译太慢怎么加速"). BM25 cannot bridge the
two, and bge-small reads no Chinese. Query-side only, so no index change: a query's glossed words
also match their translations (`cross_terms`), and the embedder is given the query with its known
Chinese words in English (`english_gloss`). A translation stands in for the word it translates, it
never adds weight of its own to the query.

Each line: one Chinese word, then English words (the first is what the embedder sees). Single
Chinese characters only translate into English (as index tokens they would match inside unrelated
words); words of two or more characters go both ways.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from typing import NamedTuple

from supermemory.text import _SEGMENT, STOPWORDS, _split_query_cjk, tokenize

_TABLE = """
部署 deploy deployment
发布 release publish
上线 release launch
回滚 rollback revert
编译 compile build
构建 build
打包 bundle package
单元测试 unit test
集成测试 integration test
测试 test tests
覆盖率 coverage
数据库 database db
表名 table
字段 field column
索引 index
查询 query
事务 transaction
迁移 migration migrate
缓存 cache
过期 expire expiry ttl
超时 timeout
重试 retry
队列 queue
日志 log logging logs
监控 monitoring
告警 alert alerting
配置 config configuration configure
环境变量 env variable
环境 environment env
依赖 dependency dependencies
版本 version
升级 upgrade
安装 install
接口 api endpoint
端点 endpoint
路由 route routing
请求 request
响应 response
状态码 status
报错 error
错误 error
异常 exception
崩溃 crash
性能 performance
内存 memory
并发 concurrency concurrent
线程 thread
进程 process
连接池 pool
连接 connection connect
服务器 server
服务 service
客户端 client
前端 frontend
后端 backend
页面 page
组件 component
样式 style css
按钮 button
表单 form
用户 user
权限 permission
认证 authentication auth
授权 authorization
登录 login
密码 password
令牌 token
密钥 secret
签名 signature sign
加密 encryption encrypt
证书 certificate
域名 domain dns
地址 url address
端口 port
代理 proxy
容器 container docker
镜像 image
集群 cluster
存储 storage
备份 backup
恢复 restore recovery
目录 directory folder
路径 path
脚本 script
命令 command
参数 parameter argument
选项 option
功能开关 feature flag
功能 feature
任务 task
定时任务 cron schedule
分支 branch
合并 merge
提交 commit
代码审查 review
审查 review
仓库 repository repo
流水线 pipeline ci
持续集成 ci
格式化 format formatter
规范 convention
命名 naming
驼峰 camelcase
金额 amount money
价格 price
货币 currency
发票 invoice
订单 order
支付 payment
退款 refund
客户 customer
通知 notification
邮件 email
上传 upload
下载 download
异步 async
回调 callback webhook
插件 plugin
模块 module
函数 function
类型 type
对象 object
数组 array
字符串 string
整数 integer
时间戳 timestamp
时区 timezone
日期 date
编码 encoding
解析 parse
序列化 serialization serialize
分页 pagination
排序 sort
过滤 filter
搜索 search
限流 rate limit
阈值 threshold
加速 faster speed quicker
优化 optimize optimization
调试 debug
生产环境 production prod
生产 production prod
线上 production prod
预发 staging
本地 local
开发环境 development dev
文档 documentation docs
注释 comment
刷新 refresh
会话 session
重定向 redirect
跳转 redirect
浏览器 browser
国际化 i18n internationalization
翻译 translation
无障碍 accessibility a11y
安全 security
漏洞 vulnerability
值班 oncall
事故 incident
死锁 deadlock
并行 parallel
批量 batch bulk
导入 import
导出 export
初始化 initialize init
启动 start startup
重启 restart
健康检查 healthcheck health
指标 metrics
追踪 tracing trace
订阅 subscription
租户 tenant
展示 display render show
显示 display show
渲染 render
换算 convert conversion
转换 convert conversion
保存 save store
删除 delete remove
更新 update
创建 create
修改 modify edit
设置 setting set
默认 default
自动 automatic automatically
手动 manual manually
失败 fail failure failed
成功 success
忽略 ignore
允许 allow
禁止 forbid
校验 validate validation
验证 verify validation
生成 generate
调用 call invoke
返回 return
小数 decimal
精度 precision
四舍五入 rounding round
模板 template
规则 rule
策略 policy strategy
限制 limit restriction
大小 size
长度 length
名称 name
标题 title
描述 description
状态 status state
结果 result
输出 output
输入 input
界面 ui interface
主题 theme
文件夹 folder directory
慢 slow
快 fast quick
锁 lock
表 table
列 column
"""


class _Tables(NamedTuple):
    zh_to_en: dict[str, tuple[str, ...]]   # Chinese word → English index tokens
    en_to_zh: dict[str, tuple[str, ...]]   # English index token → Chinese words (two characters or more)
    gloss: dict[str, str]                  # Chinese word → the English word the embedder reads
    longest: int                           # characters in the longest Chinese word


@functools.lru_cache(maxsize=1)
def _tables() -> _Tables:
    """The glossary parsed once per process."""
    zh_to_en: dict[str, tuple[str, ...]] = {}
    en_to_zh: dict[str, list[str]] = {}
    gloss: dict[str, str] = {}
    for line in _TABLE.strip().splitlines():
        word, *english = line.split()
        tokens = tuple(dict.fromkeys(t for e in english for t in tokenize(e) if t not in STOPWORDS))
        zh_to_en[word] = tokens
        gloss[word] = english[0]
        if len(word) >= 2:
            for token in tokens:
                en_to_zh.setdefault(token, []).append(word)
    longest = max(len(w) for w in zh_to_en)
    return _Tables(zh_to_en, {k: tuple(v) for k, v in en_to_zh.items()}, gloss, longest)


def _chinese_words(run: str) -> list[tuple[int, str]]:
    """Glossary words in a CJK run, longest match first, left to right: (offset, word)."""
    tables = _tables()
    found, i = [], 0
    while i < len(run):
        for size in range(min(tables.longest, len(run) - i), 0, -1):
            if run[i:i + size] in tables.zh_to_en:
                found.append((i, run[i:i + size]))
                i += size
                break
        else:
            i += 1
    return found


def _index_form(word: str) -> tuple[str, ...]:
    """How a Chinese word appears among a memory's index tokens: one token, or its adjacent bigrams."""
    return (word,) if len(word) <= 2 else tuple(word[i:i + 2] for i in range(len(word) - 1))


@functools.lru_cache(maxsize=256)
def cross_terms(query: str) -> dict[str, tuple[tuple[str, ...], ...]]:
    """Query token → its translations, each as the index tokens that must all be present.

    Chinese words give English tokens (`编译` → build, compile) for each of their own tokens; English
    tokens give the Chinese words that translate them (`deploy` → 部署).
    """
    tables = _tables()
    out: dict[str, set] = {}
    text = unicodedata.normalize("NFKC", query or "").casefold()
    for match in _SEGMENT.finditer(text):
        cjk, word = match.group("cjk"), match.group("word")
        if cjk:
            for _, zh in _chinese_words(cjk):
                own = tokenize(zh, query=True) or [zh]
                for token in own:
                    out.setdefault(token, set()).update((en,) for en in tables.zh_to_en[zh])
        elif word:
            for token in tokenize(word):
                for zh in tables.en_to_zh.get(token, ()):
                    out.setdefault(token, set()).add(_index_form(zh))
    return {k: tuple(sorted(v)) for k, v in out.items() if v}


@functools.lru_cache(maxsize=256)   # asked twice per recall: the embedder's text, then the CJK share
def english_gloss(query: str) -> str:
    """The query with every glossary word of its Chinese runs replaced by English, for the embedder;
    the Chinese function words around them go (they only add noise to an English reading)."""
    gloss = _tables().gloss
    text = unicodedata.normalize("NFKC", query or "")

    def replace(match: re.Match) -> str:
        run = match.group("cjk")
        if not run:
            return match.group(0)
        words = _chinese_words(run.casefold())
        if not words:
            return run
        pieces, last = [], 0
        for offset, zh in words:
            pieces.extend(_split_query_cjk(run[last:offset]))
            pieces.append(gloss[zh])
            last = offset + len(zh)
        pieces.extend(_split_query_cjk(run[last:]))
        return " " + " ".join(pieces) + " "

    return re.sub(r"\s+", " ", _SEGMENT.sub(replace, text)).strip()

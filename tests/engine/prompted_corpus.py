"""A corpus of prompts with tool schemas and the arguments a model would take from them, in
English and Chinese, grouped by the rule of :mod:`mockserver.engine.structured.bindings` each one
exercises. Used by tests/engine/test_prompted_arguments.py and benchmarks/micro/prompted_arguments.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Case:
    rule: str
    prompt: str
    tool: str
    parameters: dict[str, Any]
    expected: dict[str, Any]
    system: str = ""
    language: str = field(default="en")


def obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties) if required is None else required}


S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741
N = {"type": "number"}
B = {"type": "boolean"}
WEATHER = obj({"city": S, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, ["city"])
LOCATION = obj({"location": {"type": "string", "description": "City and country, e.g. Bogotá, Colombia"}})
CUSTOMER = obj({"name": S, "email": {"type": "string", "format": "email"}}, ["name"])
MAGIC = obj({"input": I})
SEARCH = obj({"query": S, "max_results": I}, ["query"])
FLIGHTS = obj({"origin": S, "destination": S, "date": {"type": "string", "format": "date"}}, ["origin", "destination"])
TICKET = obj({"title": S, "priority": {"type": "string", "enum": ["low", "medium", "high"]}}, ["title", "priority"])
MEETING = obj({"start": {"type": "string", "format": "date-time"}, "topic": S}, ["start", "topic"])
ORDER = obj({"product_id": I, "quantity": I}, ["product_id", "quantity"])
CONVERT = obj({"amount": N, "from_currency": {"type": "string", "enum": ["USD", "EUR", "CNY", "JPY"]},
               "to_currency": {"type": "string", "enum": ["USD", "EUR", "CNY", "JPY"]}})  # fmt: skip
REMINDER = obj({"text": S, "minutes": I})
FETCH = obj({"url": {"type": "string", "format": "uri"}})
ADD = obj({"a": N, "b": N})
TRANSLATE = obj({"text": S, "target_language": {"type": "string", "enum": ["English", "French", "Chinese", "German"]}})
LIGHT = obj({"room": S, "on": B})
USER = obj({"user_id": I})
STOCK = obj({"symbol": S})
BOOK = obj({"author": S}, ["author"])
TEAM = obj({"team_name": {"type": "string", "description": "the name of the team"}})
NOTE = obj({"content": S})
ZH_TICKET = obj({"title": S, "priority": {"type": "string", "enum": ["低", "中", "高"]}}, ["title", "priority"])

CASES: list[Case] = [
    # -- A call written out ---------------------------------------------------------------------
    Case("call", "What is magic_function(3)?", "magic_function", MAGIC, {"input": 3}),
    Case("call", "Please run magic_function(input=42) for me", "magic_function", MAGIC, {"input": 42}),
    Case("call", 'get_weather("Oslo")', "get_weather", WEATHER, {"city": "Oslo"}),
    Case("call", "Call get_weather(city='Paris', unit='celsius')", "get_weather", WEATHER,
         {"city": "Paris", "unit": "celsius"}),
    Case("call", "Compute add(2, 3.5) please", "add", ADD, {"a": 2, "b": 3.5}),
    Case("call", "place_order(product_id=17, quantity=2)", "place_order", ORDER, {"product_id": 17, "quantity": 2}),
    Case("call", "set_light(room: kitchen, on: true)", "set_light", LIGHT, {"room": "kitchen", "on": True}),
    Case("call", "请调用 magic_function(7) 并告诉我结果", "magic_function", MAGIC, {"input": 7}, language="zh"),
    Case("call", "执行 get_weather(\"北京\")", "get_weather", WEATHER, {"city": "北京"}, language="zh"),
    Case("call", "create_customer(name=\"你好啊集团\")", "create_customer", CUSTOMER, {"name": "你好啊集团"},
         language="zh"),
    Case("system call", "Go ahead.", "magic_function", MAGIC, {"input": 12},
         system="Always answer by calling magic_function(12)."),
    Case("system call", "开始吧", "lookup_user", USER, {"user_id": 1001}, system="调用 lookup_user(user_id=1001)。",
         language="zh"),
    # -- The parameter's name, then the value ------------------------------------------------------
    Case("named value", "city: Oslo", "get_weather", WEATHER, {"city": "Oslo"}),
    Case("named value", "Weather please, city = Reykjavik", "get_weather", WEATHER, {"city": "Reykjavik"}),
    Case("named value", "Look up the user whose user id is 4521", "lookup_user", USER, {"user_id": 4521}),
    Case("named value", "Set a reminder, text: water the plants, minutes: 30", "remind", REMINDER,
         {"text": "water the plants", "minutes": 30}),
    Case("named value", 'Create a ticket with title "Login page broken" and priority high', "create_ticket", TICKET,
         {"title": "Login page broken", "priority": "high"}),
    Case("named value", "Order product_id 88, quantity 3", "place_order", ORDER, {"product_id": 88, "quantity": 3}),
    Case("named value", "城市：上海", "get_weather", WEATHER, {"city": "上海"}, language="zh"),
    Case("named value", "查一下天气，城市是广州", "get_weather", WEATHER, {"city": "广州"}, language="zh"),
    Case("named value", "新建客户，名称是你好啊集团", "create_customer", CUSTOMER, {"name": "你好啊集团"},
         language="zh"),
    Case("named value", "记一条笔记，内容：明天交报告", "add_note", NOTE, {"content": "明天交报告"}, language="zh"),
    # -- An enum member the text mentions -----------------------------------------------------------
    Case("enum", "What's the weather in Boston in fahrenheit?", "get_weather", WEATHER,
         {"city": "Boston", "unit": "fahrenheit"}),
    Case("enum", "Open a low priority ticket titled 'Typo on homepage'", "create_ticket", TICKET,
         {"title": "Typo on homepage", "priority": "low"}),
    Case("enum", "Translate 'good morning' into French", "translate", TRANSLATE,
         {"text": "good morning", "target_language": "French"}),
    Case("enum", "Convert 100 USD to EUR", "convert", CONVERT,
         {"amount": 100, "from_currency": "USD", "to_currency": "EUR"}),
    Case("enum", "把 50 CNY 换成 JPY", "convert", CONVERT, {"amount": 50, "from_currency": "CNY", "to_currency": "JPY"},
         language="zh"),
    Case("enum", "提交一个工单，标题为「无法登录」，优先级高", "create_ticket", ZH_TICKET,
         {"title": "无法登录", "priority": "高"}, language="zh"),
    # -- A number near the parameter's name --------------------------------------------------------
    Case("number near name", "Set a reminder to stretch in 15 minutes", "remind", REMINDER, {"minutes": 15}),
    Case("number near name", "Search for hiking boots, 5 max results", "search", SEARCH,
         {"query": "hiking boots", "max_results": 5}),
    Case("number near name", "I need 4 quantity of product 12", "place_order", ORDER, {"quantity": 4}),
    # -- ISO dates, e-mail addresses, URLs ---------------------------------------------------------
    Case("format", "Find flights from Oslo to Paris on 2026-12-20", "find_flights", FLIGHTS,
         {"origin": "Oslo", "destination": "Paris", "date": "2026-12-20"}),
    Case("format", "Schedule a meeting at 2026-03-01T09:30:00Z about the roadmap", "schedule", MEETING,
         {"start": "2026-03-01T09:30:00Z", "topic": "roadmap"}),
    Case("format", "Schedule a meeting on 2026-03-02 about hiring", "schedule", MEETING,
         {"start": "2026-03-02T00:00:00Z", "topic": "hiring"}),
    Case("format", "Add a customer named Ada Lovelace, ada@example.com", "create_customer", CUSTOMER,
         {"name": "Ada Lovelace", "email": "ada@example.com"}),
    Case("format", "Fetch https://example.com/docs/api and summarise it", "fetch", FETCH,
         {"url": "https://example.com/docs/api"}),
    Case("format", "预订 2026-05-01 从上海到东京的航班", "find_flights", FLIGHTS,
         {"origin": "上海", "destination": "东京", "date": "2026-05-01"}, language="zh"),
    Case("format", "添加客户，名为李雷，邮箱 lilei@example.cn", "create_customer", CUSTOMER,
         {"name": "李雷", "email": "lilei@example.cn"}, language="zh"),
    Case("format", "抓取 https://example.org/新闻 的内容", "fetch", FETCH, {"url": "https://example.org/新闻"},
         language="zh"),
    # -- Cue phrases ("named X", "in X", "for X", ...) ----------------------------------------------
    Case("phrase", "Create a customer named 你好啊集团", "create_customer", CUSTOMER, {"name": "你好啊集团"}),
    Case("phrase", "Create a customer called Acme Corp", "create_customer", CUSTOMER, {"name": "Acme Corp"}),
    Case("phrase", "What's the weather in Oslo?", "get_weather", WEATHER, {"city": "Oslo"}),
    Case("phrase", "How hot is it in New York today?", "get_weather", WEATHER, {"city": "New York"}),
    Case("phrase", "Get me the weather for Lisbon", "get_weather", WEATHER, {"city": "Lisbon"}),
    Case("phrase", "Find books by Ursula K. Le Guin", "find_books", BOOK, {"author": "Ursula K. Le Guin"}),
    Case("phrase", "Book flights from Berlin to Rome", "find_flights", FLIGHTS,
         {"origin": "Berlin", "destination": "Rome"}),
    Case("phrase", "Search for vegan lasagna recipes", "search", SEARCH, {"query": "vegan lasagna recipes"}),
    Case("phrase", "创建一个名为你好啊集团的客户", "create_customer", CUSTOMER, {"name": "你好啊集团"}, language="zh"),
    Case("phrase", "新建一个叫做星辰科技的客户", "create_customer", CUSTOMER, {"name": "星辰科技"}, language="zh"),
    Case("phrase", "北京今天天气怎么样？", "get_weather", WEATHER, {"city": "北京"}, language="zh"),
    Case("phrase", "请帮我查询上海的天气", "get_weather", WEATHER, {"city": "上海"}, language="zh"),
    Case("phrase", "我现在在杭州，天气如何？", "get_weather", WEATHER, {"city": "杭州"}, language="zh"),
    Case("phrase", "搜索 机器学习入门", "search", SEARCH, {"query": "机器学习入门"}, language="zh"),
    Case("phrase", "从北京到成都的航班", "find_flights", FLIGHTS, {"origin": "北京", "destination": "成都"},
         language="zh"),
    Case("phrase (description)", "What time is it in Bogotá?", "get_time", LOCATION, {"location": "Bogotá"}),
    Case("phrase (description)", "Create a team named Rocket", "create_team", TEAM, {"team_name": "Rocket"}),
    Case("phrase (description)", "建一个名为火箭队的团队", "create_team", TEAM, {"team_name": "火箭队"},
         language="zh"),
    # -- Required parameters still unbound: numbers, quoted strings, any cue phrase ------------------
    Case("number", "Use the magic function on 9", "magic_function", MAGIC, {"input": 9}),
    Case("number", "Add 2 and 40", "add", ADD, {"a": 2, "b": 40}),
    Case("number", "用魔法函数计算 5", "magic_function", MAGIC, {"input": 5}, language="zh"),
    Case("number", "Show me user 314", "lookup_user", USER, {"user_id": 314}),
    Case("quoted", "Save a note: 'buy oat milk'", "add_note", NOTE, {"content": "buy oat milk"}),
    Case("quoted", 'Look up the ticker "NVDA"', "get_stock", STOCK, {"symbol": "NVDA"}),
    Case("quoted", "记下“周五前提交预算”", "add_note", NOTE, {"content": "周五前提交预算"}, language="zh"),
    Case("quoted", "翻译「早上好」", "translate", TRANSLATE, {"text": "早上好"}, language="zh"),
    Case("phrase (any)", "What's the price of AAPL for today?", "get_stock", STOCK, {"symbol": "AAPL"}),
    # -- Written after the rules were settled, and left as they came out -----------------------------
    Case("call", "Can you evaluate magic_function( 8 ) ?", "magic_function", MAGIC, {"input": 8}),
    Case("call", "functions.get_weather(city=\"Madrid\")", "get_weather", WEATHER, {"city": "Madrid"}),
    Case("named value", "unit=celsius, city=Cairo", "get_weather", WEATHER, {"city": "Cairo", "unit": "celsius"}),
    Case("named value", "优先级：中，标题：打印机卡纸", "create_ticket", ZH_TICKET,
         {"title": "打印机卡纸", "priority": "中"},
         language="zh"),
    Case("enum", "Give me Tokyo's forecast in celsius", "get_weather", WEATHER, {"unit": "celsius"}),
    Case("enum", "把「你好」翻译成 German", "translate", TRANSLATE, {"text": "你好", "target_language": "German"},
         language="zh"),
    Case("number near name", "Remind me in 45 minutes to check the oven", "remind", REMINDER, {"minutes": 45}),
    Case("format", "I want to fly from Denver to Austin on 2027-01-15", "find_flights", FLIGHTS,
         {"origin": "Denver", "destination": "Austin", "date": "2027-01-15"}),
    Case("format", "Email the invoice to bob.smith@example.com", "send_invoice", obj({"email": S}),
         {"email": "bob.smith@example.com"}),
    Case("phrase", "Register a company called Blue Harbor Logistics", "create_customer", CUSTOMER,
         {"name": "Blue Harbor Logistics"}),
    Case("phrase", "What's the weather like in São Paulo right now?", "get_weather", WEATHER, {"city": "São Paulo"}),
    Case("phrase", "深圳明天的天气", "get_weather", WEATHER, {"city": "深圳"}, language="zh"),
    Case("phrase", "帮我创建一个名叫小明的用户", "create_customer", CUSTOMER, {"name": "小明"}, language="zh"),
    Case("number", "Order 3 of product 55", "place_order", ORDER, {"product_id": 55, "quantity": 3}),
    Case("quoted", "Find the stock 'TSLA'", "get_stock", STOCK, {"symbol": "TSLA"}),
]  # fmt: skip

#!/usr/bin/env python3
"""The real reader of chat templates, python3-jinja2, as the two kinds of renderer use it.

    oracle_templates.py sandbox FILE...   every template renders as transformers renders it;
    oracle_templates.py reach FILE...     prints "reached NAME" or "quiet NAME" per file: whether
                                          a plain jinja2.Environment render reaches os.popen

A FILE is a .jinja file, a tokenizer_config.json (its chat_template: a string or a list of
{"name", "template"}) or a GGUF file (tokenizer.chat_template and tokenizer.chat_template.*),
read here with Python's own json module and a reading of the GGUF header written from the
specification, so the template the oracle renders is the one stguard was given.

transformers' renderer: src/transformers/utils/chat_template_utils.py, _compile_jinja_template
(huggingface/transformers at 5e43e2e892453b405ce6d2cb94387b3a3213f30a: the file's last function,
its last 73 lines, from `@lru_cache` to `return jinja_env.from_string(chat_template)`): an
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with its AssistantTracker
extension (a `generation` block tag) and jinja2.ext.loopcontrols, a `tojson` filter replaced by
json.dumps, and the globals raise_exception and strftime_now. The same environment is built
below (the extension's tag parses the same way; its tracking of indices is left out).

The plain renderer: a jinja2.Environment(loader=BaseLoader(), trim_blocks=True,
lstrip_blocks=True), the one llama-cpp-python's Jinja2ChatFormatter used before it moved to
the sandbox (CVE-2024-34359). Reaching the payload is seen by an audit hook (sys.addaudithook)
that records and refuses every process-creating event, so nothing is run."""
import json
import os
import struct
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

REFUSED = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
           "os.forkpty", "pty.spawn")
reached = []


def hook(event, args):
    if event in REFUSED:
        reached.append(event)
        raise PermissionError("refused by the oracle: " + event)


class Generation(jinja2.ext.Extension):
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_generation"), [], [], body).set_lineno(
            lineno)

    def _generation(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def sandbox():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime(2024, 7, 26).strftime(fmt)
    return env


TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather of a city",
    "parameters": {"type": "object", "required": ["city"],
                   "properties": {"city": {"type": "string", "description": "the city"}}}}}
CHATS = [
    dict(messages=[{"role": "system", "content": "You are helpful."},
                   {"role": "user", "content": "Hi"},
                   {"role": "assistant", "content": "Hello!"},
                   {"role": "user", "content": "The weather?"}]),
    dict(messages=[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"},
                   {"role": "user", "content": "The weather?"}]),
    dict(messages=[{"role": "user", "content": "Weather in Paris?"},
                   {"role": "assistant", "content": "", "tool_calls": [
                       {"type": "function", "id": "call0",
                        "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
                   {"role": "tool", "name": "get_weather", "tool_call_id": "call0",
                    "content": "22"}], tools=[TOOL]),
    dict(messages=[{"role": "user", "content": "Hi"}]),
]


def gguf_templates(data):
    """tokenizer.chat_template* strings of a GGUF v2/v3 header (the spec's layout)."""
    (version, _tensors, nkv) = struct.unpack_from("<IQQ", data, 4)
    assert data[:4] == b"GGUF" and version in (2, 3)
    pos, out = 24, []
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

    def string(p):
        (n,) = struct.unpack_from("<Q", data, p)
        return data[p + 8:p + 8 + n], p + 8 + n

    def skip(t, p):
        if t == 8:
            return string(p)[1]
        if t == 9:
            (et, n) = struct.unpack_from("<IQ", data, p)
            p += 12
            for _ in range(n):
                p = skip(et, p)
            return p
        return p + sizes[t]

    for _ in range(nkv):
        key, pos = string(pos)
        (t,) = struct.unpack_from("<I", data, pos)
        pos += 4
        if t == 8 and (key == b"tokenizer.chat_template" or
                       key.startswith(b"tokenizer.chat_template.")):
            value, pos = string(pos)
            out.append(value.decode("utf-8"))
        else:
            pos = skip(t, pos)
    return out


def templates_of(path):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".gguf"):
        return gguf_templates(data)
    if path.endswith(".json"):
        value = json.loads(data.decode("utf-8"))["chat_template"]
        if isinstance(value, list):
            return [entry["template"] for entry in value]
        return [value]
    return [data.decode("utf-8")]


def renders_in_sandbox(text):
    template = sandbox().from_string(text)
    last = None
    for chat in CHATS:
        try:
            template.render(bos_token="<s>", eos_token="</s>", add_generation_prompt=True,
                            **chat)
            return None
        except jinja2.exceptions.SecurityError as e:
            return "the sandbox refused it: %s" % e
        except Exception as e:  # a template may refuse one chat (roles, tools): try the next
            last = e
    return "no chat rendered: %r" % last


def reaches(text):
    env = jinja2.Environment(loader=jinja2.BaseLoader(), trim_blocks=True, lstrip_blocks=True)
    before = len(reached)
    try:
        template = env.from_string(text)
    except Exception:
        return False
    for chat in CHATS:
        try:
            template.render(bos_token="<s>", eos_token="</s>", add_generation_prompt=True,
                            raise_exception=raise_exception, **chat)
        except Exception:
            pass
        if len(reached) > before:
            return True
    return False


def main():
    mode, files = sys.argv[1], sys.argv[2:]
    failed = 0
    if mode == "sandbox":
        for path in files:
            for text in templates_of(path):
                why = renders_in_sandbox(text)
                if why is not None:
                    print("does not render: %s: %s" % (os.path.basename(path), why))
                    failed += 1
        print("sandbox: %d files, %d failed" % (len(files), failed))
        return 1 if failed else 0
    sys.addaudithook(hook)
    for path in files:
        hit = any(reaches(text) for text in templates_of(path))
        print("%s %s" % ("reached" if hit else "quiet", path))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Writes the chat-template fixtures of tests/templates/ (docs/templates.md).

    gen_templates.py OUT_DIR [MUTANTS]

OUT_DIR/malicious/*.jinja    sandbox-escape gadgets, one route each (the payload: os.popen);
OUT_DIR/json/*.json          tokenizer_config.json files as transformers writes them
                             (json.dumps(config, indent=2, sort_keys=True, ensure_ascii=False)),
                             for every benign (tests/templates/data/benign) and malicious
                             template, a list form ([{"name", "template"}, ...]) and an ASCII
                             form (ensure_ascii=True: every non-ASCII character a \\u escape);
OUT_DIR/gguf/*.gguf          GGUF v3 files holding tokenizer.chat_template (and
                             tokenizer.chat_template.tool_use), written with tests/fixtures/gen_gguf.py;
OUT_DIR/mutants/*.jinja      MUTANTS seeded mutations of the benign templates: gadget pieces
                             spliced into them, then characters dropped, doubled or swapped.
The file names say what a file must be: benign-* ok, malicious-* unsafe; mutants are judged by
the oracle (oracle_templates.py reach)."""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import gen_gguf  # noqa: E402  (the project's GGUF writer)

PAYLOAD = "popen('true').read()"


def route(name, prelude=""):
    """object's subclasses -> warnings.catch_warnings -> its module's sys -> os.popen, every
    attribute looked up with |attr and a name spelled by name(word) (a subscript would not do:
    a class subscripted is a generic alias, not an attribute lookup)."""
    def attr(expr, word):
        return "(%s|attr(%s))" % (expr, name(word))
    base = attr(attr("()", "class"), "base")
    cls_init_globals = attr(attr("c", "init"), "globals")
    return (prelude + "{%% for c in %s() %%}" % attr(base, "subclasses")
            + "{%% if %s == 'catch_warnings' %%}" % attr("c", "name")
            + "{{ %s['sys'].modules['os'].%s }}{%% endif %%}{%% endfor %%}"
            % (cls_init_globals, PAYLOAD))
# Each reaches os.popen under a plain jinja2.Environment by another route.
MALICIOUS = {
    "self-globals": "{{ self.__init__.__globals__.__builtins__.__import__('os')." + PAYLOAD + " }}",
    "cycler": "{{ cycler.__init__.__globals__.os." + PAYLOAD + " }}",
    "joiner": "{{ joiner.__init__.__globals__.os." + PAYLOAD + " }}",
    "lipsum": "{{ lipsum.__globals__['os']." + PAYLOAD + " }}",
    "namespace-init": "{{ namespace.__init__.__globals__.os." + PAYLOAD + " }}",
    "subclasses": "{% for c in ''.__class__.__mro__[1].__subclasses__() %}"
                  "{% if c.__name__ == 'catch_warnings' %}"
                  "{{ c.__init__.__globals__['sys'].modules['os']." + PAYLOAD + " }}"
                  "{% endif %}{% endfor %}",
    # names built from pieces, looked up with |attr or a subscript
    "attr-concat": "{% set u = '_' ~ '_' %}"
                   "{{ ((cycler|attr(u ~ 'init' ~ u))|attr(u ~ 'globals' ~ u))['os']." + PAYLOAD
                   + " }}",
    "attr-only-concat": "{% set u = '_' ~ '_' %}"
                        "{% set o = ((()|attr(u ~ 'class' ~ u))|attr(u ~ 'base' ~ u)) %}"
                        "{% for c in (o|attr(u ~ 'subclasses' ~ u))() %}"
                        "{% if (c|attr(u ~ 'name' ~ u)) == 'catch_warnings' %}"
                        "{{ ((c|attr(u ~ 'init' ~ u))|attr(u ~ 'globals' ~ u))['sys'].modules['os']."
                        + PAYLOAD + " }}{% endif %}{% endfor %}",
    "adjacent-literals": route(lambda w: "'__%s' '%s__'" % (w[:2], w[2:])),
    "hex-escapes": route(lambda w: "'\\x5f\\x5f%s\\x5f\\x5f'" % w),
    "format-filter": route(lambda w: "u ~ '%s' ~ u" % w, "{% set u = '%c%c'|format(95, 95) %}"),
    "select-string": route(lambda w: "u ~ '%s' ~ u" % w,
                           "{% set u = (()|select|string)[24] %}{% set u = u ~ u %}"),
    "reverse": route(lambda w: "'__%s__'|reverse" % w[::-1]),
    "join": route(lambda w: "u ~ '%s' ~ u" % w, "{% set u = ('_', '_')|join %}"),
    "block-set": route(lambda w: "u ~ '%s' ~ u" % w, "{% set u %}__{% endset %}"),
    "namespace-attr": route(lambda w: "ns.%s" % w,
                            "{% set ns = namespace(class='__class__', base='__base__', "
                            "subclasses='__subclasses__', name='__name__', init='__init__', "
                            "globals='__globals__') %}"),
    "macro-param": route(lambda w: "k ~ '%s' ~ k" % w,
                         "{% macro dunder(x) %}{% endmacro %}{% set k = '_' ~ '_' %}"),
    "get-default": route(lambda w: "d.get('x', '__%s__')" % w, "{% set d = {} %}"),
    "map-attribute-name": route(lambda w: "(['__%s__']|map('string')|first)" % w),
    "map-attribute": "{% for c in ((([()]|map(attribute='__class__')|first)|attr('__base__'))"
                     "|attr('__subclasses__'))() %}{% if c.__name__ == 'catch_warnings' %}"
                     "{{ c.__init__.__globals__['sys'].modules['os']." + PAYLOAD
                     + " }}{% endif %}{% endfor %}",
    # no underscore at all: a generator's frame, its module's globals, typing's sys
    "generator-frame": "{{ (()|select).gi_frame.f_globals.typing.sys.modules.os." + PAYLOAD
                       + " }}",
    "generator-frame-items": "{% set g = ()|select %}"
                             "{{ g['gi' ~ '_frame']['f_glob' 'als']['typing'].sys.modules['os']."
                             + PAYLOAD + " }}",
    # a real template with one gadget line added (what a poisoned repository ships)
    "chatml-with-gadget": "{% for message in messages %}{{'<|im_start|>' + message['role'] + "
                          "'\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
                          "{{ cycler.__init__.__globals__.os." + PAYLOAD + " }}"
                          "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
                          "{% endif %}",
}

# Pieces the mutations splice into benign templates (parts of the gadgets above).
PIECES = [
    "{{ cycler.__init__.__globals__.os." + PAYLOAD + " }}",
    "{{ self.__init__.__globals__.__builtins__.__import__('os')." + PAYLOAD + " }}",
    "{{ lipsum.__globals__['os']." + PAYLOAD + " }}",
    "{% set u = '_' ~ '_' %}{{ ((joiner|attr(u ~ 'init' ~ u))|attr(u ~ 'globals' ~ u))['os']."
    + PAYLOAD + " }}",
    "{{ namespace.__init__.__globals__.os." + PAYLOAD + " }}",
    "{{ message.__class__ }}",
    "{% set x = messages|attr('__len__') %}",
]


def tokenizer_config(template, ascii_only=False):
    """What transformers' save_pretrained writes (tokenization_utils_base.py, save_pretrained:
    json.dumps(tokenizer_config, indent=2, sort_keys=True, ensure_ascii=False) + "\\n")."""
    config = {
        "add_bos_token": True,
        "bos_token": "<s>",
        "chat_template": template,
        "clean_up_tokenization_spaces": False,
        "eos_token": "</s>",
        "model_max_length": 4096,
        "tokenizer_class": "PreTrainedTokenizerFast",
    }
    return json.dumps(config, indent=2, sort_keys=True, ensure_ascii=ascii_only) + "\n"


def write(path, text):
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def gguf_with(templates):
    kvs = [gen_gguf.kv("general.architecture", gen_gguf.STR, "llama")]
    for name, text in templates:
        key = "tokenizer.chat_template" + ("." + name if name else "")
        kvs.append(gen_gguf.kv(key, gen_gguf.STR, text))
    return gen_gguf.gguf(kvs=kvs)


def mutate(rng, text):
    """A gadget piece spliced in at a tag boundary, then up to three character edits."""
    cuts = [i for i in range(len(text) + 1) if i == 0 or text[i - 1:i + 1] in ("}}", "%}")
            or text[i - 1:i] == "}"]
    at = rng.choice(cuts) if cuts else 0
    out = text[:at] + rng.choice(PIECES) + text[at:]
    for _ in range(rng.randrange(4)):
        if not out:
            break
        i = rng.randrange(len(out))
        op = rng.randrange(3)
        if op == 0:
            out = out[:i] + out[i + 1:]
        elif op == 1:
            out = out[:i] + out[i] + out[i:]
        elif i + 1 < len(out):
            out = out[:i] + out[i + 1] + out[i] + out[i + 2:]
    return out


def main():
    out = sys.argv[1]
    mutants = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    benign_dir = os.path.join(HERE, "data", "benign")
    benign = {}
    for name in sorted(os.listdir(benign_dir)):
        if name.endswith(".jinja"):
            with open(os.path.join(benign_dir, name), encoding="utf-8", newline="") as f:
                benign[name[:-6]] = f.read()
    for sub in ("malicious", "json", "gguf", "mutants"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    for name, text in MALICIOUS.items():
        write(os.path.join(out, "malicious", "malicious-%s.jinja" % name), text)
        write(os.path.join(out, "json", "malicious-%s.json" % name), tokenizer_config(text))
        with open(os.path.join(out, "gguf", "malicious-%s.gguf" % name), "wb") as f:
            f.write(gguf_with([(None, "{{ bos_token }}"), ("tool_use", text)]))
    names = sorted(benign)
    for k, name in enumerate(names):
        text = benign[name]
        write(os.path.join(out, "json", "benign-%s.json" % name), tokenizer_config(text))
        if k % 3 == 0:
            write(os.path.join(out, "json", "benign-ascii-%s.json" % name),
                  tokenizer_config(text, ascii_only=True))
        if k % 4 == 0:
            other = benign[names[(k + 1) % len(names)]]
            listed = [{"name": "default", "template": text}, {"name": "tool_use", "template": other}]
            write(os.path.join(out, "json", "benign-list-%s.json" % name), tokenizer_config(listed))
        with open(os.path.join(out, "gguf", "benign-%s.gguf" % name), "wb") as f:
            f.write(gguf_with([(None, text)]))
    rng = random.Random(26)
    for k in range(mutants):
        name = names[k % len(names)]
        write(os.path.join(out, "mutants", "mutant-%03d-%s.jinja" % (k, name)),
              mutate(rng, benign[name]))


if __name__ == "__main__":
    main()

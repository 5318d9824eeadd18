#!/usr/bin/python3
"""OpenVINO IR fixtures for tests/siblings/script_openvino.sh (no OpenVINO in Debian).

  gen_openvino.py OUT

Writes the IR 11 that OpenVINO's serializer writes (openvinotoolkit/openvino,
src/core/src/pass/serialize.cpp @ 74959490cbbd8eafd8bf4f52407507f3129f3557, XmlSerializer:
pugixml output with tab indentation, `<?xml version="1.0"?>`, `<net name= version="11">`,
`<layers>` of `<layer id= name= type= version=>`, a Const layer's `<data element_type= shape=`
followed by the `offset=` and `size=` its ConstantWriter gives (equal constants share one range
of the .bin), then `<edges>` and `<rt_info>`), and the weights file beside it, as the frontend
reads them
(src/frontends/ir/src/frontend.cpp @ eda483f91709e08deb9ff26b6dfe3626df842cdb: the weights of
`X.xml` are `X.bin`; ir_deserializer.cpp @ 6dc130de6f34ed891da8e4ba51f51cfeb6d920c6,
XmlDeserializer::on_adapter: offset + size inside the weights, size at least
ceil(elements x bits / 8)). The XML is checked with Python's expat (xml.etree) after writing.

OUT/repo/: a sentence-transformers-shaped repo: modules.json, config.json, README.md and
  openvino/openvino_model.xml + .bin, openvino/openvino_model_qint8_quantized.xml + .bin
  (a Loop whose <body> holds a Const of its own), plus onnx/model.onnx-free text files.
OUT/short/: the IR with its .bin cut by 10 bytes."""
import json
import os
import struct
import sys
import xml.etree.ElementTree as ET
from xml.sax.saxutils import quoteattr

BITS = {"f32": 32, "f16": 16, "i64": 64, "i8": 8, "u8": 8, "u4": 4}


class IR:
    def __init__(self, name):
        self.name = name
        self.lines = []
        self.weights = bytearray()
        self.next_id = 0

    def layer(self, indent, type_, data=None, extra=""):
        lid = self.next_id
        self.next_id += 1
        t = "\t" * indent
        attrs = "" if data is None else " ".join("%s=%s" % (k, quoteattr(v)) for k, v in data)
        self.lines.append('%s<layer id="%d" name="%s_%d" type="%s" version="opset1">'
                          % (t, lid, type_, lid, type_))
        if data is not None:
            self.lines.append("%s\t<data %s />" % (t, attrs))
        if extra:
            self.lines.append(extra)
        self.lines.append("%s</layer>" % t)
        return lid

    def const(self, indent, etype, shape, fill=0x3C):
        count = 1
        for d in shape:
            count *= d
        size = (count * BITS[etype] + 7) // 8
        offset = len(self.weights)
        self.weights += bytes((fill + i) & 0xFF for i in range(size))
        return self.layer(indent, "Const", [("element_type", etype),
                                            ("shape", ", ".join(str(d) for d in shape)),
                                            ("offset", str(offset)), ("size", str(size))])

    def text(self):
        rt = ('\t<rt_info>\n\t\t<Runtime_version value="2024.4.0-16579-c3152d32c9c-releases/2024/4" />'
              '\n\t\t<conversion_parameters>\n\t\t\t<framework value="pytorch" />\n'
              '\t\t\t<is_python_object value="True" />\n\t\t</conversion_parameters>\n'
              '\t\t<optimum>\n\t\t\t<optimum_version value="1.23.3" />\n'
              '\t\t\t<transformers_version value="4.46.2" />\n\t\t</optimum>\n\t</rt_info>')
        return ('<?xml version="1.0"?>\n<net name=%s version="11">\n\t<layers>\n%s\n\t</layers>\n'
                '\t<edges>\n\t\t<edge from-layer="0" from-port="0" to-layer="1" to-port="0" />\n'
                '\t</edges>\n%s\n</net>\n' % (quoteattr(self.name), "\n".join(self.lines), rt))


def model(name, quantized):
    ir = IR(name)
    ir.layer(2, "Parameter", [("shape", "?,?"), ("element_type", "i64")],
             '\t\t\t<rt_info>\n\t\t\t\t<attribute name="fused_names" version="0" value="a&lt;b" />'
             '\n\t\t\t</rt_info>')
    ir.const(2, "f32", [30522, 8])
    ir.const(2, "i64", [2])
    if quantized:
        ir.const(2, "i8", [8, 8])
        ir.const(2, "u4", [3, 3])
        # a constant equal to Const_2: the writer points it at the same range
        ir.layer(2, "Const", [("element_type", "i64"), ("shape", "2"), ("offset", str(30522 * 8 * 4)),
                              ("size", "16")])
        body = IR(name)
        body.weights = ir.weights
        body.next_id = 100
        body.const(6, "f16", [8])
        ir.layer(2, "Loop", None, "\t\t\t<body>\n\t\t\t\t<layers>\n%s\n\t\t\t\t</layers>\n"
                 "\t\t\t</body>" % "\n".join(body.lines))
    else:
        ir.const(2, "f16", [8, 8])
    ir.layer(2, "Result")
    return ir


def write(dirname, stem, ir, cut=0):
    os.makedirs(dirname, exist_ok=True)
    xml = ir.text()
    ET.fromstring(xml)  # expat reads it
    with open(os.path.join(dirname, stem + ".xml"), "w") as f:
        f.write(xml)
    with open(os.path.join(dirname, stem + ".bin"), "wb") as f:
        f.write(bytes(ir.weights[: len(ir.weights) - cut]))


def main(out):
    repo = os.path.join(out, "repo")
    os.makedirs(os.path.join(repo, "openvino"))
    with open(os.path.join(repo, "modules.json"), "w") as f:
        json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}], f)
    with open(os.path.join(repo, "config.json"), "w") as f:
        json.dump({"architectures": ["BertModel"], "model_type": "bert"}, f)
    with open(os.path.join(repo, "README.md"), "w") as f:
        f.write("---\nlibrary_name: sentence-transformers\n---\n# all-MiniLM-like\n")
    write(os.path.join(repo, "openvino"), "openvino_model", model("Model0", False))
    write(os.path.join(repo, "openvino"), "openvino_model_qint8_quantized", model("Model1", True))
    write(os.path.join(out, "short"), "openvino_model", model("Model0", False), cut=10)
    assert struct.calcsize("<f") == 4


if __name__ == "__main__":
    main(sys.argv[1])

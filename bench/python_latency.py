"""Latency per file: stguard.scan in-process against spawning `stguard scan`, side by side
(bench/run_python.sh runs it). Prints the median of N runs per file and the ratio."""

import json
import os
import pathlib
import statistics
import subprocess
import tempfile
import time

import stguard

ROOT = pathlib.Path(os.environ["STG_SOURCE_DIR"])
CLI = os.environ["STGUARD_CLI"]
RUNS = int(os.environ.get("RUNS", "50"))


def median_seconds(fn, runs=RUNS):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def spawn(path):
    out = subprocess.run([CLI, "scan", "--format", "json", "--no-digest", str(path)],
                         capture_output=True, text=True)
    return json.loads(out.stdout.splitlines()[0])


def main():
    files = [ROOT / "corpus/examples/model.safetensors", ROOT / "corpus/examples/torch/pytorch_model.bin",
             ROOT / "corpus/examples/unsafe/os_system.pkl"]
    with tempfile.TemporaryDirectory() as tmp:
        # a Llama-sized header: 291 tensors, no data beyond what the offsets need
        import struct
        header, pos = {}, 0
        for i in range(291):
            header[f"model.layers.{i}.weight"] = {"dtype": "BF16", "shape": [4, 4], "data_offsets": [pos, pos + 32]}
            pos += 32
        text = json.dumps(header).encode()
        text += b" " * ((8 - len(text) % 8) % 8)
        big = pathlib.Path(tmp) / "llama_like.safetensors"
        big.write_bytes(struct.pack("<Q", len(text)) + text + b"\0" * pos)
        files.append(big)
        print(f"{'file':32} {'in-process':>12} {'spawn CLI':>12} {'ratio':>7} {'safe_open+load':>15}")
        for p in files:
            a = median_seconds(lambda: stguard.scan(p, digest=False))
            b = median_seconds(lambda: spawn(p), runs=max(5, RUNS // 5))
            load = ""
            if p.suffix == ".safetensors":
                def open_all():
                    with stguard.safe_open(p) as f:
                        for k in f.keys():
                            f.get_tensor(k)
                load = f"{median_seconds(open_all) * 1e6:12.1f} us"
            assert stguard.scan(p, digest=False).verdict.label == spawn(p)["verdict"]
            print(f"{p.name:32} {a * 1e6:9.1f} us {b * 1e6:9.1f} us {b / a:6.1f}x {load:>15}")


main()

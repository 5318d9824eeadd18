// Writes the libtorch fixtures of tests/torchscript into OUTDIR (tests/data/torchscript/libtorch)
// with libtorch's own C++ writers (Debian's libtorch-dev, torch 1.13.1), as programs built on
// libtorch write them:
// - rust_model.ot: torch::serialize::OutputArchive, one write(name, tensor, false) per named
//   tensor, then save_to(path): what tch-rs's VarStore::save / Tensor::save_multi do
//   (LaurentMazare/tch-rs torch-sys/libtch/torch_api.cpp, at_save_multi, commit
//   008832637e74a3c6745873dbf22a2d7e9e8ef918). The archive is a TorchScript module of class
//   __torch__.Module whose only code is its attribute declarations.
// - tensor.pt: torch::save(tensor, path) (tch's Tensor::save: at_save).
// - module.pt: torch::jit::Module::save of a module built in C++ with a parameter, a List[int]
//   attribute (pickled through torch.jit._pickle.build_intlist) and a forward method (tch's
//   CModule::save).
// - pickle_save.pt: torch::pickle_save of a List[int]: a zip with data.pkl and no constants.pkl,
//   so torch.load unpickles it in Python (the near miss of the TorchScript route).
// The output is deterministic (script_libtorch.sh writes it twice and compares with the
// committed bytes). Build: g++ -std=c++17 gen_libtorch.cpp -I/usr/include/torch/csrc/api/include
// -ltorch -ltorch_cpu -lc10 (script_libtorch.sh does).
#include <torch/script.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <fstream>
#include <iostream>
#include <string>

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::cerr << "usage: gen_libtorch OUTDIR\n";
        return 2;
    }
    const std::string out = argv[1];
    {
        torch::serialize::OutputArchive archive;
        archive.write("embeddings.word_embeddings.weight",
                      torch::arange(6, torch::kFloat).reshape({2, 3}), false);
        archive.write("pooler.dense.bias", torch::ones({3}), false);
        archive.save_to(out + "/rust_model.ot");
    }
    torch::save(torch::arange(4, torch::kFloat), out + "/tensor.pt");
    {
        torch::jit::Module m("__torch__.Small");
        m.register_parameter("weight", torch::ones({2, 2}), false);
        m.register_attribute("sizes", c10::ListType::ofInts(), c10::List<int64_t>({2, 2}));
        m.define("def forward(self, x):\n  return x.matmul(self.weight)\n");
        m.save(out + "/module.pt");
    }
    {
        std::vector<char> bytes = torch::pickle_save(c10::IValue(c10::List<int64_t>({1, 2, 3})));
        std::ofstream f(out + "/pickle_save.pt", std::ios::binary);
        f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        if (!f) {
            return 1;
        }
    }
    return 0;
}

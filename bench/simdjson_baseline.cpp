// Baseline for bench/run_speed.sh: simdjson's On-Demand API (Debian's libsimdjson-dev) walking
// the same fields of a safetensors header that stguard validates: every top-level key, the
// __metadata__ strings, and per tensor the dtype string, the shape and data_offsets arrays as
// unsigned 64-bit integers. Two walks:
//   any   iterate each entry's fields and dispatch on the key (any key order, as a validator must)
//   order find_field in the writer's order (dtype, shape, data_offsets): faster, but only correct
//         for headers written in that order
// It checks nothing a validator checks beyond what simdjson itself does (JSON syntax, UTF-8 of
// the strings it reads, integer range): an upper bound for a validating parser, not a rival.
//
//   simdjson_baseline FILE [any|order] [--seconds S]
// Prints one line of key=value pairs: best and median CPU-time MB/s of header bytes.
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

using namespace simdjson;

static double cpu_now()
{
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t walk_array(ondemand::value v, bool &ok)
{
    uint64_t sum = 0;
    ondemand::array a;
    if (v.get_array().get(a)) {
        ok = false;
        return 0;
    }
    for (auto e : a) {
        uint64_t x;
        if (e.get_uint64().get(x)) {
            ok = false;
            return 0;
        }
        sum += x;
    }
    return sum;
}

static uint64_t walk(ondemand::parser &parser, padded_string &json, bool any_order, bool &ok)
{
    uint64_t sum = 0;
    ondemand::document doc;
    ok = true;
    if (parser.iterate(json).get(doc)) {
        ok = false;
        return 0;
    }
    ondemand::object top;
    if (doc.get_object().get(top)) {
        ok = false;
        return 0;
    }
    for (auto field : top) {
        std::string_view key;
        if (field.unescaped_key().get(key)) {
            ok = false;
            return 0;
        }
        sum += key.size();
        ondemand::object entry;
        if (field.value().get_object().get(entry)) {
            ok = false;
            return 0;
        }
        if (key == "__metadata__") {
            for (auto m : entry) {
                std::string_view mk, mv;
                if (m.unescaped_key().get(mk) || m.value().get_string().get(mv)) {
                    ok = false;
                    return 0;
                }
                sum += mk.size() + mv.size();
            }
            continue;
        }
        if (any_order) {
            for (auto f : entry) {
                std::string_view fk;
                if (f.unescaped_key().get(fk)) {
                    ok = false;
                    return 0;
                }
                if (fk == "dtype") {
                    std::string_view d;
                    if (f.value().get_string().get(d)) {
                        ok = false;
                        return 0;
                    }
                    sum += d.size();
                } else if (fk == "shape" || fk == "data_offsets") {
                    sum += walk_array(f.value(), ok);
                } else {
                    ok = false;
                }
                if (!ok)
                    return 0;
            }
        } else {
            std::string_view d;
            if (entry.find_field("dtype").get_string().get(d)) {
                ok = false;
                return 0;
            }
            sum += d.size();
            sum += walk_array(entry.find_field("shape"), ok);
            sum += walk_array(entry.find_field("data_offsets"), ok);
            if (!ok)
                return 0;
        }
    }
    return sum;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: simdjson_baseline FILE [any|order] [--seconds S]\n");
        return 2;
    }
    bool any_order = !(argc > 2 && std::strcmp(argv[2], "order") == 0);
    double seconds = 2.0;
    for (int i = 2; i + 1 < argc; i++)
        if (std::strcmp(argv[i], "--seconds") == 0)
            seconds = std::atof(argv[i + 1]);
    std::ifstream in(argv[1], std::ios::binary);
    unsigned char len8[8];
    if (!in.read((char *)len8, 8)) {
        std::fprintf(stderr, "simdjson_baseline: cannot read %s\n", argv[1]);
        return 2;
    }
    uint64_t n = 0;
    for (int b = 7; b >= 0; b--)
        n = (n << 8) | len8[b];
    std::string hdr(n, '\0');
    if (!in.read(&hdr[0], (std::streamsize)n)) {
        std::fprintf(stderr, "simdjson_baseline: short header in %s\n", argv[1]);
        return 2;
    }
    while (!hdr.empty() && hdr.back() == ' ') // the writer's padding: simdjson accepts it anyway
        hdr.pop_back();
    padded_string json(hdr);
    ondemand::parser parser;
    bool ok;
    uint64_t check = walk(parser, json, any_order, ok); // warm-up; also sizes the parser once
    if (!ok) {
        std::fprintf(stderr, "simdjson_baseline: %s: walk failed\n", argv[1]);
        return 1;
    }
    std::vector<double> times;
    double spent = 0;
    while (times.size() < 5 || (spent < seconds && times.size() < 200)) {
        double t0 = cpu_now();
        uint64_t s = walk(parser, json, any_order, ok);
        double t = cpu_now() - t0;
        if (!ok || s != check)
            return 2;
        times.push_back(t);
        spent += t;
    }
    std::sort(times.begin(), times.end());
    double mb = (double)n / 1e6;
    std::printf("walk=%s header_bytes=%llu runs=%zu cpu_best_MBps=%.1f "
                "cpu_median_MBps=%.1f\n",
                any_order ? "any" : "order", (unsigned long long)n, times.size(), mb / times[0],
                mb / times[times.size() / 2]);
    return 0;
}

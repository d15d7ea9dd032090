// Shared by the importer fuzz targets (kineto, op_summary): the input written to a file of this
// process (the importers read files), and the properties every imported workload must have.
#pragma once
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "runtime/ops/node_op.h"
#include "tests/fuzz/fuzz_target.h"
#include "traces/import.h"
#include "traces/workload.h"

namespace sfumato::fuzz {

inline std::string write_input(const std::string& name, const uint8_t* data, size_t size) {
    const char* tmp = std::getenv("TMPDIR");
    const std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/sfumato-fuzz-" +
                             std::to_string(static_cast<long>(getpid())) + "-" + name;
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!f.flush()) fail("cannot write the input to " + path);
    return path;
}

inline void check_imported(const import::Imported& im) {
    const workload::Workload& w = im.w;
    size_t kernels = 0;
    for (size_t i = 0; i < w.tasks.size(); ++i) {
        const workload::Task& t = w.tasks[i];
        if (t.kind != workload::Kind::Kernel) continue;
        ++kernels;
        if (!t.node.is_object() || !t.node.contains("op_type") || !t.node["op_type"].is_string())
            fail("imported task " + std::to_string(i) + " is not a graph node");
        const std::string op = t.node["op_type"].get<std::string>();
        if (!ops::has_node_op(op)) fail("imported task " + std::to_string(i) + " has no node operator '" + op + "'");
        if (w.stream(t.stream) == nullptr) fail("imported task " + std::to_string(i) + " is on no declared stream");
    }
    if (kernels != im.report.tasks)
        fail("report counts " + std::to_string(im.report.tasks) + " tasks, workload has " + std::to_string(kernels));
    const auto any_op = [](const std::string&, const std::map<std::string, std::string>&) { return std::string(); };
    const workload::Workload again = workload::parse(workload::to_json(w), any_op, "round-trip");
    if (again.tasks.size() != w.tasks.size()) fail("imported workload changes in a to_json/parse round trip");
    for (size_t i = 0; i < w.tasks.size(); ++i) {
        if (again.tasks[i].node != w.tasks[i].node || again.tasks[i].measured_us != w.tasks[i].measured_us ||
            again.tasks[i].source != w.tasks[i].source)
            fail("imported task " + std::to_string(i) + " changes in a to_json/parse round trip");
    }
}

}  // namespace sfumato::fuzz

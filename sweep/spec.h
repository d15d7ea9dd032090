// A sweep specification (an INI file) and its points. The spec names the command every point
// runs (`kernel matmul --m 256 ...`), base config files, and the parameters to vary: [grid]
// keys form a cartesian product, [zip] keys are lists of equal length varied together. A key is
// a config key (passed to the point as --set key=value) or `arg.NAME` (the command's --NAME).
// Values are comma-separated lists (quote a value that contains a comma) or integer ranges
// `lo..hi+step` / `lo..hi*factor`. [slurm] holds the job resources of the Slurm backend.
// Whether a config key or argument exists is for the command to say (cli/cmd_sweep.cpp asks
// it before any point runs); this file checks only the spec's own shape. Plain C++.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sfumato::sweep {

struct Param {
    std::string key;  // config key, or "arg.NAME"
    std::vector<std::string> values;
    int line = 0;  // in the spec file, for messages
    bool is_arg() const { return key.rfind("arg.", 0) == 0; }
    // "--NAME" for arg.NAME (underscores become dashes, as the commands spell options).
    std::string option() const;
};

struct SlurmOptions {
    std::string partition, time, mem, account, qos;
    uint32_t cpus_per_task = 1;
    uint32_t max_parallel = 0;  // array throttle (%N); 0: no limit
    std::vector<std::string> extra;  // further sbatch options, one per entry ("--constraint=x")
    double poll_seconds = 2.0;
};

struct Spec {
    std::string path;                  // the spec file (for messages)
    std::vector<std::string> command;  // command words: kernel matmul --m 256 ...
    std::vector<std::string> configs;  // base config files, as resolved paths
    std::vector<Param> grid;
    std::vector<Param> zip;
    double timeout_seconds = 0;        // per point; 0: none
    SlurmOptions slurm;
    // Every varied key in point order of columns: grid keys, then zip keys.
    std::vector<const Param*> params() const;
    // The dimension each of params() belongs to (grid keys one each, all zip keys one).
    std::vector<int> dims() const;
    size_t num_points() const;
};

struct Point {
    size_t index = 0;
    std::vector<std::pair<std::string, std::string>> params;  // key, value (params() order)
    std::vector<std::string> args;  // the command's words with this point's values (no --out)
};

// Parses spec text. `path` names the file in messages; relative config paths are looked up
// beside the spec first, then in the working directory. Throws InputError ("SPEC:LINE: ...").
Spec parse_spec(const std::string& text, const std::string& path);
Spec load_spec(const std::string& path);

// Splits a command line into words (whitespace; '...' and "..." quote).
std::vector<std::string> split_command(const std::string& s, const std::string& where);
// Splits a value list at commas outside double quotes and expands ranges (an unquoted value
// that starts with an integer and holds ".."; anything else, e.g. a path "../x", is taken as it
// is); throws InputError ("empty range", "empty value") naming `where`. With ranges false
// (file names) no value is a range.
std::vector<std::string> parse_values(const std::string& s, const std::string& where, bool ranges = true);

// Grid dimensions outermost first (in file order), then the zip lists; row-major order.
std::vector<Point> expand(const Spec& spec);
Point make_point(const Spec& spec, size_t index);

// The point's directory name below DIR/points: p0000 (wider when there are more points).
std::string point_name(size_t index, size_t num_points);

}  // namespace sfumato::sweep

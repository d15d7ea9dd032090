#include "models/link/topology.h"

#include <algorithm>
#include <deque>
#include <set>
#include <sstream>

#include "sim/error.h"

namespace sfumato {

namespace {

// Chip pairs (a < b, server-local) linked inside a server.
std::vector<std::pair<uint32_t, uint32_t>> intra_pairs(const SystemParams& p) {
    const uint32_t n = p.chips_per_server;
    std::set<std::pair<uint32_t, uint32_t>> pairs;
    const std::string& topo = p.topology.get();
    if (topo == "full_mesh") {
        for (uint32_t a = 0; a < n; ++a)
            for (uint32_t b = a + 1; b < n; ++b) pairs.insert({a, b});
    } else if (topo == "groups") {
        if (n % p.group_size != 0)
            throw ConfigError(p.scope.key("group_size"), "value " + std::to_string(p.group_size.get()) +
                                                             " must divide system.chips_per_server (" + std::to_string(n) + ")");
        for (uint32_t a = 0; a < n; ++a)
            for (uint32_t b = a + 1; b < n; ++b)
                if (a / p.group_size == b / p.group_size) pairs.insert({a, b});
    } else if (topo == "ring") {
        for (uint32_t a = 0; n > 1 && a < n; ++a) pairs.insert({std::min(a, (a + 1) % n), std::max(a, (a + 1) % n)});
    } else {  // custom
        const std::string key = p.scope.key("links");
        std::stringstream ss(p.links.get());
        std::string item;
        while (std::getline(ss, item, ',')) {
            item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
            if (item.empty()) continue;
            const size_t dash = item.find('-');
            uint32_t a = 0, b = 0;
            try {
                if (dash == std::string::npos) throw std::invalid_argument("no dash");
                size_t used = 0;
                a = static_cast<uint32_t>(std::stoul(item.substr(0, dash), &used));
                if (used != dash) throw std::invalid_argument("a");
                b = static_cast<uint32_t>(std::stoul(item.substr(dash + 1), &used));
                if (used != item.size() - dash - 1) throw std::invalid_argument("b");
            } catch (const std::exception&) {
                throw ConfigError(key, "'" + item + "' is not a chip pair 'a-b'");
            }
            if (a >= n || b >= n)
                throw ConfigError(key, "pair '" + item + "' names a chip outside 0.." + std::to_string(n - 1) +
                                           " (system.chips_per_server = " + std::to_string(n) + ")");
            if (a == b) throw ConfigError(key, "pair '" + item + "' links a chip to itself");
            pairs.insert({std::min(a, b), std::max(a, b)});
        }
    }
    return {pairs.begin(), pairs.end()};
}

ChannelSpec make_channel(ChannelSpec::Kind kind, uint32_t src, uint32_t dst, std::string name, const LinkKindParams& k,
                         double latency_ns) {
    ChannelSpec c;
    c.kind = kind;
    c.src = src;
    c.dst = dst;
    c.name = std::move(name);
    c.gbps = k.gbps;
    c.latency_ps = static_cast<uint64_t>(latency_ns * 1000.0 + 0.5);
    c.packet_bytes = k.packet_bytes;
    c.header_bytes = k.header_bytes;
    return c;
}

}  // namespace

uint64_t Topology::route_latency_ps(uint32_t a, uint32_t b) const {
    uint64_t ps = 0;
    for (uint32_t c : route(a, b)) ps += channels[c].latency_ps;
    return ps;
}

Topology build_topology(const SystemParams& p) {
    Topology t;
    const uint32_t n = p.chips(), cps = p.chips_per_server, nics = p.nics_per_chip;
    t.chips = n;
    const bool custom = p.topology.get() == "custom";
    const std::string blame = custom ? p.scope.key("links") : p.scope.sub("nic").key("per_chip");
    std::vector<std::vector<uint32_t>> out(n);  // chip -> chip-link channels leaving it
    for (const auto& [a, b] : intra_pairs(p)) {
        for (uint32_t s = 0; s < p.servers; ++s) {
            const uint32_t ga = s * cps + a, gb = s * cps + b;
            for (auto [x, y] : {std::pair{ga, gb}, std::pair{gb, ga}}) {
                out[x].push_back(static_cast<uint32_t>(t.channels.size()));
                t.channels.push_back(make_channel(ChannelSpec::Kind::ChipLink, x, y,
                                                  "c" + std::to_string(x) + "->c" + std::to_string(y), p.link,
                                                  p.link.latency_ns));
            }
        }
    }
    // NIC k of chip c: uplink 2*(c*nics+k), downlink +1, after the chip links.
    const uint32_t nic_base = static_cast<uint32_t>(t.channels.size());
    for (uint32_t c = 0; c < n; ++c) {
        for (uint32_t k = 0; k < nics; ++k) {
            const std::string nn = "c" + std::to_string(c) + ".nic" + std::to_string(k);
            t.channels.push_back(make_channel(ChannelSpec::Kind::NicUp, c, n, nn + "->switch", p.nic, p.nic.latency_ns / 2));
            t.channels.push_back(make_channel(ChannelSpec::Kind::NicDown, n, c, "switch->" + nn, p.nic,
                                              p.nic.latency_ns / 2 + p.switch_latency_ns));
        }
    }
    if (n > 1) {
        for (uint32_t c = 0; c < n; ++c) {
            if (out[c].empty() && nics == 0)
                throw ConfigError(blame, "chip " + std::to_string(c) + " has no links (no chip-to-chip link" +
                                             (custom ? " names it" : " in its " + p.topology.get() + " topology") +
                                             ", and system.nic.per_chip = 0)");
        }
    }
    t.routes.assign(static_cast<size_t>(n) * n, {});
    for (uint32_t a = 0; a < n; ++a) {
        // Breadth-first over chip links inside a's server: fewest hops, first-built link first.
        std::vector<int64_t> via(n, -1);
        std::vector<bool> seen(n, false);
        std::deque<uint32_t> q{a};
        seen[a] = true;
        while (!q.empty()) {
            const uint32_t x = q.front();
            q.pop_front();
            for (uint32_t ch : out[x]) {
                const uint32_t y = t.channels[ch].dst;
                if (!seen[y]) {
                    seen[y] = true;
                    via[y] = ch;
                    q.push_back(y);
                }
            }
        }
        for (uint32_t b = 0; b < n; ++b) {
            if (a == b) continue;
            std::vector<uint32_t>& r = t.routes[static_cast<size_t>(a) * n + b];
            if (seen[b]) {
                for (uint32_t y = b; y != a; y = t.channels[static_cast<size_t>(via[y])].src) r.push_back(static_cast<uint32_t>(via[y]));
                std::reverse(r.begin(), r.end());
            } else if (nics > 0) {
                const uint32_t k = (a + b) % nics;
                r.push_back(nic_base + 2 * (a * nics + k));
                r.push_back(nic_base + 2 * (b * nics + k) + 1);
            } else {
                throw ConfigError(blame, "the topology does not connect chip " + std::to_string(a) + " to chip " +
                                             std::to_string(b) +
                                             (a / cps != b / cps ? " (different servers and no NICs)"
                                                                 : " (no path over chip-to-chip links and no NICs)"));
            }
        }
    }
    return t;
}

SystemInfo system_info(const SystemParams& p, const Topology& t) {
    SystemInfo s;
    s.name = p.name.get();
    s.topology = p.topology.get();
    s.chips = t.chips;
    s.servers = p.servers;
    s.chips_per_server = p.chips_per_server;
    s.group_size = p.topology.get() == "groups" ? p.group_size.get() : p.chips_per_server.get();
    for (const ChannelSpec& c : t.channels) {
        s.channels.push_back({c.name, c.payload_gbps(), static_cast<double>(c.latency_ps) / 1000.0});
    }
    s.routes.resize(t.routes.size());
    for (uint32_t a = 0; a < t.chips; ++a) {
        for (uint32_t b = 0; b < t.chips; ++b) {
            if (a == b) continue;
            SystemInfo::Route& r = s.routes[static_cast<size_t>(a) * t.chips + b];
            r.channels = t.route(a, b);
            r.gbps = 1e300;
            for (uint32_t c : r.channels) {
                r.gbps = std::min(r.gbps, t.channels[c].payload_gbps());
                r.latency_ns += static_cast<double>(t.channels[c].latency_ps) / 1000.0;
                if (t.channels[c].kind != ChannelSpec::Kind::ChipLink) r.intra_server = false;
            }
        }
    }
    return s;
}

}  // namespace sfumato

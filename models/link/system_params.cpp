#include "models/link/system_params.h"

namespace sfumato {

namespace {
constexpr Range<double> kGbps{0.001, 1e6};
constexpr Range<double> kLatency{0.0, 1e9};
}  // namespace

LinkKindParams::LinkKindParams(const ParamScope& s, double g, double lat, uint32_t packet, uint32_t header)
    : gbps(s, "gbps", g, "GB/s", "bandwidth per direction on the wire", kGbps),
      latency_ns(s, "latency_ns", lat, "ns", "one-way latency (serialisation excluded)", kLatency),
      packet_bytes(s, "packet_bytes", packet, "B", "largest payload of one packet", {32, 1u << 20}),
      header_bytes(s, "header_bytes", header, "B", "per-packet overhead on the wire (headers, framing, CRC)",
                   {0, 1u << 16}) {}

SystemParams::SystemParams(Config& c)
    : scope(c, "system"),
      name(scope, "name", "2x-tiny", "system name (for reports)", {}),
      chip(scope, "chip", "", "chip preset every chip is built from (INI path, relative to the system file)", {}),
      servers(scope, "servers", 1, "server", "servers (connected through their NICs and one switch)", {1, 64}),
      chips_per_server(scope, "chips_per_server", 2, "chip", "chips in each server", {1, 64}),
      topology(scope, "topology", "full_mesh",
               "chip-to-chip links inside a server: full_mesh, groups (fully connected groups of group_size; "
               "groups reach each other through the NICs), ring, custom (system.links)",
               {"full_mesh", "groups", "ring", "custom"}),
      group_size(scope, "group_size", 4, "chip", "chips per fully connected group (topology = groups)", {1, 64}),
      links(scope, "links", "", "custom topology: chip pairs 'a-b,c-d,...' (indices within a server)", {}),
      link(scope.sub("link"), 28.0, 500.0, 512, 32),
      nics_per_chip(scope.sub("nic"), "per_chip", 0, "NIC", "scale-out NICs per chip (0: none)", {0, 8}),
      nic(scope.sub("nic"), 25.0, 2000.0, 4096, 80),
      switch_latency_ns(scope.sub("switch"), "latency_ns", 600.0, "ns", "switch port-to-port latency", kLatency),
      dma_engines(scope.sub("peer_dma"), "engines", 16, "copy",
                  "peer copies a chip runs at once (more wait in order)", {1, 1024}),
      dma_window_bytes(scope.sub("peer_dma"), "window_bytes", 256 << 10, "B",
                       "bytes a peer copy keeps in flight (read, on the links, or being written)", {512, 1ull << 32}),
      power(scope) {}

}  // namespace sfumato

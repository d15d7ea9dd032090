// A fixed set of values kept as a ring sorted ascending, for the bulk memory service's "earliest
// free" resources (a client's request slots, a slice's MSHRs: memory_system_bulk.cpp). The one
// operation they need is "take the least, put a new value back": the ring's start moves on by
// one and the new value goes in from the back past the larger ones, so a new value that is the
// largest (a resource held until later than all the others, the usual case in a stream) moves
// nothing and touches one host cache line, where a binary heap sifted through five levels twice.
// Plain C++.
#pragma once
#include <cstdint>

namespace sfumato::mem {

// a[first], a[first + 1], ... (mod n) is sorted ascending by key(); replaces the least with v.
template <class T, class Key>
void ring_replace_least(T* a, uint32_t n, uint32_t& first, const T& v, Key key) {
    first = first + 1 == n ? 0 : first + 1;
    uint32_t j = first == 0 ? n - 1 : first - 1;  // the ring's last place (the old first's)
    const uint64_t kv = key(v);
    for (uint32_t i = n - 1; i > 0; --i) {
        const uint32_t p = j == 0 ? n - 1 : j - 1;
        if (key(a[p]) <= kv) break;
        a[j] = a[p];
        j = p;
    }
    a[j] = v;
}

}  // namespace sfumato::mem

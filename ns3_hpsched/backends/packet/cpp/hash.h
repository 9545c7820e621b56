// Per-flow ECMP hash: an exact port of ns3_hpsched/topology/ecmp.py (mix64, flow_hash).
// The Python module is the one definition; tests check both give the same paths.
#ifndef HPSCHED_HASH_H
#define HPSCHED_HASH_H

#include <cstdint>

namespace hpsched
{

/// SplitMix64 finaliser (ecmp.mix64).
inline uint64_t
Mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/// Hash of a flow's addresses and ports under a node's seed (ecmp.flow_hash). The
/// protocol is left out, so TCP and RDMA (UDP) flows with one five-tuple share a path.
inline uint64_t
FlowHash(uint32_t srcIp, uint32_t dstIp, uint16_t sport, uint16_t dport, uint64_t seed)
{
    uint64_t h = seed;
    h = Mix64(h ^ srcIp);
    h = Mix64(h ^ dstIp);
    h = Mix64(h ^ ((uint64_t(sport) << 16) | dport));
    return h;
}

} // namespace hpsched

#endif

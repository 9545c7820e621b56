// The RDMA transport header carried in every UDP datagram of a queue pair: the analogue
// of RoCEv2's Base Transport Header (opcode, destination QP, PSN) plus its ICRC, 16 bytes
// in all (IBTA InfiniBand Architecture Specification, Annex A17 "RoCEv2"). Sequence
// numbers count payload bytes, as in the HPCC simulator's RDMA model.
#ifndef HPSCHED_RDMA_HEADER_H
#define HPSCHED_RDMA_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace hpsched
{

class RdmaHeader : public ns3::Header
{
  public:
    /// Opcodes: data, cumulative ACK, NACK (go back to seq), DCQCN congestion notification.
    enum Opcode : uint8_t
    {
        DATA = 0,
        ACK = 1,
        NACK = 2,
        CNP = 3,
    };

    RdmaHeader() = default;

    RdmaHeader(Opcode op, uint32_t qp, uint64_t seq)
        : m_op(op),
          m_qp(qp),
          m_seq(seq)
    {
    }

    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid = ns3::TypeId("hpsched::RdmaHeader")
                                     .SetParent<ns3::Header>()
                                     .SetGroupName("Internet")
                                     .AddConstructor<RdmaHeader>();
        return tid;
    }

    ns3::TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    uint32_t GetSerializedSize() const override
    {
        return SIZE;
    }

    void Serialize(ns3::Buffer::Iterator it) const override
    {
        it.WriteU8(m_op);
        it.WriteU8(0);
        it.WriteU16(0);
        it.WriteHtonU32(m_qp);
        it.WriteHtonU64(m_seq);
    }

    uint32_t Deserialize(ns3::Buffer::Iterator it) override
    {
        m_op = Opcode(it.ReadU8());
        it.Next(3);
        m_qp = it.ReadNtohU32();
        m_seq = it.ReadNtohU64();
        return SIZE;
    }

    void Print(std::ostream& os) const override
    {
        os << "op=" << int(m_op) << " qp=" << m_qp << " seq=" << m_seq;
    }

    Opcode GetOpcode() const
    {
        return m_op;
    }

    uint32_t GetQp() const
    {
        return m_qp;
    }

    uint64_t GetSeq() const
    {
        return m_seq;
    }

    /// Bytes on the wire (BTH 12 + ICRC 4).
    static constexpr uint32_t SIZE = 16;

  private:
    Opcode m_op{DATA};
    uint32_t m_qp{0};
    uint64_t m_seq{0};
};

} // namespace hpsched

#endif

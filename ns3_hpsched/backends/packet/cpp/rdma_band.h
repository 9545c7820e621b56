// One strict-priority band of an RDMA port: a byte-limited FIFO that marks ECN for DCQCN
// and can be paused by PFC.
//
// Marking is RED-like on the instantaneous queue of the band, decided at dequeue as in the
// HPCC simulator's switch (SwitchNode::SwitchNotifyDequeue / SwitchMmu::ShouldSendCN):
// below Kmin never, above Kmax always, in between with probability
// Pmax * (q - Kmin) / (Kmax - Kmin). Only ECN-capable packets are marked (data; control
// packets are sent not-ECT). A paused band returns nothing from Dequeue/Peek, so the
// parent PrioQueueDisc serves the next band: PFC pauses a class without stopping the port.
#ifndef HPSCHED_RDMA_BAND_H
#define HPSCHED_RDMA_BAND_H

#include "hash.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/queue-disc.h"
#include "ns3/uinteger.h"

namespace hpsched
{

class RdmaBandQueueDisc : public ns3::QueueDisc
{
  public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid =
            ns3::TypeId("hpsched::RdmaBandQueueDisc")
                .SetParent<ns3::QueueDisc>()
                .SetGroupName("TrafficControl")
                .AddConstructor<RdmaBandQueueDisc>()
                .AddAttribute("MaxSize",
                              "Buffer of the band; arrivals beyond it are dropped (a PFC failure).",
                              ns3::QueueSizeValue(ns3::QueueSize("450000B")),
                              ns3::MakeQueueSizeAccessor(&ns3::QueueDisc::SetMaxSize, &ns3::QueueDisc::GetMaxSize),
                              ns3::MakeQueueSizeChecker())
                .AddAttribute("KminBytes",
                              "Queue below which nothing is marked.",
                              ns3::UintegerValue(40000),
                              ns3::MakeUintegerAccessor(&RdmaBandQueueDisc::m_kmin),
                              ns3::MakeUintegerChecker<uint32_t>())
                .AddAttribute("KmaxBytes",
                              "Queue above which every ECN-capable packet is marked.",
                              ns3::UintegerValue(160000),
                              ns3::MakeUintegerAccessor(&RdmaBandQueueDisc::m_kmax),
                              ns3::MakeUintegerChecker<uint32_t>())
                .AddAttribute("Pmax",
                              "Marking probability at Kmax.",
                              ns3::DoubleValue(0.2),
                              ns3::MakeDoubleAccessor(&RdmaBandQueueDisc::m_pmax),
                              ns3::MakeDoubleChecker<double>(0.0, 1.0))
                .AddAttribute("UseEcn",
                              "Mark ECN (DCQCN on) or never mark.",
                              ns3::BooleanValue(true),
                              ns3::MakeBooleanAccessor(&RdmaBandQueueDisc::m_useEcn),
                              ns3::MakeBooleanChecker());
        return tid;
    }

    RdmaBandQueueDisc()
        : ns3::QueueDisc(ns3::QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE)
    {
    }

    /// PFC: stop (true) or restart (false) serving this band.
    void SetPaused(bool paused)
    {
        m_paused = paused;
    }

    bool IsPaused() const
    {
        return m_paused;
    }

    /// Seed the marking coin (deterministic per run, port and band).
    void SetSeed(uint64_t seed)
    {
        m_rng = seed;
    }

  private:
    bool DoEnqueue(ns3::Ptr<ns3::QueueDiscItem> item) override
    {
        if (GetCurrentSize() + item > GetMaxSize())
        {
            DropBeforeEnqueue(item, "band buffer overflow");
            return false;
        }
        return GetInternalQueue(0)->Enqueue(item);
    }

    ns3::Ptr<ns3::QueueDiscItem> DoDequeue() override
    {
        if (m_paused)
        {
            return nullptr;
        }
        ns3::Ptr<ns3::QueueDiscItem> item = GetInternalQueue(0)->Dequeue();
        if (item && m_useEcn && ShouldMark(GetInternalQueue(0)->GetNBytes()))
        {
            Mark(item, "DCQCN ECN mark");
        }
        return item;
    }

    ns3::Ptr<const ns3::QueueDiscItem> DoPeek() override
    {
        return m_paused ? nullptr : GetInternalQueue(0)->Peek();
    }

    bool CheckConfig() override
    {
        if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0)
        {
            return false;
        }
        if (GetNInternalQueues() == 0)
        {
            AddInternalQueue(ns3::CreateObjectWithAttributes<ns3::DropTailQueue<ns3::QueueDiscItem>>(
                "MaxSize",
                ns3::QueueSizeValue(GetMaxSize())));
        }
        return GetNInternalQueues() == 1;
    }

    void InitializeParams() override
    {
    }

    bool ShouldMark(uint32_t queued)
    {
        if (queued <= m_kmin)
        {
            return false;
        }
        if (queued >= m_kmax)
        {
            return true;
        }
        double p = m_pmax * double(queued - m_kmin) / double(m_kmax - m_kmin);
        m_rng += 0x9E3779B97F4A7C15ULL;
        return double(Mix64(m_rng) >> 11) * 0x1.0p-53 < p;
    }

    uint32_t m_kmin{40000};
    uint32_t m_kmax{160000};
    double m_pmax{0.2};
    bool m_useEcn{true};
    bool m_paused{false};
    uint64_t m_rng{0};
};

} // namespace hpsched

#endif

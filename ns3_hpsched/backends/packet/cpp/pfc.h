// Priority flow control (IEEE 802.1Qbb) for the ports of a Fabric whose bands are
// RdmaBandQueueDiscs.
//
// Every switch counts, per ingress port and priority band, the bytes it has received
// through that port and not yet sent on (added when the frame has arrived, PhyRxEnd;
// removed when the root queue disc hands it to the egress device, or drops it). A
// PfcIngressTag on the packet remembers where it came in. When a count passes XOFF the
// switch sends PAUSE for that band to the upstream device (port p ^ 1 of the same link);
// when it falls to XON, RESUME. The upstream stops serving only that band of its egress
// (hosts obey too: their NIC is a port like any other).
//
// Model choices: PAUSE/RESUME are explicit on/off messages (the HPCC simulator's model)
// rather than quanta timers; a frame takes the link delay plus 64 bytes of serialisation
// to arrive, and does not take bandwidth from data (64 B next to 9 KB frames). What is
// already in the upstream's device queue or on the wire still arrives: XOFF must leave
// that headroom (the Python side chooses it).
#ifndef HPSCHED_PFC_H
#define HPSCHED_PFC_H

#include "fabric.h"
#include "rdma_band.h"

#include "ns3/point-to-point-channel.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/tag.h"

#include <functional>
#include <vector>

namespace hpsched
{

/// Ingress port and band of a packet inside a switch, and the bytes counted for it.
class PfcIngressTag : public ns3::Tag
{
  public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid =
            ns3::TypeId("hpsched::PfcIngressTag").SetParent<ns3::Tag>().AddConstructor<PfcIngressTag>();
        return tid;
    }

    ns3::TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    uint32_t GetSerializedSize() const override
    {
        return 12;
    }

    void Serialize(ns3::TagBuffer b) const override
    {
        b.WriteU32(port);
        b.WriteU32(band);
        b.WriteU32(bytes);
    }

    void Deserialize(ns3::TagBuffer b) override
    {
        port = b.ReadU32();
        band = b.ReadU32();
        bytes = b.ReadU32();
    }

    void Print(std::ostream& os) const override
    {
        os << "port=" << port << " band=" << band << " bytes=" << bytes;
    }

    uint32_t port{0};
    uint32_t band{0};
    uint32_t bytes{0};
};

class Pfc
{
  public:
    /// Install PFC on every port of ``fabric`` (bands must be RdmaBandQueueDiscs).
    Pfc(Fabric& fabric, uint32_t nBands, uint64_t xoffBytes, uint64_t xonBytes)
        : m_fabric(fabric),
          m_nBands(nBands),
          m_xoff(xoffBytes),
          m_xon(xonBytes)
    {
        uint32_t n = fabric.NPorts();
        m_ingress.assign(size_t(n) * nBands, 0);
        m_pauseSent.assign(size_t(n) * nBands, false);
        m_pauses.assign(size_t(n) * nBands, 0);
        m_pausedSince.assign(size_t(n) * nBands, 0.0);
        m_pausedS.assign(size_t(n) * nBands, 0.0);
        m_signalDelay.resize(n);
        for (uint32_t p = 0; p < n; ++p)
        {
            auto dev = ns3::DynamicCast<ns3::PointToPointNetDevice>(fabric.GetDevice(p));
            ns3::TimeValue delay;
            dev->GetChannel()->GetAttribute("Delay", delay);
            ns3::DataRateValue rate;
            dev->GetAttribute("DataRate", rate);
            m_signalDelay[p] = delay.Get() + rate.Get().CalculateBytesTxTime(PAUSE_FRAME_BYTES);
            if (dev->GetNode()->GetId() < fabric.GetNHosts())
            {
                continue; // hosts consume what they receive: no ingress accounting
            }
            dev->TraceConnectWithoutContext(
                "PhyRxEnd",
                ns3::Callback<void, ns3::Ptr<const ns3::Packet>>(
                    [this, p](ns3::Ptr<const ns3::Packet> pkt) { Arrived(p, pkt); }));
            auto root = fabric.GetQueueDisc(p);
            auto leave = ns3::Callback<void, ns3::Ptr<const ns3::QueueDiscItem>>(
                [this](ns3::Ptr<const ns3::QueueDiscItem> item) { Left(item); });
            root->TraceConnectWithoutContext("Dequeue", leave);
            root->TraceConnectWithoutContext("Drop", leave);
        }
    }

    /// Per port: PAUSE frames received (its egress stopped) and seconds paused, both
    /// summed over bands (a pause still in force counts up to now).
    void PortStats(uint64_t* pauses, double* pausedS) const
    {
        double now = ns3::Simulator::Now().GetSeconds();
        for (uint32_t p = 0; p < m_fabric.NPorts(); ++p)
        {
            pauses[p] = 0;
            pausedS[p] = 0;
            for (uint32_t b = 0; b < m_nBands; ++b)
            {
                size_t i = Index(p, b);
                pauses[p] += m_pauses[i];
                pausedS[p] += m_pausedS[i] + (IsPaused(p, b) ? now - m_pausedSince[i] : 0.0);
            }
        }
    }

    /// PAUSE frames received by ``port`` for ``band``.
    uint64_t Pauses(uint32_t port, uint32_t band) const
    {
        return m_pauses[Index(port, band)];
    }

    /// Call ``observer(egress port, band, pause)`` for every PAUSE/RESUME frame applied (monitors.h).
    void SetObserver(std::function<void(uint32_t, uint32_t, bool)> observer)
    {
        m_observer = std::move(observer);
    }

    /// Bytes of a PAUSE frame (IEEE 802.1Qbb: a minimum-size Ethernet frame).
    static constexpr uint32_t PAUSE_FRAME_BYTES = 64;

  private:
    size_t Index(uint32_t port, uint32_t band) const
    {
        return size_t(port) * m_nBands + band;
    }

    ns3::Ptr<RdmaBandQueueDisc> Band(uint32_t port, uint32_t band) const
    {
        return ns3::DynamicCast<RdmaBandQueueDisc>(
            m_fabric.GetQueueDisc(port)->GetQueueDiscClass(band)->GetQueueDisc());
    }

    bool IsPaused(uint32_t port, uint32_t band) const
    {
        return Band(port, band)->IsPaused();
    }

    /// A frame has fully arrived at switch port ``p`` (still with its PPP header).
    void Arrived(uint32_t p, ns3::Ptr<const ns3::Packet> pkt)
    {
        uint8_t head[4];
        if (pkt->CopyData(head, 4) < 4 || head[0] != 0x00 || head[1] != 0x21)
        {
            return; // not IPv4
        }
        uint32_t band = uint32_t(head[3] >> 2); // DSCP, classified as DscpPacketFilter does
        if (band >= m_nBands)
        {
            band = 0;
        }
        PfcIngressTag tag;
        tag.port = p;
        tag.band = band;
        tag.bytes = pkt->GetSize() - 2;
        pkt->AddPacketTag(tag);
        size_t i = Index(p, band);
        m_ingress[i] += tag.bytes;
        if (!m_pauseSent[i] && m_ingress[i] > m_xoff)
        {
            Signal(p, band, true);
        }
    }

    /// A packet left its switch (handed to the egress device, or dropped).
    void Left(ns3::Ptr<const ns3::QueueDiscItem> item)
    {
        PfcIngressTag tag;
        if (!item->GetPacket()->RemovePacketTag(tag))
        {
            return;
        }
        size_t i = Index(tag.port, tag.band);
        m_ingress[i] -= tag.bytes;
        if (m_pauseSent[i] && m_ingress[i] <= m_xon)
        {
            Signal(tag.port, tag.band, false);
        }
    }

    /// Send PAUSE (or RESUME) for ``band`` from ingress port ``p`` to the upstream device.
    void Signal(uint32_t p, uint32_t band, bool pause)
    {
        m_pauseSent[Index(p, band)] = pause;
        ns3::Simulator::Schedule(m_signalDelay[p], &Pfc::Apply, this, p ^ 1u, band, pause);
    }

    /// A PAUSE/RESUME frame reaches egress port ``up``.
    void Apply(uint32_t up, uint32_t band, bool pause)
    {
        size_t i = Index(up, band);
        auto q = Band(up, band);
        double now = ns3::Simulator::Now().GetSeconds();
        if (pause && !q->IsPaused())
        {
            ++m_pauses[i];
            m_pausedSince[i] = now;
        }
        else if (!pause && q->IsPaused())
        {
            m_pausedS[i] += now - m_pausedSince[i];
        }
        q->SetPaused(pause);
        if (m_observer)
        {
            m_observer(up, band, pause);
        }
        if (!pause)
        {
            m_fabric.GetQueueDisc(up)->Run(); // restart a port that had nothing else to send
        }
    }

    Fabric& m_fabric;
    uint32_t m_nBands;
    uint64_t m_xoff;
    uint64_t m_xon;
    std::vector<uint64_t> m_ingress;
    std::vector<bool> m_pauseSent;
    std::vector<uint64_t> m_pauses;
    std::vector<double> m_pausedSince;
    std::vector<double> m_pausedS;
    std::vector<ns3::Time> m_signalDelay;
    std::function<void(uint32_t, uint32_t, bool)> m_observer;
};

} // namespace hpsched

#endif

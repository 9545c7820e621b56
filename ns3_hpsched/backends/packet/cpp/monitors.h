// Monitors of a packet run, all sampled or counted in C++ (no Python per sample or packet):
//
// * PortMonitor, for chosen ports over a time window [start, stop):
//   - queues: every ``interval`` the bytes and packets held by each class band of the
//     port's strict-priority queue disc (rows kept while a band is non-empty, plus the
//     first empty sample after it, so a trace drops to zero where the queue drained);
//   - links: the bytes each class put on the wire in every interval. Each frame counts
//     from PhyTxBegin for its serialisation time, split pro rata over the intervals it
//     spans, so a port sending back to back reads exactly 100%.
//   Sampling stops once the session has nothing pending (a periodic event alone must not
//   keep a run alive, as in QueueMonitor).
// * PfcMonitor: every PAUSE/RESUME frame applied at any port, with its time and class.
//
// Nothing here exists unless a monitor is built: a run without monitors pays nothing.
#ifndef HPSCHED_MONITORS_H
#define HPSCHED_MONITORS_H

#include "fabric.h"
#include "pfc.h"
#include "rdma_flows.h"
#include "session.h"

#include "ns3/point-to-point-net-device.h"

#include <cmath>
#include <vector>

namespace hpsched
{

class PortMonitor
{
  public:
    PortMonitor(Fabric& fabric,
                Session& session,
                const std::vector<uint32_t>& ports,
                uint32_t nClasses,
                double intervalS,
                double startS,
                double stopS)
        : m_session(session),
          m_ports(ports),
          m_nClasses(nClasses),
          m_interval(intervalS),
          m_start(startS),
          m_stop(stopS)
    {
        size_t n = ports.size() * nClasses;
        m_wasQueued.assign(n, false);
        m_openBin.assign(n, -1);
        m_openBytes.assign(n, 0.0);
        for (size_t i = 0; i < ports.size(); ++i)
        {
            auto root = fabric.GetQueueDisc(ports[i]);
            for (uint32_t c = 0; c < nClasses; ++c)
            {
                m_bands.push_back(root->GetQueueDiscClass(c)->GetQueueDisc());
            }
            auto dev = ns3::DynamicCast<ns3::PointToPointNetDevice>(fabric.GetDevice(ports[i]));
            ns3::DataRateValue rate;
            dev->GetAttribute("DataRate", rate);
            m_rate.push_back(rate.Get());
            dev->TraceConnectWithoutContext(
                "PhyTxBegin",
                ns3::Callback<void, ns3::Ptr<const ns3::Packet>>(
                    [this, i](ns3::Ptr<const ns3::Packet> pkt) { Sent(uint32_t(i), pkt); }));
        }
        ns3::Simulator::Schedule(Session::DelayUntil(startS), &PortMonitor::Sample, this);
    }

    uint64_t NQueueRows() const
    {
        return m_qTime.size();
    }

    /// Copy the queue samples into arrays of NQueueRows().
    void ExportQueues(double* timeS, int64_t* port, int64_t* cls, int64_t* bytes, int64_t* packets) const
    {
        for (size_t r = 0; r < m_qTime.size(); ++r)
        {
            timeS[r] = m_qTime[r];
            port[r] = m_ports[m_qKey[r] / m_nClasses];
            cls[r] = m_qKey[r] % m_nClasses;
            bytes[r] = m_qBytes[r];
            packets[r] = m_qPackets[r];
        }
    }

    /// Close the intervals still open (call once the run is over); returns the link rows.
    uint64_t CloseLinks()
    {
        for (size_t k = 0; k < m_openBin.size(); ++k)
        {
            Flush(k);
        }
        return m_lBin.size();
    }

    /// Copy the link rows (interval number from the window start, port, class, bytes).
    void ExportLinks(int64_t* bin, int64_t* port, int64_t* cls, double* bytes) const
    {
        for (size_t r = 0; r < m_lBin.size(); ++r)
        {
            bin[r] = m_lBin[r];
            port[r] = m_ports[m_lKey[r] / m_nClasses];
            cls[r] = m_lKey[r] % m_nClasses;
            bytes[r] = m_lBytes[r];
        }
    }

  private:
    void Sample()
    {
        double now = ns3::Simulator::Now().GetSeconds();
        if (m_session.Pending() == 0 || now >= m_stop)
        {
            return;
        }
        for (size_t k = 0; k < m_bands.size(); ++k)
        {
            uint32_t bytes = m_bands[k]->GetNBytes();
            if (bytes > 0 || m_wasQueued[k])
            {
                m_qTime.push_back(now);
                m_qKey.push_back(uint32_t(k));
                m_qBytes.push_back(bytes);
                m_qPackets.push_back(m_bands[k]->GetNPackets());
            }
            m_wasQueued[k] = bytes > 0;
        }
        ns3::Simulator::Schedule(ns3::Seconds(m_interval), &PortMonitor::Sample, this);
    }

    /// A frame starts on the wire of monitored port ``i``: count it over its serialisation.
    void Sent(uint32_t i, ns3::Ptr<const ns3::Packet> pkt)
    {
        uint8_t head[4];
        uint32_t cls = 0;
        if (pkt->CopyData(head, 4) == 4 && head[0] == 0x00 && head[1] == 0x21)
        {
            cls = uint32_t(head[3] >> 2); // DSCP, as DscpPacketFilter classifies
        }
        if (cls >= m_nClasses)
        {
            return; // a band the monitor does not watch
        }
        double begin = ns3::Simulator::Now().GetSeconds();
        double end = begin + m_rate[i].CalculateBytesTxTime(pkt->GetSize()).GetSeconds();
        double bps = pkt->GetSize() / (end - begin); // bytes per second on the wire
        begin = std::max(begin, m_start);
        end = std::min(end, m_stop);
        size_t k = size_t(i) * m_nClasses + cls;
        while (begin < end)
        {
            int64_t bin = int64_t(std::floor((begin - m_start) / m_interval));
            if (m_start + double(bin + 1) * m_interval <= begin)
            {
                ++bin; // begin sits on a boundary that division rounded below
            }
            double binEnd = std::min(end, m_start + double(bin + 1) * m_interval);
            if (bin != m_openBin[k])
            {
                Flush(k);
                m_openBin[k] = bin;
            }
            m_openBytes[k] += bps * (binEnd - begin);
            begin = binEnd;
        }
    }

    /// Append the open interval of key ``k`` (if any) as a row.
    void Flush(size_t k)
    {
        if (m_openBin[k] >= 0 && m_openBytes[k] > 0)
        {
            m_lBin.push_back(m_openBin[k]);
            m_lKey.push_back(uint32_t(k));
            m_lBytes.push_back(m_openBytes[k]);
        }
        m_openBin[k] = -1;
        m_openBytes[k] = 0.0;
    }

    Session& m_session;
    std::vector<uint32_t> m_ports;
    uint32_t m_nClasses;
    double m_interval;
    double m_start;
    double m_stop;
    std::vector<ns3::Ptr<ns3::QueueDisc>> m_bands; // port index * nClasses + class
    std::vector<ns3::DataRate> m_rate;
    std::vector<bool> m_wasQueued;
    std::vector<double> m_qTime;
    std::vector<uint32_t> m_qKey;
    std::vector<uint32_t> m_qBytes;
    std::vector<uint32_t> m_qPackets;
    std::vector<int64_t> m_openBin;
    std::vector<double> m_openBytes;
    std::vector<int64_t> m_lBin;
    std::vector<uint32_t> m_lKey;
    std::vector<double> m_lBytes;
};

class PfcMonitor
{
  public:
    /// Record every PAUSE/RESUME frame applied during [startS, stopS) (RDMA with PFC only).
    PfcMonitor(RdmaFlows& flows, double startS, double stopS)
        : m_start(startS),
          m_stop(stopS)
    {
        Pfc* pfc = flows.GetPfc();
        if (pfc)
        {
            pfc->SetObserver([this](uint32_t port, uint32_t band, bool pause) { Applied(port, band, pause); });
        }
    }

    uint64_t NEvents() const
    {
        return m_time.size();
    }

    /// Copy the events (time, egress port, class, 1 = PAUSE / 0 = RESUME) into arrays of NEvents().
    void Export(double* timeS, int64_t* port, int64_t* cls, int64_t* paused) const
    {
        for (size_t r = 0; r < m_time.size(); ++r)
        {
            timeS[r] = m_time[r];
            port[r] = m_port[r];
            cls[r] = m_cls[r];
            paused[r] = m_paused[r];
        }
    }

  private:
    void Applied(uint32_t port, uint32_t band, bool pause)
    {
        double now = ns3::Simulator::Now().GetSeconds();
        if (now < m_start || now >= m_stop)
        {
            return;
        }
        m_time.push_back(now);
        m_port.push_back(port);
        m_cls.push_back(band);
        m_paused.push_back(pause ? 1 : 0);
    }

    double m_start;
    double m_stop;
    std::vector<double> m_time;
    std::vector<uint32_t> m_port;
    std::vector<uint32_t> m_cls;
    std::vector<uint8_t> m_paused;
};

} // namespace hpsched

#endif

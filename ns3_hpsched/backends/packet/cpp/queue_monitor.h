// Samples the queue-disc occupancy (packets) of chosen ports at a fixed interval while
// the session has pending work (a periodic event alone must not keep a run alive).
#ifndef HPSCHED_QUEUE_MONITOR_H
#define HPSCHED_QUEUE_MONITOR_H

#include "fabric.h"
#include "session.h"

#include <vector>

namespace hpsched
{

class QueueMonitor
{
  public:
    QueueMonitor(Fabric& fabric, Session& session, uint32_t port, double intervalS)
        : m_qdisc(fabric.GetQueueDisc(port)),
          m_session(session),
          m_interval(ns3::Seconds(intervalS))
    {
        ns3::Simulator::Schedule(m_interval, &QueueMonitor::Sample, this);
    }

    uint64_t NSamples() const
    {
        return m_packets.size();
    }

    /// Copy the samples (time in seconds, packets queued) into arrays of NSamples().
    void Export(double* timeS, int64_t* packets) const
    {
        for (size_t i = 0; i < m_packets.size(); ++i)
        {
            timeS[i] = m_time[i];
            packets[i] = m_packets[i];
        }
    }

  private:
    void Sample()
    {
        if (m_session.Pending() == 0)
        {
            return;
        }
        m_time.push_back(ns3::Simulator::Now().GetSeconds());
        m_packets.push_back(m_qdisc->GetNPackets());
        ns3::Simulator::Schedule(m_interval, &QueueMonitor::Sample, this);
    }

    ns3::Ptr<ns3::QueueDisc> m_qdisc;
    Session& m_session;
    ns3::Time m_interval;
    std::vector<double> m_time;
    std::vector<int64_t> m_packets;
};

} // namespace hpsched

#endif

// The transport-agnostic half of a simulation's Python <-> C++ bridge: the flow ledger
// (sizes, classes, delivered bytes, start/finish times), coflow byte counts with one-shot
// thresholds, Python calls at given times, and ONE long-lived dispatcher through which
// every event reaches Python (converting a new Python callable costs ~90 ms, so there is
// exactly one). The run stops as soon as no flow, call or threshold event is pending.
// Transports (tcp_flows.h, later RDMA) move bytes and report them here.
#ifndef HPSCHED_SESSION_H
#define HPSCHED_SESSION_H

#include "ns3/simulator.h"

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

namespace hpsched
{

/// Event kinds handed to the dispatcher: (kind, id, time_s).
enum EventKind : int32_t
{
    FLOW_DONE = 0, ///< id = flow id
    THRESHOLD = 1, ///< id = coflow id
    CALL = 2,      ///< id = key of a pending Python callable
};

using Dispatcher = std::function<void(int32_t, int64_t, double)>;

struct FlowRecord
{
    int64_t id;
    uint32_t src;
    uint32_t dst;
    uint64_t size;
    int64_t coflow;
    uint8_t cls;
    double startS{-1};
    double finishS{-1};
    uint64_t delivered{0};
};

class Session
{
  public:
    /// Set the Python dispatcher (an empty function runs without Python, e.g. benchmarks).
    void SetDispatcher(Dispatcher dispatcher)
    {
        m_dispatch = std::move(dispatcher);
    }

    /// Call the dispatcher with (CALL, key) at absolute time ``timeS`` (or now if past).
    void ScheduleCall(double timeS, int64_t key)
    {
        ++m_pending;
        ns3::Simulator::Schedule(DelayUntil(timeS), &Session::FireCall, this, key);
    }

    /// Register a flow; returns its index in the ledger.
    uint32_t AddFlow(int64_t id, uint32_t src, uint32_t dst, uint64_t size, uint8_t cls, int64_t coflow)
    {
        uint32_t idx = uint32_t(m_flows.size());
        m_flows.push_back(FlowRecord{id, src, dst, size, coflow, cls});
        m_index[id] = idx;
        ++m_pending;
        return idx;
    }

    bool HasFlow(int64_t id) const
    {
        return m_index.count(id) != 0;
    }

    FlowRecord& Flow(uint32_t idx)
    {
        return m_flows[idx];
    }

    /// Change a flow's class (later packets carry it). False if the flow is unknown.
    bool SetClass(int64_t id, uint8_t cls)
    {
        auto it = m_index.find(id);
        if (it == m_index.end())
        {
            return false;
        }
        m_flows[it->second].cls = cls;
        return true;
    }

    /// Change the classes of ``n`` flows (one call per decision). Returns the index of the
    /// first unknown id, or -1 when all were known (ids before it are changed).
    int64_t SetClasses(const int64_t* ids, const int64_t* classes, uint64_t n)
    {
        for (uint64_t i = 0; i < n; ++i)
        {
            if (!SetClass(ids[i], uint8_t(classes[i])))
            {
                return int64_t(i);
            }
        }
        return -1;
    }

    /// Index of the first of ``n`` ids already registered, or -1 if none is.
    int64_t FirstKnown(const int64_t* ids, uint64_t n) const
    {
        for (uint64_t i = 0; i < n; ++i)
        {
            if (HasFlow(ids[i]))
            {
                return int64_t(i);
            }
        }
        return -1;
    }

    /// A transport reports ``bytes`` more of flow ``idx`` delivered at the receiver.
    void Delivered(uint32_t idx, uint64_t bytes)
    {
        FlowRecord& f = m_flows[idx];
        if (f.finishS >= 0 || bytes == 0)
        {
            return;
        }
        f.delivered += bytes;
        if (f.coflow >= 0)
        {
            uint64_t total = (m_coflowBytes[f.coflow] += bytes);
            auto w = m_watch.find(f.coflow);
            if (w != m_watch.end() && total >= w->second)
            {
                m_watch.erase(w);
                ++m_pending;
                Fire(THRESHOLD, f.coflow);
            }
        }
        if (f.delivered >= f.size)
        {
            f.finishS = ns3::Simulator::Now().GetSeconds();
            Fire(FLOW_DONE, f.id);
        }
    }

    /// Fire THRESHOLD for ``coflow`` once its delivered bytes reach ``threshold``
    /// (as an event now if they already have). Replaces an earlier watch.
    void WatchCoflow(int64_t coflow, uint64_t threshold)
    {
        auto it = m_coflowBytes.find(coflow);
        uint64_t sent = it == m_coflowBytes.end() ? 0 : it->second;
        if (sent >= threshold)
        {
            m_watch.erase(coflow);
            ++m_pending;
            ns3::Simulator::ScheduleNow(&Session::Fire, this, THRESHOLD, coflow);
            return;
        }
        m_watch[coflow] = threshold;
    }

    /// Delivered bytes of the given flows (0 for unknown ids).
    void BytesSent(const int64_t* ids, uint64_t n, int64_t* out) const
    {
        for (uint64_t i = 0; i < n; ++i)
        {
            auto it = m_index.find(ids[i]);
            out[i] = it == m_index.end() ? 0 : int64_t(m_flows[it->second].delivered);
        }
    }

    uint64_t NFlows() const
    {
        return m_flows.size();
    }

    /// Copy the ledger into arrays of length NFlows() (for the flows table).
    void Export(int64_t* id, int64_t* src, int64_t* dst, int64_t* size, double* startS, double* finishS) const
    {
        for (size_t i = 0; i < m_flows.size(); ++i)
        {
            const FlowRecord& f = m_flows[i];
            id[i] = f.id;
            src[i] = f.src;
            dst[i] = f.dst;
            size[i] = int64_t(f.size);
            startS[i] = f.startS;
            finishS[i] = f.finishS;
        }
    }

    /// Flows, calls and threshold events not yet done; the run stops when it reaches 0.
    uint64_t Pending() const
    {
        return m_pending;
    }

    static ns3::Time DelayUntil(double timeS)
    {
        ns3::Time at = ns3::Seconds(timeS);
        ns3::Time now = ns3::Simulator::Now();
        return at > now ? at - now : ns3::Time(0);
    }

    /// Schedule ``open`` (a flow's first send) in node ``node``'s context at ``timeS``.
    ///
    /// A flow started *ahead* (``Backend.start_flows_at``) is reached the way the driver's
    /// closed loop reaches a flow it starts then: an arrival event at ``timeS``, scheduled
    /// now, schedules a decision for the same instant, which schedules the open. Events of
    /// one nanosecond run in the order they were scheduled, so either way the flow opens at
    /// the same place among that instant's events (packets, other flows), and a run's
    /// tables do not depend on which way its flows were started.
    template <class Open>
    static void ScheduleOpen(double timeS, bool ahead, uint32_t node, Open open)
    {
        if (!ahead)
        {
            ns3::Simulator::ScheduleWithContext(node, DelayUntil(timeS), open);
            return;
        }
        ns3::Simulator::Schedule(DelayUntil(timeS), [node, open] {
            ns3::Simulator::ScheduleNow(
                [node, open] { ns3::Simulator::ScheduleWithContext(node, ns3::Time(0), open); });
        });
    }

  private:
    void FireCall(int64_t key)
    {
        Fire(CALL, key);
    }

    void Fire(int32_t kind, int64_t id)
    {
        if (m_dispatch)
        {
            m_dispatch(kind, id, ns3::Simulator::Now().GetSeconds());
        }
        if (--m_pending == 0)
        {
            ns3::Simulator::Stop();
        }
    }

    Dispatcher m_dispatch;
    uint64_t m_pending{0};
    std::vector<FlowRecord> m_flows;
    std::unordered_map<int64_t, uint32_t> m_index;
    std::unordered_map<int64_t, uint64_t> m_coflowBytes;
    std::unordered_map<int64_t, uint64_t> m_watch;
};

/// Start ``n`` flows given as columns on a transport's ``StartFlow`` (TcpFlows, RdmaFlows),
/// flow ``i`` at ``timeS[i]`` (``ahead``: see Session::ScheduleOpen): one Python call per
/// batch of flows instead of one per flow.
template <class Flows>
void StartBatch(Flows& flows,
                const double* timeS,
                bool ahead,
                uint64_t n,
                const int64_t* id,
                const int64_t* src,
                const int64_t* dst,
                const int64_t* size,
                const int64_t* cls,
                const int64_t* coflow,
                const int64_t* sport,
                const int64_t* dport)
{
    for (uint64_t i = 0; i < n; ++i)
    {
        flows.StartFlow(timeS[i],
                        ahead,
                        id[i],
                        uint32_t(src[i]),
                        uint32_t(dst[i]),
                        uint64_t(size[i]),
                        uint8_t(cls[i]),
                        coflow[i],
                        uint16_t(sport[i]),
                        uint16_t(dport[i]));
    }
}

} // namespace hpsched

#endif

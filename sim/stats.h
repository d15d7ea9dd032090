// Statistics: typed members owned by components (counter, average, histogram, formula), each
// with a unit and description, registered once in a hierarchical group and incremented with a
// plain ++ on the hot path. Output goes through StatVisitor (HDF5 in traces/, text for people).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sfumato {

class StatGroup;
class Counter;
class Average;
class Histogram;
class Formula;

class StatVisitor {
public:
    virtual ~StatVisitor() = default;
    virtual void visit(const std::string& group_path, const Counter& s) = 0;
    virtual void visit(const std::string& group_path, const Average& s) = 0;
    virtual void visit(const std::string& group_path, const Histogram& s) = 0;
    virtual void visit(const std::string& group_path, const Formula& s) = 0;
};

class StatBase {
public:
    StatBase(StatGroup& group, std::string name, std::string unit, std::string desc);
    virtual ~StatBase() = default;
    StatBase(const StatBase&) = delete;
    StatBase& operator=(const StatBase&) = delete;
    const std::string& name() const { return m_name; }
    const std::string& unit() const { return m_unit; }
    const std::string& desc() const { return m_desc; }
    virtual void accept(const std::string& path, StatVisitor& v) const = 0;

private:
    std::string m_name, m_unit, m_desc;
};

class Counter : public StatBase {
public:
    using StatBase::StatBase;
    Counter& operator++() { ++m_v; return *this; }
    Counter& operator+=(uint64_t x) { m_v += x; return *this; }
    uint64_t value() const { return m_v; }
    void accept(const std::string& path, StatVisitor& v) const override { v.visit(path, *this); }

private:
    uint64_t m_v = 0;
};

class Average : public StatBase {
public:
    using StatBase::StatBase;
    void sample(double x) { m_sum += x; ++m_n; if (m_n == 1 || x > m_max) m_max = x; }
    double mean() const;
    double max() const { return m_max_of ? m_max_of() : m_max; }
    uint64_t samples() const;
    void accept(const std::string& path, StatVisitor& v) const override { v.visit(path, *this); }
    // The same values as `h` samples (not sampled here, so a hot path adds each value once):
    // the count and the mean are h's, which are what sample() of each of its values would
    // give (the same sum in the same order); max_of() gives the largest value (its owner keeps
    // it). `h` outlives this.
    void mirror(const Histogram& h, std::function<double()> max_of) {
        m_hist = &h;
        m_max_of = std::move(max_of);
    }

private:
    double m_sum = 0, m_max = 0;
    uint64_t m_n = 0;
    const Histogram* m_hist = nullptr;
    std::function<double()> m_max_of;
};

// Fixed-width buckets over [lo, lo + width * buckets); out-of-range samples clamp to the ends.
class Histogram : public StatBase {
public:
    Histogram(StatGroup& g, std::string name, std::string unit, std::string desc, double lo,
              double width, size_t buckets);
    void sample(double x);
    // Records x in bucket i, which the caller computed as sample(x) would (a hot path's integer
    // division instead of a floating one; the caller shows they agree).
    void sample_in(size_t i, double x) {
        ++m_buckets[i];
        ++m_n;
        m_sum += x;
    }
    size_t size() const { return m_buckets.size(); }
    const std::vector<uint64_t>& buckets() const { return m_buckets; }
    double lo() const { return m_lo; }
    double width() const { return m_width; }
    uint64_t samples() const { return m_n; }
    double mean() const { return m_n ? m_sum / static_cast<double>(m_n) : 0.0; }
    // Value below which fraction q of samples lie (bucket resolution).
    double quantile(double q) const;
    void accept(const std::string& path, StatVisitor& v) const override { v.visit(path, *this); }

private:
    double m_lo, m_width, m_sum = 0;
    uint64_t m_n = 0;
    std::vector<uint64_t> m_buckets;
};

inline double Average::mean() const {
    if (m_hist) return m_hist->mean();
    return m_n ? m_sum / static_cast<double>(m_n) : 0.0;
}
inline uint64_t Average::samples() const { return m_hist ? m_hist->samples() : m_n; }

class Formula : public StatBase {
public:
    Formula(StatGroup& g, std::string name, std::string unit, std::string desc, std::function<double()> f);
    double value() const { return m_f(); }
    void accept(const std::string& path, StatVisitor& v) const override { v.visit(path, *this); }

private:
    std::function<double()> m_f;
};

// A node of the stats tree; components own one and parent it to their container's.
class StatGroup {
public:
    StatGroup(StatGroup* parent, std::string name);
    ~StatGroup();
    StatGroup(const StatGroup&) = delete;
    StatGroup& operator=(const StatGroup&) = delete;
    const std::string& path() const { return m_path; }
    void add(StatBase* s) { m_stats.push_back(s); }
    void accept(StatVisitor& v) const;
    const std::vector<StatBase*>& stats() const { return m_stats; }
    const std::vector<StatGroup*>& children() const { return m_children; }
    const StatBase* find(const std::string& name) const;
    const StatGroup* child(const std::string& name) const;

private:
    StatGroup* m_parent;
    std::string m_name, m_path;
    std::vector<StatBase*> m_stats;
    std::vector<StatGroup*> m_children;
};

}  // namespace sfumato

#include "sim/stats.h"

#include <algorithm>

namespace sfumato {

StatBase::StatBase(StatGroup& group, std::string name, std::string unit, std::string desc)
    : m_name(std::move(name)), m_unit(std::move(unit)), m_desc(std::move(desc)) {
    group.add(this);
}

Histogram::Histogram(StatGroup& g, std::string name, std::string unit, std::string desc, double lo,
                     double width, size_t buckets)
    : StatBase(g, std::move(name), std::move(unit), std::move(desc)), m_lo(lo), m_width(width),
      m_buckets(buckets, 0) {}

void Histogram::sample(double x) {
    double idx = (x - m_lo) / m_width;
    size_t i = idx < 0 ? 0 : std::min(static_cast<size_t>(idx), m_buckets.size() - 1);
    ++m_buckets[i];
    ++m_n;
    m_sum += x;
}

double Histogram::quantile(double q) const {
    if (m_n == 0) return 0.0;
    uint64_t target = static_cast<uint64_t>(q * static_cast<double>(m_n));
    uint64_t acc = 0;
    for (size_t i = 0; i < m_buckets.size(); ++i) {
        acc += m_buckets[i];
        if (acc > target) return m_lo + m_width * static_cast<double>(i + 1);
    }
    return m_lo + m_width * static_cast<double>(m_buckets.size());
}

Formula::Formula(StatGroup& g, std::string name, std::string unit, std::string desc, std::function<double()> f)
    : StatBase(g, std::move(name), std::move(unit), std::move(desc)), m_f(std::move(f)) {}

StatGroup::StatGroup(StatGroup* parent, std::string name) : m_parent(parent), m_name(std::move(name)) {
    m_path = parent && !parent->path().empty() ? parent->path() + "/" + m_name : m_name;
    if (parent) parent->m_children.push_back(this);
}

StatGroup::~StatGroup() {
    // Groups may die in any order (a component's group is often a member declared after the
    // sub-components that hang their groups below it): orphan the children first.
    for (StatGroup* c : m_children) c->m_parent = nullptr;
    if (m_parent) {
        auto& c = m_parent->m_children;
        c.erase(std::remove(c.begin(), c.end(), this), c.end());
    }
}

void StatGroup::accept(StatVisitor& v) const {
    for (const auto* s : m_stats) s->accept(m_path, v);
    for (const auto* c : m_children) c->accept(v);
}

const StatBase* StatGroup::find(const std::string& name) const {
    for (const auto* s : m_stats)
        if (s->name() == name) return s;
    return nullptr;
}

const StatGroup* StatGroup::child(const std::string& name) const {
    for (const auto* c : m_children)
        if (c->m_name == name) return c;
    return nullptr;
}

}  // namespace sfumato
